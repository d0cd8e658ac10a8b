"""How Triton's coalesce pass lays out the tiles of global loads and stores: elements per thread along the
fastest dim and the dim order, from the pointer's contiguity (triton lib/Dialect/TritonGPU/Transforms/
Coalesce.cpp, getOrderFromContiguity). The reduction and conversion scratch models build blocked layouts
from these (smem_reduce.blocked_layout)."""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kernlint.analysis.axis_info import Contiguity, order_from_contiguity, tile_shape
from kernlint.analysis.liveness import Liveness
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes, pointee

LANES = 32
# one tiled global access: (shape, elements per access, is a store, dim order fastest first)
Access = tuple[list[int], int, bool, tuple[int, ...]]


def _dims(value: Value, env: Mapping[str, Any]) -> list[int] | None:
    dims = tile_shape(value, env)
    return list(dims) if dims is not None else None


def memory_shapes(live: Liveness, env: Mapping[str, Any],
                  producers: Mapping[int, Op] | None = None) -> list[Access]:
    """(shape, elements per access, is a store, dim order) of every tiled global load and store: up to 16
    bytes per thread, and no more than the pointer's contiguity along its fastest dim (Coalesce.cpp, from
    AxisInfo): with a runtime `s_n`, `p + offs_m[:, None] * s_m + offs_n[None, :] * s_n` is one element per
    thread (TTGIR sizePerThread = [1, 1], Triton 3.9). The order is getOrderFromContiguity's: a tile whose
    pointer advances along dim 0 (`offs_k[:, None] * 1 + offs_n[None, :] * s_n`) is laid out dim 0 fastest,
    so a reduction over dim 0 stays inside the warps (Triton 3.9: a [32, 128] fp16 tile reduced over axis 0
    at 4 warps needs no shared memory, where a row-major layout puts the 4 warps along dim 0: 1,024 B; found
    by benchmarks/fuzz_truth.py, tests/analysis/test_smem_reduce.py)."""
    contiguity = Contiguity(producers, env, optimistic=True) if producers is not None else None
    out = []
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind not in (OpKind.LOAD, OpKind.STORE) or not op.operands:
            continue
        ptr = op.operands[0]
        if not ptr.shape or ptr.dtype.startswith("desc<"):
            continue
        dims = _dims(ptr, env)
        if not dims:
            continue
        vec = max(1, int(16 // element_bytes(pointee(ptr.dtype))))
        info = contiguity.info(ptr) if contiguity is not None and ptr.dtype.startswith("ptr<") else None
        order = tuple(range(len(dims) - 1, -1, -1))
        if info is not None and len(info[0]) == len(dims):
            order = order_from_contiguity(info[0])
            vec = max(1, min(vec, info[0][order[0]]))
        out.append((dims, vec, op.kind == OpKind.STORE, order))
    return out


def memory_order(shape: list[int], memory: list[Access]) -> tuple[int, ...] | None:
    """The dim order of the widest access of this shape (Coalesce.cpp), None when no access has it."""
    found = [(min(vec, shape[order[0]]), order) for dims, vec, _, order in memory if dims == shape]
    return max(found, key=lambda t: t[0])[1] if found else None



def size_per_thread(shape: list[int], memory: list[Access], num_warps: int,
                    own_vector: int | None = None) -> int:
    """Coalesce.cpp: widest access among the memory ops of this shape, capped by the elements per thread
    (and, for a store, by its own access width)."""
    widths = [min(vec, shape[order[0]]) for dims, vec, _, order in memory if dims == shape]
    if not widths:
        return 1
    per_thread = min(max(widths), max(1, math.prod(shape) // (LANES * num_warps)))
    if own_vector is not None:
        per_thread = min(per_thread, own_vector)
    return max(1, per_thread)
