"""Shared-memory scratch of converting a reduced row to the layout it is stored in (Triton 3.9).

A reduction's result keeps the sliced layout of its operand; the store of it (or an atomic) has its own
coalesced 1-D layout, so Triton inserts a `ttg.convert_layout`, through shared memory when the warps hold
different elements in the two layouts (otherwise registers or shuffles). Where it goes and in which dtype
follows Triton's RemoveLayoutConversions: at the store, after the cast to the pointee type, unless the row
meets a loaded 1-D tile first that is too large to reload in the sliced layout; then at that join. Its size
is the swizzled conversion's numel / reps (linear_layout.scratch_elements)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernlint.analysis import linear_layout
from kernlint.analysis.access_layout import Access, size_per_thread
from kernlint.analysis.liveness import Liveness
from kernlint.analysis.smem_reduce import Layout, ScratchUse, _dims, blocked_layout
from kernlint.hardware.specs import GpuSpec
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes, pointee
from kernlint.ir.walk import bounded_walk


def reduced_store_conversions(live: Liveness, producers: Mapping[int, Op], env: Mapping[str, Any],
                               num_warps: int, memory: list[Access],
                               reduce_layouts: Mapping[int, tuple[Layout, int]],
                               spec: GpuSpec) -> list[ScratchUse]:
    """A reduced tile keeps the sliced layout of its operand; the store of it has its own coalesced layout,
    so Triton converts at the store (ttg.convert_layout before tt.store). Through shared memory when the
    warps hold different elements in the two layouts (otherwise registers/shuffles): numel × element."""
    uses = []
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind not in (OpKind.STORE, OpKind.ATOMIC) or len(op.operands) < 2:
            continue
        ptr, value = op.operands[0], op.operands[1]
        # an atomic is not vectorised (sizePerThread 1) and converts the value already cast to the pointee
        # type (measured Triton 3.9, mamba-ssm _chunk_cumsum_bwd_kernel: tl.sum → truncf → convert_layout →
        # tt.atomic_rmw fadd on 64 fp16 = 128 B, sm_80/90/100)
        atomic = op.kind == OpKind.ATOMIC
        dims = _dims(value, env)
        expanded = None if atomic else _expanded_row(value, dims, producers, reduce_layouts, env)
        if expanded is not None:
            row, n = expanded
            ebytes_row = element_bytes(row.dtype)
            uses.append(ScratchUse(step.loops[-1] if step.loops else None, "reduced row to store layout",
                                   n * int(ebytes_row), f"{n} × {ebytes_row:g} B", op.line))
            continue
        if not dims or len(dims) != 1 or ptr.shape != value.shape:
            continue
        source = _reduced_source(value, producers, reduce_layouts)
        if source is None:
            continue
        parent, axis = source
        sliced_warps = tuple(k for d, kinds in enumerate(parent.bits) if d != axis for k in kinds)
        own = 1 if atomic else max(1, int(16 // element_bytes(pointee(ptr.dtype))))
        store_spt = size_per_thread(dims, memory, num_warps, own)
        store_layout = blocked_layout(dims, store_spt, num_warps)
        if store_layout is None or _warp_positions(sliced_warps) == _warp_positions(store_layout.bits[0]):
            continue
        # tl.store casts to the pointee type and Triton converts the narrower float side (Triton 3.9, sm_80/90/
        # 100: a [64] fp32 row sum stored as fp8 converts 64 B, bf16 stored as fp32 128 B); before a float-to-
        # int cast it converts the value (bf16 stored as i8: 2 B an element)
        vb, pb = element_bytes(value.dtype), element_bytes(pointee(ptr.dtype))
        ebytes = pb if atomic else min(vb, pb) if _is_float(value.dtype) and _is_float(pointee(ptr.dtype)) else vb
        # Triton's RemoveLayoutConversions reloads a 1-D tile in the sliced layout instead when that is
        # cheap: fewer elements than threads (isExpensiveLoadOrStore), then the conversion stays at the store
        # (measured: [32] fp32 row sums × a [32] scale at 4 warps convert 32 × 2 B after the fp16 cast)
        joined = _loaded_join_dtype(value, producers, reduce_layouts) if dims[0] >= 32 * num_warps else None
        if joined is not None and not atomic:
            ebytes = element_bytes(joined)
        elems = _store_conversion_elements(parent, axis, dims[0], store_spt, num_warps, int(ebytes * 8), spec)
        nbytes = elems * int(ebytes)
        uses.append(ScratchUse(step.loops[-1] if step.loops else None,
                               "reduced tile to atomic layout" if atomic else "reduced tile to store layout",
                               nbytes, f"{elems} × {ebytes:g} B", op.line))
    return uses


def _store_conversion_elements(parent: Layout, axis: int, n: int, store_spt: int, num_warps: int, bitwidth: int,
                               spec: GpuSpec) -> int:
    """Elements of the swizzled scratch of the sliced → store-layout conversion (linear_layout.scratch_
    elements: numel / reps). A thread that keeps several rows of the row sums in both layouts moves them in
    rounds: unsloth's fp8 row-wise GEMV ([BLOCK_N, 512] fp32 row sums, 2 warps, Triton 3.9 sm_90) takes
    256 B at BLOCK_N 64 and also 256 B at BLOCK_N 128, where each thread holds 2 of the 128 stored rows."""
    shape = tuple(1 << len(kinds) for kinds in parent.bits)
    spt = tuple(1 << kinds.count("reg") for kinds in parent.bits)
    try:
        src = linear_layout.slice_of(shape, spt, parent.order, num_warps, axis)
        dst = linear_layout.blocked((n,), (store_spt,), (0,), num_warps)
        return max(1, min(n, linear_layout.scratch_elements(src, dst, bitwidth, spec.stmatrix, spec.ldmatrix)))
    except (ValueError, IndexError, ZeroDivisionError):   # a layout the rebuild does not cover: whole tile
        return n


def _loaded_join_dtype(value: Value, producers: Mapping[int, Op],
                       reduce_layouts: Mapping[int, tuple[Layout, int]]) -> str | None:
    """Where the reduced row meets a loaded 1-D tile on its way to the store (`y = tl.sum(acc, 1) * s` with
    `s = tl.load(s_ptr + offs_n)`), the loaded tile already has the store's coalesced layout and Triton
    converts the reduced side there, in its dtype at that point, not at the store. Measured (Triton 3.9,
    sm_90, unsloth's fp8 row-wise GEMV, [64, 512] fp32 row sums × an fp16 scale loaded as fp32, stored as
    fp16, 2 warps): 64 × 4 B = 256 B of conversion scratch, where converting at the store would move fp16
    (tests/truth/reduction_dtypes.py, scaled_row_sums).
    Returns the dtype of the reduced operand at the join nearest the reduction, else None."""
    derived: dict[int, bool] = {}   # value id → computed (element-wise) from a reduction result

    def from_reduce(v: Value, depth: int = 0) -> bool:
        if v.id in derived:
            return derived[v.id]
        if v.id in reduce_layouts:
            derived[v.id] = True
            return True
        op = producers.get(v.id)
        hit = bool(op is not None and depth < 32 and op.kind in (OpKind.ELEMENTWISE, OpKind.CAST)
                   and any(from_reduce(x, depth + 1) for x in op.operands if x.shape == v.shape))
        derived[v.id] = hit
        return hit

    def loaded(v: Value, depth: int = 0) -> bool:
        op = producers.get(v.id)
        if op is None or depth > 16:
            return False
        if op.kind == OpKind.LOAD:
            return True
        return op.kind in (OpKind.ELEMENTWISE, OpKind.CAST) and any(loaded(x, depth + 1) for x in op.operands
                                                          if x.shape == v.shape)

    best: tuple[int, str] | None = None   # (distance from the store, dtype) of the deepest join

    def expand(item: tuple[Value, int]) -> list[tuple[Value, int]]:
        nonlocal best
        v, dist = item
        op = producers.get(v.id)
        if op is None or op.kind not in (OpKind.ELEMENTWISE, OpKind.CAST):
            return []
        same = [x for x in op.operands if x.shape == v.shape]
        inside = [x for x in same if from_reduce(x)]
        if inside and any(loaded(x) for x in same if not from_reduce(x)):
            if best is None or dist >= best[0]:
                best = (dist, inside[0].dtype)
        return [(x, dist + 1) for x in inside]

    for _ in bounded_walk([(value, 0)], expand, key=lambda item: item[0].id, admit=lambda item: from_reduce(item[0])):
        pass
    return best[1] if best else None


def _is_float(dtype: str) -> bool:
    return dtype.startswith(("fp", "bf"))


def _warp_positions(kinds: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(i for i, k in enumerate(kinds) if k == "warp")


def _expanded_row(value: Value, dims: tuple[int, ...] | None, producers: Mapping[int, Op],
                  reduce_layouts: Mapping[int, tuple[Layout, int]], env: Mapping[str, Any]) -> tuple[Value, int] | None:
    """`tl.store(out + rows, tl.max(x, axis=1)[:, None])`: a reduced row stored as an [M, 1] (or [1, M]) tile.
    Triton converts the 1-D row, before the expand and before the cast to the pointee type, from the sliced
    layout to the store's: the whole row in the reduction's dtype. Measured (Triton 3.9 sm_90, a [M, 64] fp16
    max reduced in fp32 and stored to fp16 as [M, 1], 4 warps): M = 16 / 64 / 1024 -> 64 / 256 / 4,096 B; flag-gems
    amax_kernel, addmv_kernel and aminmax_kernel the same (M x 4 B)."""
    if not dims or len(dims) != 2 or 1 not in dims or dims == (1, 1):
        return None
    op = producers.get(value.id)
    if op is None or op.kind != OpKind.VIEW or not op.operands or len(op.operands[0].shape) != 1:
        return None
    row = op.operands[0]
    if _reduced_source(row, producers, reduce_layouts) is None:
        return None
    n = max(dims)
    return row, n


def _reduced_source(value: Value, producers: Mapping[int, Op],
                    reduce_layouts: Mapping[int, tuple[Layout, int]]) -> tuple[Layout, int] | None:
    """The layout and axis of the 2-D reduction a 1-D stored value is (element-wise) computed from."""
    def same_shape_operands(v: Value) -> list[Value]:
        op = producers.get(v.id)
        if op is None or op.kind not in (OpKind.ELEMENTWISE, OpKind.CAST):
            return []
        return [x for x in op.operands if x.shape == value.shape]

    for v in bounded_walk((value,), same_shape_operands, bound=32):
        if v.id in reduce_layouts:
            layout, axis = reduce_layouts[v.id]
            return (layout, axis) if len(layout.bits) == 2 else None
    return None
