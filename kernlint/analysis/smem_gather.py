"""Shared-memory scratch of `tl.gather` (Triton 3.9): the conversions into and out of its warp-local layout.

Triton lowers a gather with warp shuffles only when each warp holds whole columns along the gather axis, so
its OptimizeThreadLocality pass gives the gather a layout of its own (layout_ops.gather_params) and converts
the source and the index into it and the result back out (setOptimizedGatherLayout). Each conversion goes
through shared memory when data crosses warps; its scratch is the swizzled conversion's numel / reps
(linear_layout.scratch_elements), and they run one after another, so the largest counts. RemoveLayoutConversions
then moves a conversion up past element-wise ops and casts to the last tile it cannot recompute (a load with at
least as many elements as threads, a scan, a reduction): a loaded fp16 tile widened to fp32 is converted as
fp16. Measured (Triton 3.9, sm_80/90/100, tests/analysis/test_smem_scratch_mechanisms.py): a [32, 64] fp16 tile
loaded, widened and gathered on axis 0 at 4 warps 4,096 B; the two fp32 scan results of fla's gsa gate
backward 8,192 B on sm_80, 4,096 B on sm_90/100 (ldmatrix/stmatrix tiles); a [16, 1] fp32 result stored as
[16]: 64 B.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kernlint.analysis import layout_ops
from kernlint.analysis.axis_info import tile_shape
from kernlint.analysis.linear_layout import (
    Layout,
    blocked,
    needs_shared_memory,
    scratch_elements,
)
from kernlint.analysis.liveness import Liveness, derived, readers
from kernlint.analysis.smem_convert import (
    _PASS_THROUGH,
    Conversion,
    _accesses,
    _layouts,
    _shaped_layout,
)
from kernlint.hardware.specs import GpuSpec
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes
from kernlint.ir.walk import walk_upstream
from kernlint.ir.cache_keys import Analysis

THREADS_PER_WARP = 32


def gather_scratch(live: Liveness, producers: Mapping[int, Op], env: Mapping[str, Any], num_warps: int,
                   spec: GpuSpec) -> list[Conversion]:
    """One entry per `tl.gather`: the largest of the conversions of its source, its index and its result."""
    gathers = [s for s in live.steps if not s.is_end and s.op.kind == OpKind.GATHER and len(s.op.operands) == 2]
    if not gathers or num_warps < 1:
        return []
    accesses = derived(live, Analysis.CONVERSION_ACCESSES.key(), lambda: _accesses(live, producers, env))
    layouts = _layouts(accesses, num_warps)
    threads = num_warps * THREADS_PER_WARP

    def tile_layout(value: Value) -> tuple[Layout, tuple[int, ...]] | None:
        """A tile's blocked layout (from the load of its shape or a reshape/join of loads) and its order."""
        shape = tile_shape(value, env)
        if shape is None:
            return None
        for op_id, access in accesses.items():
            if access.is_load and access.shape == shape:
                spt, order = layouts[op_id]
                return blocked(shape, spt, order, num_warps), order
        shaped = _shaped_layout(value, producers, env, layouts, accesses, num_warps)
        return (shaped, tuple(range(len(shape) - 1, -1, -1))) if shaped is not None else None

    def frontier(value: Value) -> list[tuple[Layout, int]]:
        """(layout, bits) of the tiles a conversion into another layout lands on once RemoveLayoutConversions
        has recomputed the cheap element-wise ops and casts in the new layout: expensive loads in their loaded
        type, results of other ops (scans, reductions) in theirs; constants and small loads are recomputed."""
        shape = tile_shape(value, env)
        out: list[tuple[Layout, int]] = []

        def visit(op: Op, v: Value) -> Iterable[Value]:
            if op.kind in _PASS_THROUGH:
                return [x for x in op.operands if x.shape and tile_shape(x, env) == shape]
            if op.kind in (OpKind.FULL, OpKind.ARANGE):
                return ()
            if op.kind == OpKind.LOAD:
                access = accesses.get(op.id)
                if access is None or access.shape != shape:
                    return ()
                n = 1
                for d in access.shape:
                    n *= d
                if n >= threads:
                    spt, order = layouts[op.id]
                    out.append((blocked(access.shape, spt, order, num_warps), access.bits))
                return ()
            if op.kind not in (OpKind.DOT,):
                found = tile_layout(v)
                if found is not None:
                    out.append((found[0], max(8, int(8 * element_bytes(v.dtype)))))
            return ()

        walk_upstream(value, producers, visit)
        return out

    out: list[Conversion] = []
    for step in gathers:
        op = step.op
        src, index = op.operands
        axis = op.axis_attrs().axis
        src_shape, index_shape = tile_shape(src, env), tile_shape(index, env)
        if axis is None or src_shape is None or index_shape is None or len(src_shape) != len(index_shape) \
                or len(src_shape) < 2:
            continue   # a 1-D gather keeps its layout (setOptimizedGatherLayout returns early)
        source = tile_layout(src)
        order = source[1] if source is not None else tuple(range(len(src_shape) - 1, -1, -1))
        spt, tpw, wpc, gather_order = layout_ops.gather_params(src_shape, index_shape, axis, order, num_warps)
        gathered = {shape: blocked(shape, spt, gather_order, num_warps, params=(tpw, wpc))
                    for shape in (src_shape, index_shape)}
        best = 0
        for value, shape in ((src, src_shape), (index, index_shape)):
            for layout, bits in frontier(value):
                dst = gathered[shape]
                if layout.shape == dst.shape and layout != dst and needs_shared_memory(layout, dst):
                    best = max(best, scratch_elements(layout, dst, bits, spec.stmatrix, spec.ldmatrix) * bits // 8)
        if op.result is not None:
            best = max(best, _result_conversion(op.result, gathered[index_shape], live, env, accesses, layouts,
                                                num_warps, spec))
        if best:
            out.append(Conversion(best, op.line, f"tl.gather on axis {axis} in its warp-local layout",
                                  step.loops[-1] if step.loops else None))
    return out


def _result_conversion(result: Value, layout: Layout, live: Liveness, env: Mapping[str, Any],
                       accesses: Mapping[int, Any], layouts: Mapping[int, tuple[tuple[int, ...], tuple[int, ...]]],
                       num_warps: int, spec: GpuSpec) -> int:
    """Scratch bytes of converting the gathered tile to the layout of the store it reaches through reshapes,
    casts and element-wise ops (0 when it reaches none)."""
    users = readers(live)
    value: Value | None = result
    for _ in range(8):
        if value is None:
            return 0
        nxt: Value | None = None
        for op in users.get(value.id, ()):
            if op.kind == OpKind.STORE and len(op.operands) > 1 and op.operands[1].id == value.id and op.id in accesses:
                access = accesses[op.id]
                spt, order = layouts[op.id]
                dst = blocked(access.shape, spt, order, num_warps)
                bits = max(8, int(8 * element_bytes(value.dtype)))
                if dst.shape != layout.shape or dst == layout or not needs_shared_memory(layout, dst):
                    return 0
                return scratch_elements(layout, dst, bits, spec.stmatrix, spec.ldmatrix) * bits // 8
            if op.result is not None and nxt is None and op.kind in (OpKind.RESHAPE, *_PASS_THROUGH):
                shape = tile_shape(op.result, env)
                if shape is None:
                    return 0
                if op.kind == OpKind.RESHAPE:
                    try:
                        layout = layout_ops.reshape(layout, shape)
                    except ValueError:
                        return 0
                elif shape != layout.shape:
                    continue
                nxt = op.result
        value = nxt
    return 0
