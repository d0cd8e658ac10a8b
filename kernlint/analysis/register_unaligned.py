"""Addresses built from a pointer loaded at run time are not vectorised: one 64-bit address per element.

A grouped GEMM loads each problem's operand addresses as int64 and casts them
(`tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float16))`). Triton's AxisInfo knows nothing about the
alignment of a loaded value (divisibility 1), so the accesses through it move one element per instruction
and the coalesced layout gives each thread single elements spread over many rows: every element needs its
own address. Measured (Triton 3.9, suite grouped_matmul_kernel, sm_90, 64×64 tile, 4 warps; TTGIR): the C
store is `#blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2]}>`, 32 rows per
thread, and ptxas allocates 128 registers where the vectorised store of the same tile would keep 8 addresses.
The A and B loads of that kernel are vectorised: `tl.multiple_of(a_ptrs, [16, 16])` sets Triton's divisibility
attribute on the value in place (its result need not be used), and they are loop-carried; a chain through a
hint or a loop-carried value is left alone.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kernlint.analysis.liveness import Liveness, readers, producers as producers_of
from kernlint.analysis.placement import numel
from kernlint.ir.nodes import Op, OpKind, Value, is_pointer

_FOLLOW = (OpKind.VIEW, OpKind.RESHAPE)


def _loaded_base(pointer: Value, producers: Mapping[int, Op]) -> bool:
    """Does the pointer tile's base come from an integer loaded at run time and cast to a pointer, with no
    alignment hint on the way?"""
    v: Value | None = pointer
    for _ in range(32):
        op = producers.get(v.id) if v is not None else None
        if op is None or op.attrs.multiple_of is not None:
            return False          # a parameter (16-byte aligned by specialisation), a block argument or a hint
        if op.kind == OpKind.CAST:
            src = op.operands[0] if op.operands else None
            if src is None or is_pointer(src.dtype):
                return False
            while src is not None and producers.get(src.id) is not None and producers[src.id].kind == OpKind.CAST:
                src = producers[src.id].operands[0] if producers[src.id].operands else None
            return src is not None and producers.get(src.id) is not None and producers[src.id].kind == OpKind.LOAD
        if op.kind == OpKind.ELEMENTWISE and op.fn in ("+", "-"):
            v = next((o for o in op.operands if is_pointer(o.dtype)), None)
        elif op.kind in _FOLLOW and op.operands:
            v = op.operands[0]
        else:
            return False
    return False


def unaligned_pointer_costs(live: Liveness, env: Mapping[str, Any], threads: int) -> dict[int, float]:
    """Registers of pointer tiles read by a load or store whose base is a loaded, unhinted address: two per
    element a thread accesses."""
    producers = producers_of(live)
    read_by = readers(live)
    out: dict[int, float] = {}
    for vid, value in live.values.items():
        if not value.shape or not value.dtype.startswith("ptr<"):
            continue
        if not any(op.kind in (OpKind.LOAD, OpKind.STORE) and op.operands and op.operands[0].id == vid
                   for op in read_by.get(vid, [])):
            continue
        size = numel(value, env)
        if size is None or not _loaded_base(value, producers):
            continue
        out[vid] = 2.0 * max(1, math.ceil(size / threads))
    return out
