"""Loop facts the shared-memory model needs: trip counts, flattening, and how tcgen05 keeps operands that are
staged from register loads.

On sm_100 a dot loop whose MMA reads an operand the pipeliner could not copy asynchronously (a register load
staged through `ttg.local_alloc`: pointers that are not contiguous or not aligned, operand_loads.scalar_loaded)
still runs its tcgen05 MMA asynchronously, waited one iteration later: the staged copy is a loop-carried
memdesc that the next iteration's wait reads, so two copies are alive, the async-copied operands keep
num_stages buffers and the loop has a 2-entry mbarrier (16 B). Measured (Triton 3.9, sm_100, TTGIR:
`local_alloc` of the loaded tile in the loop, yielded, `wait_barrier ... deps` on it; 64×64×64 fp16, 4 warps;
tests/analysis/test_smem_unaligned_operands.py):
* A offset by a loaded integer, B aligned: s2 2 × 8,192 + 2 × 8,192 + 16 = 32,784 B; s3 40,976; s4 49,168;
  128×64×32 s4 4 × 4,096 (B) + 2 × 8,192 (A) + 16 = 32,784; 128×128×64 w8 s3 3 × 16,384 + 2 × 16,384 + 16;
* B clamped with `tl.where` in a plain loop: s3 3 × 8,192 + 2 × 8,192 + 16 = 40,976;
* both operands offset by a loaded integer: 2 × (8,192 + 8,192) + 16 = 32,784 at s2 and s4 alike;
  liger-kernel _moe_bwd_dW2_kernel 128×128×128 w8: 4 × 32,768 + 16 = 131,088.
Inside `tl.range(..., flatten=True)` (the persistent matmul) the MMA is not pipelined that way: the async
operands keep num_stages − 1 buffers, the staged one copy and the loop one 8-B barrier (24,584 B at 64×64×64
s3, flatten=False on the same kernel: 40,976). A computed operand (loaded, then scaled) is different again:
one mutable buffer written by `local_store` (3 × 8,192 raw loads + 8,192 + 4 × A + 16, w4a16 alike).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernlint.analysis.placement import DotPlacement, numel
from kernlint.hardware.specs import GpuSpec
from kernlint.ir.nodes import Op, element_bytes


def flattened(loop: Op, env: Mapping[str, Any]) -> bool:
    flag = loop.for_attrs().flatten
    value = flag.evaluate(env) if hasattr(flag, "evaluate") else flag
    return value is True or (isinstance(value, int) and not isinstance(value, bool) and value != 0)


def mma_waits_on_staged_copy(d: DotPlacement, loop_ops: Mapping[int, Op], parents: Mapping[int, int | None],
                             env: Mapping[str, Any], spec: GpuSpec, stages: int) -> bool:
    """A tcgen05 dot of a pipelined, non-flattened loop reading an operand staged from a register load: two
    copies of that operand, num_stages buffers of the async ones, a 16-B barrier (see the module note)."""
    if not spec.mma.stages_every_operand_load or not d.async_mma or not d.register_pipelined or d.in_loop is None:
        return False
    if stages < 2:
        return False
    loop: int | None = d.in_loop
    while loop is not None:
        if flattened(loop_ops[loop], env):
            return False
        loop = parents.get(loop)
    return True


def register_staged_bytes(d: DotPlacement, env: Mapping[str, Any]) -> int:
    """Bytes of one copy of the operands staged from register loads."""
    total = 0
    for value in d.register_pipelined:
        size = numel(value, env)
        total += int(size * element_bytes(value.dtype)) if size else 0
    return total
