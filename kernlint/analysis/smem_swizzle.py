"""Alignment padding of a staged tcgen05 operand in a 128-B-swizzled layout that two loops read (smem.py)."""
from __future__ import annotations

from kernlint.analysis.placement import DotPlacement
from kernlint.analysis.smem_types import SmemBuffer
from kernlint.hardware.specs import GpuSpec
from kernlint.ir.nodes import element_bytes

# A staged operand with 128-byte rows is stored in a 128-B-swizzled NVMMA layout, whose tcgen05 descriptor needs
# the base aligned to the swizzle atom: 8 rows × 128 B.
SWIZZLE_ROW_BYTES = 128
SWIZZLE_ATOM_BYTES = 1024


def staged_across_loops(dots: list[DotPlacement], spec: GpuSpec) -> set[int]:
    """Lines of tcgen05 dots whose staged operand (128-B rows: a 128-B-swizzled layout) is read by dots of two or
    more loops (causal attention's Q, used by the off-diagonal and the diagonal loop)."""
    if not spec.mma.swizzle_aligns_staged:
        return set()
    loops_of: dict[int, set[int | None]] = {}
    for d in dots:
        if d.staged_bytes and d.async_mma and d.k and d.k * element_bytes(d.op.operands[0].dtype) >= SWIZZLE_ROW_BYTES:
            for v in d.op.operands[:2]:
                loops_of.setdefault(v.id, set()).add(d.in_loop)
    shared = {vid for vid, loops in loops_of.items() if len(loops) > 1}
    return {d.op.line for d in dots if d.staged_bytes and any(v.id in shared for v in d.op.operands[:2])}


def pad_staged_operand(group: list[SmemBuffer], swizzled: set[int]) -> list[SmemBuffer]:
    """Alignment padding before a staged (loop-invariant) tcgen05 operand that two loops read, when it is not
    the largest buffer.

    Triton's allocator (lib/Analysis/Allocation.cpp, computeOffsets / calculateStarts) places buffers largest
    first at the lowest free offset whose live range they fit, aligned per buffer. An operand read by two
    loops is live across both, while each loop has its own operand buffers and MMA barriers at the same
    offsets, so it only fits above all of them, bumped to the next 1,024-B boundary. Measured (Triton 3.9,
    sm_100, `allocation.offset` in the MLIR dump after AllocateSharedMemory): the causal
    tests/truth/suite_kernels/attention.py attn_fwd_causal_kernel (two loops) 64×64 · 4 warps · 3 stages: K
    buffers at 0, V at 24,576, the two 16-B barriers at 49,152 and 49,168, Q at 50,176 -> 58,368 B, where the
    sum is 57,376; with Q the largest buffer (128×32 tiles) it goes first at 0 and nothing is padded (40,992 B).
    examples/attention_fwd.py (one loop) places Q right after K and V, below the barriers: 114,720 B = the sum."""
    staged = [b for b in group if b.label == "loop-invariant dot operand" and b.line in swizzled]
    pipelined = [b for b in group if b.label == "dot operands"]
    barriers = [b for b in group if b.label == "mbarriers"]
    if len(staged) != 1 or not pipelined or not barriers or max(b.bytes for b in pipelined) <= staged[0].bytes:
        return group
    below = sum(b.bytes for b in pipelined + barriers)
    padding = -below % SWIZZLE_ATOM_BYTES
    if not padding:
        return group
    # a conversion scratch of the loop that fits in the gap is placed there (liveness-based first fit)
    group = [b for b in group if not (b.label == "layout conversion" and b.bytes <= padding)]
    return group + [SmemBuffer("alignment padding", padding,
                               f"staged operand aligned to {SWIZZLE_ATOM_BYTES:,} B above the barriers", staged[0].line)]
