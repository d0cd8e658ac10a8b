"""Registers of address arithmetic by access width: loads whose pointers are not contiguous (one address
and one register per element), and int64 offset tiles of vectorised accesses (one offset per vector)."""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kernlint.analysis.axis_info import load_vector_bytes
from kernlint.analysis.liveness import Liveness, Step, producers as producers_of
from kernlint.analysis.placement import numel
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes, is_pointer, pointee
from kernlint.ir.walk import bounded_walk, walk_upstream


def element_wise_load_costs(live: Liveness, env: Mapping[str, Any], threads: int) -> dict[int, float]:
    """Unscaled register costs of the pointer tile and the result of each load that moves one element per
    instruction (AxisInfo contiguity 1 along every dim, e.g. offsets clamped with `tl.where` and no
    `tl.max_contiguous` hint). Such a load cannot share one base address per 16-byte vector: every element
    gets its own 64-bit address (2 registers) and lands in its own 32-bit register, even when it is 8 or 16
    bits wide (ld.global.b16 writes a full register). Measured (Triton 3.9, sm_90, examples/persistent_matmul.py,
    B offsets clamped, bf16): 16/32/64 B elements per thread -> 108-126 / 158-175 / 241-245 registers, about 3
    per B element, almost independent of the accumulator size; the contiguous-load model gave 59-198."""
    producers = producers_of(live)
    out: dict[int, float] = {}
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind != OpKind.LOAD or op.result is None or not op.operands:
            continue
        pointer = op.operands[0]
        if not pointer.shape or not pointer.dtype.startswith("ptr<"):
            continue
        width = load_vector_bytes(op, producers, env)
        nbytes = element_bytes(pointee(pointer.dtype))
        size = numel(pointer, env)
        if width is None or size is None or width > nbytes:
            continue
        per_thread = max(1, math.ceil(size / threads))
        # a pointer built in this trip from an index tile loaded in this trip: each address is formed at its load
        out[pointer.id] = 0.0 if _gathered_in_place(live, pointer, step, producers) else 2.0 * per_thread
        out[op.result.id] = per_thread * max(1.0, element_bytes(op.result.dtype) / 4)
    return out


_ADDRESS_OPS = (OpKind.ELEMENTWISE, OpKind.CAST, OpKind.VIEW, OpKind.RESHAPE)


def _gathered_in_place(live: Liveness, pointer: Value, load: Step, producers: Mapping[int, Op]) -> bool:
    """Is the pointer tile of an element-by-element load computed in the load's own loop body (not carried, not
    read across a loop's end) from an index tile loaded in that body (`X + idx[:, None] * s + cols * t` with
    `idx = tl.load(IDX + k + offs)`)? Such addresses cannot be hoisted out of the loop, and ptxas forms each one
    right before its load instead of holding 64 bits per element. Measured (Triton 3.9, sm_80/90/100,
    tests/truth/gathered_loads.py gathered_rows_kernel, fp16 at a column stride of 64, 4 warps): 32 / 56 / 96
    registers at 16 / 32 / 64 elements per thread, the accumulator and the loaded values; holding every address
    asked 63 / 110 / 204. liger-kernel's _moe_bwd_dW2_kernel gathers dout rows through x_gather_idx the same way
    (sm_100 64³ w4: 54 registers, estimated 108). Pointers recomputed each trip from loop-invariant tiles are
    left alone: persistent_matmul's clamped B offsets hold about 3 registers per element (register_offsets.py)."""
    start, end = live.intervals[pointer.id]
    defined = live.steps[start]
    if defined.op.kind == OpKind.FOR or defined.loops != load.loops or not load.loops:
        return False
    if end < len(live.steps) and live.steps[end].is_end and live.steps[end].op.kind == OpKind.FOR:
        return False  # read again after this trip
    found = False

    def visit(op: Op, v: Value) -> tuple[Value, ...]:
        nonlocal found
        if op.kind == OpKind.LOAD:
            found = found or bool(v.shape and v.id in live.intervals
                                  and live.steps[live.intervals[v.id][0]].loops == load.loops)
            return ()
        return op.operands if op.kind in _ADDRESS_OPS else ()

    walk_upstream(pointer, producers, visit)
    return found


def vectorised_offset_costs(live: Liveness, env: Mapping[str, Any], threads: int, costs: Mapping[int, float],
                            index_vector: int) -> dict[int, float]:
    """Lowered costs of the int64 offset tiles of 2-D accesses wider than `index_vector` elements.

    The register model charges an integer tile one register (two for int64) per `index_vector` (4) elements,
    a fit over every kind of index tile. An int64 offset tile (`rows[:, None].to(tl.int64) * N + cols`, the
    usual guard against 2**31 overflow) added to a pointer whose accesses move V > 4 elements per
    instruction holds one 64-bit offset per vector: the vector's other elements are immediate offsets of the
    same instruction. Measured (Triton 3.9, tests/truth/vector_offsets.py, fp16 vectors of 8): 32 / 59 / 111
    / 56 registers at 32 / 64 / 128 / 64 elements per thread (BLOCK 64 · 4 warps, 128 · 8, 128 · 4, 64 · 2)
    on sm_80/90/100, as for unsloth's weight_dequant_kernel; charged 2 registers per 4 offsets, kernlint said
    45 / 76 / 144 / 76. Only int64: for int32 offsets the same rule lowered the suite's rope kernels, already
    under-estimated by a few registers, further (sm_90 suite median 6.5 → 7.8 %)."""
    producers = producers_of(live)
    out: dict[int, float] = {}
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind not in (OpKind.LOAD, OpKind.STORE) or not op.operands:
            continue
        pointer = op.operands[0]
        if len(pointer.shape) < 2 or not pointer.dtype.startswith("ptr<"):
            continue
        width = load_vector_bytes(op, producers, env)
        nbytes = element_bytes(pointee(pointer.dtype))
        vec = int(width // nbytes) if width and nbytes else 0
        if vec <= index_vector:
            continue
        # the offset tiles the pointer is built from: element-wise arithmetic, casts and broadcasts of its shape
        for v in bounded_walk((pointer,), lambda v: _offset_operands(producers.get(v.id)), bound=24,
                              admit=lambda v: tuple(v.shape) == tuple(pointer.shape)):
            if v.id in costs and not is_pointer(v.dtype) and v.dtype in ("i64", "u64"):
                size = numel(v, env)
                if size:
                    per_thread = max(1, math.ceil(size / threads))
                    cost = 2.0 * math.ceil(per_thread / min(per_thread, vec))
                    out[v.id] = min(out.get(v.id, costs[v.id]), cost)
    return out


def _offset_operands(op: Op | None) -> tuple[Value, ...]:
    return op.operands if op is not None and op.kind in (OpKind.ELEMENTWISE, OpKind.CAST, OpKind.VIEW) else ()
