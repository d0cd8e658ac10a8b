"""How a dot operand's load reaches the MMA: per-thread copy widths the pipeliner accepts, register-loaded B
tiles, element-by-element loads and FMA dots (placement.py's per-load decisions, with their measurements)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kernlint.analysis.async_copy import async_copy_bytes
from kernlint.analysis.axis_info import Contiguity
from kernlint.hardware.specs import GpuSpec
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes
from kernlint.ir.symbolic import as_int


def numel(value: Value, env: Mapping[str, Any]) -> int | None:
    size = 1
    for d in value.shape:
        n = as_int(d.evaluate(env))
        if n is None:
            return None
        size *= n
    return size


def narrow_async_copy(load: Value, env: Mapping[str, Any], num_warps: int) -> bool:
    """Whether Triton leaves a loop load in registers because its per-thread vector is under 4 bytes.

    The pipeliner only turns a load into cp.async when its per-thread contiguous width is ≥ 32 bits (cp.async
    copies 4, 8 or 16 B; triton lib/Dialect/TritonGPU/Transforms/Pipeliner/AssignLatencies.cpp, isSmallLoad).
    A load with at least as many elements as threads is a layout anchor (lib/Dialect/TritonGPU/Transforms/
    Utility.cpp, isExpensiveLoadOrStore) and keeps its coalesced layout: min(16 B, numel / threads) per thread
    (Coalesce.cpp). A smaller load takes the layout of the tile it is combined with (vectorised, ≥ 4 B).
    Measured (Triton 3.9, w4a16 matmul, all targets): the fp16 scales row [1, BLOCK_N] with BLOCK_N = 32 ·
    num_warps (1 half per thread) stays a tt.load; with BLOCK_N < 32 · num_warps or > it is pipelined.
    """
    size = numel(load, env)
    threads = 32 * num_warps
    if size is None or size < threads:
        return False
    elem = element_bytes(load.dtype)
    per_thread = min(max(1, int(16 // elem)), max(1, size // threads))
    return per_thread * elem < 4


def register_loaded_b(operand: Value, load: Op, producers: Mapping[int, Op], spec: GpuSpec) -> bool:
    """A B operand reshaped from a higher-rank load, on a target without TMA: not an async copy.

    Measured (Triton 3.9, sm_80, bmm_descriptor_kernel: [1, BK, BN] descriptor blocks reshaped to [BK, BN]):
    the reshape gives the B tile a slice layout, not a dot-operand one, so the pipeliner keeps it a register
    tt.load (num_stages − 1 loads in flight) and stages it once through shared memory (ttg.local_alloc) for
    the MMA; the A operand, reshaped the same way, is still a cp.async copy (num_stages − 1 buffers).
    64×128×32 w4 s5 → 4 × 4,096 (A) + 8,192 (B) = 24,576 B. With 2-D blocks both are pipelined (49,152 B).
    Descriptors are rewritten to pointer loads on sm_80 (no TMA) before the pipeliner runs.
    """
    if not spec.mma.reshaped_operand_in_registers or load.result is None:
        return False
    producer = producers.get(operand.id)
    return (producer is not None and producer.kind == OpKind.RESHAPE
            and len(load.result.shape) > len(operand.shape))


def scalar_loaded(load: Op, producers: Mapping[int, Op], env: Mapping[str, Any],
                   carried: Mapping[int, Value] | None = None, loops: Sequence[Op] = ()) -> bool:
    """An operand tile whose pointers are not contiguous (e.g. offsets clamped with `tl.where` and no
    `tl.max_contiguous` hint), not aligned (offset by a loaded integer) or masked against a loaded bound is
    loaded element by element: under 4 B per thread, which cp.async cannot copy (triton AssignLatencies.cpp,
    isSmallLoad; axis_divisibility.py), so the pipeliner keeps it a register load and the MMA reads it from
    one shared buffer. Measured (Triton 3.9, examples/persistent_matmul.py, whose B offsets are clamped):
    64×64×64 s3 → A 2 × 8,192 + B 8,192 on sm_80, A 3 × 8,192 + B 8,192 on sm_90."""
    width = async_copy_bytes(load, producers, env, carried, loops)
    return width is not None and width < 4


def fma_dot(op: Op, env: Mapping[str, Any]) -> bool:
    """An fp32 × fp32 dot with input_precision="ieee" (or allow_tf32=False) has no tensor-core instruction:
    Triton lowers it to FMA on every target (no wgmma / tcgen05, no tensor memory), and the operand loads
    are pipelined like cp.async (num_stages − 1 buffers, read back from shared memory per k-step).
    Measured (Triton 3.9, sgemm ieee, sm_90 and sm_100): 64×64×16 w4 s5 → 4 × 8,192 = 32,768 B; 128×128×32
    w4 s2 → 32,768 B; no mbarriers. tf32 dots of the same kernel use wgmma / tcgen05 (num_stages buffers).
    """
    if op.kind != OpKind.DOT:
        return False
    attrs = op.dot_attrs()
    if attrs.a_dtype != "fp32" or attrs.b_dtype != "fp32":
        return False
    precision = attrs.input_precision
    value = precision.evaluate(env) if precision is not None else None
    if isinstance(value, str):
        return value == "ieee"
    allow_tf32 = attrs.allow_tf32
    value = allow_tf32.evaluate(env) if allow_tf32 is not None else None
    return value is False


def mn_major_8bit_b(operand: Value, load: Op, producers: Mapping[int, Op], env: Mapping[str, Any],
                    carried: Mapping[int, Value] | None, spec: GpuSpec) -> bool:
    """An 8-bit (int8 / fp8) B tile loaded N-contiguous, on wgmma: not an async copy, not pipelined.

    wgmma reads 8-bit operands from shared memory K-major only, so Triton writes such a B tile transposed
    (`nvmma_shared<transposed = true>`) with a plain `tt.load` in the loop and one `ttg.local_alloc`; the A
    tile, K-contiguous, is still a cp.async copy in num_stages buffers. Measured (Triton 3.9, ptxas 13.4,
    sm_90, tests/shared_sources.py INT8_GEMM 128×128×128 w8 s4, B [BK, BN] with unit stride along
    N): 4 × 16,384 (A) + 16,384 (B) = 81,920 B where a pipelined B would make 131,072 B. tcgen05 reads
    either major order (the same kernel on sm_100: 131,088 B, both operands pipelined)."""
    res = load.result
    if not spec.mma.int8_operand_k_major_only or res is None or res.id != operand.id or len(res.shape) != 2 \
            or element_bytes(res.dtype) != 1 or not load.operands:
        return False
    pointer = load.operands[0]
    if carried is not None:
        pointer = carried.get(pointer.id, pointer)
    if not pointer.dtype.startswith("ptr<"):
        return False
    info = Contiguity(producers, env, optimistic=True, carried=carried).info(pointer)
    return info is not None and info[0][1] > info[0][0]
