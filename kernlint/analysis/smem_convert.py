"""Shared-memory scratch of layout conversions (`ttg.convert_layout` through shared memory).

Triton gives every tensor a register layout. The coalesce pass picks the layout of each load/store from its
pointer: order = dims by decreasing contiguity, sizePerThread = min(contiguity, 128 bits / element) along
the fastest dim; loads take the widest such vector among all memory ops of the same shape and order (up to
numel / threads), stores are capped at their own width (triton lib/Dialect/TritonGPU/Transforms/
CoalesceUtils.cpp, buildCoalescedEncoding). Where a value meets a consumer in another layout Triton converts
it, and the RemoveLayoutConversions pass removes the conversion only when it can recompute the producer in
the consumer's layout — loads with at least as many elements as threads are too expensive to recompute
(Transforms/Utility.cpp, isExpensiveLoadOrStore). The conversions that stay and move data across warps
get a scratch buffer (linear_layout.scratch_elements; it depends on the target's stmatrix/ldmatrix
support). Measured on Triton 3.9 (sm_80/90/100 TTGIR with allocation.size):
* a store narrower than the loads feeding it: fused add+RMSNorm+int8 (an int8 store widens the bf16 loads to
  16 elements, the bf16 store keeps 8 → BLOCK_N × 2 B), residual dropout with an int8 mask store, and the
  fp32 stores of norm backward (8-wide 16-bit loads → 4-wide fp32 store, num_warps × 1,024 B);
* a 1-D vector loaded on its own and broadcast into a 2-D tile (RoPE cos/sin, conv1d weights/bias):
  1-D blocked → slice of the tile's layout, N × 4 B when the vector has ≥ threads elements; the same one
  rank up (a [HC, N] tile times a [HC, N, C] one as `h[:, :, None]`), also into a tile laid out by a
  tl.reshape / tl.join of loaded tiles (layout_ops.py; NVFP4 group scales);
* a reduction result stored as a vector (slice → 1-D blocked).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kernlint.analysis import layout_ops
from kernlint.analysis.axis_info import Contiguity, order_from_contiguity, tile_shape
from kernlint.analysis.linear_layout import (Layout, blocked, mma_accumulator, needs_shared_memory, scratch_elements,
                                             slice_of)
from kernlint.analysis.liveness import Liveness, derived
from kernlint.analysis.placement import DotPlacement, numel
from kernlint.hardware.specs import GpuSpec
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes, pointee
from kernlint.ir.symbolic import as_int
from kernlint.ir.walk import walk_upstream
from kernlint.ir.cache_keys import Analysis

THREADS_PER_WARP = 32
_PASS_THROUGH = (OpKind.ELEMENTWISE, OpKind.CAST)


@dataclass(frozen=True, slots=True)
class Conversion:
    bytes: int
    line: int
    detail: str
    loop: int | None
    step: int = -1        # index of the converting op in live.steps (when its scratch is allocated)


@dataclass(frozen=True, slots=True)
class _Access:
    shape: tuple[int, ...]
    order: tuple[int, ...]
    width: int          # own vector width in elements
    bits: int           # pointee bits
    is_load: bool


def _accesses(live: Liveness, producers: Mapping[int, Op], env: Mapping[str, Any]
              ) -> dict[int, _Access]:
    contiguity = Contiguity(producers, env)
    out: dict[int, _Access] = {}
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind not in (OpKind.LOAD, OpKind.STORE, OpKind.ATOMIC) or not op.operands:
            continue
        pointer = op.operands[0]
        if not pointer.shape or not pointer.dtype.startswith("ptr<"):
            continue
        shape = tile_shape(pointer, env)
        info = contiguity.info(pointer)
        if shape is None or info is None:
            continue
        order = order_from_contiguity(info[0])
        bits = int(8 * max(1, element_bytes(pointee(pointer.dtype))))
        width = max(1, min(info[0][order[0]], 128 // bits))
        out[op.id] = _Access(shape, order, width, bits, op.kind == OpKind.LOAD)
    return out


def _layouts(accesses: Mapping[int, _Access], num_warps: int) -> dict[int, tuple[tuple[int, ...], tuple[int, ...]]]:
    """(sizePerThread, order) of every access after the coalesce pass."""
    threads = num_warps * THREADS_PER_WARP
    group_width: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
    for a in accesses.values():
        key = (a.shape, a.order)
        group_width[key] = max(group_width.get(key, 1), a.width)
    out = {}
    for op_id, a in accesses.items():
        numel = 1
        for n in a.shape:
            numel *= n
        width = min(group_width[(a.shape, a.order)], max(numel // threads, 1))
        if not a.is_load:
            width = min(width, a.width)
        spt = tuple(width if d == a.order[0] else 1 for d in range(len(a.shape)))
        out[op_id] = (spt, a.order)
    return out


def _merge_sources(live: Liveness) -> dict[int, tuple[Value, Value]]:
    """Loop-carried values and if-merges take the layout of what flows into them: value id → (the two
    values that flow in: loop entry and yield, or the two branches)."""
    carried = {c.arg.id: (c.init, c.yielded) for s in live.steps if s.op.kind == OpKind.FOR and not s.is_end
               for c in s.op.carried}
    carried.update({phi.id: (a, b) for s in live.steps if s.op.kind == OpKind.IF and not s.is_end
                    for phi, a, b in s.op.merges})
    return carried


def conversion_scratch(live: Liveness, producers: Mapping[int, Op], env: Mapping[str, Any],
                       num_warps: int, spec: GpuSpec, dots: Sequence[DotPlacement] = ()) -> list[Conversion]:
    """Scratch bytes of the conversions Triton keeps (one entry per converting op)."""
    accesses = derived(live, Analysis.CONVERSION_ACCESSES.key(), lambda: _accesses(live, producers, env))
    layouts = _layouts(accesses, num_warps)
    threads = num_warps * THREADS_PER_WARP
    load_layout: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[int, ...]]] = {}
    for op_id, a in accesses.items():
        if a.is_load:
            load_layout.setdefault(a.shape, layouts[op_id])
    carried = derived(live, Analysis.MERGE_SOURCES.key(), lambda: _merge_sources(live))
    # what a value inherits its layout from does not depend on num_warps or the target: once per liveness
    sources: dict[int, tuple[OpKind, Op, int] | None] = derived(live, Analysis.CONVERSION_SOURCES.key(), dict)

    def source(value: Value) -> tuple[OpKind, Op, int] | None:
        if value.id not in sources:
            sources[value.id] = _source(value)
        return sources[value.id]

    def _source(value: Value) -> tuple[OpKind, Op, int] | None:
        """The load (or reduction) whose layout a same-shape value inherits, and the smallest load size on
        the way (when every load is cheap it is recomputed in the consumer's layout instead)."""
        shape = tile_shape(value, env)
        found: tuple[OpKind, Op, int] | None = None
        biggest_load: int | None = None

        def visit(op: Op, _: Value) -> Iterable[Value]:
            nonlocal found, biggest_load
            if op.kind == OpKind.LOAD and op.id in accesses and accesses[op.id].shape == shape:
                n = 1
                for d in accesses[op.id].shape:
                    n *= d
                biggest_load = n if biggest_load is None else max(biggest_load, n)
                found = found or (OpKind.LOAD, op, 0)
                return ()
            if op.kind in (OpKind.REDUCE, OpKind.DOT) and found is None:
                found = (op.kind, op, 0)  # a reduction's slice layout, a dot's MMA layout
                return ()
            if op.kind in _PASS_THROUGH:
                return [x for x in op.operands if x.shape and tile_shape(x, env) == shape]
            return ()

        walk_upstream(value, producers, visit, bound=256, through=carried)
        if found is None:
            return None
        return found[0], found[1], biggest_load or 0

    def src_layout(kind: OpKind, op: Op) -> Layout | None:
        if kind == OpKind.LOAD:
            spt, order = layouts[op.id]
            return blocked(accesses[op.id].shape, spt, order, num_warps)
        if kind == OpKind.DOT:
            # the accumulator's layout follows how the dot was placed: tcgen05 accumulators live in tensor
            # memory (read back in their own layout) and FMA dots have no MMA layout: neither is modelled;
            # wgmma gives #mma v3, mma.sync (sm_80, small tiles, 16-warp sm_100, sm_120) #mma v2
            placed = next((d for d in dots if d.op.id == op.id), None)
            shape = tile_shape(op.result, env) if op.result is not None else None
            if placed is None or placed.fma or placed.tmem_accumulator or shape is None or len(shape) != 2:
                return None
            return mma_accumulator((shape[0], shape[1]), num_warps, placed.async_mma)
        if op.kind != OpKind.REDUCE:   # a reduction's result: in the slice of its operand's layout
            return None
        in_shape = tuple(as_int(d.evaluate(env)) for d in op.reduce_attrs().in_shape)
        axis = op.reduce_attrs().axis
        if axis is None or any(d is None for d in in_shape) or in_shape not in load_layout:  # type: ignore[comparison-overlap]
            return None
        spt, order = load_layout[in_shape]  # type: ignore[index]
        return slice_of(in_shape, spt, order, num_warps, axis)  # type: ignore[arg-type]

    out: list[Conversion] = []

    def add(src: Layout, dst: Layout, bits: int, line: int, loop: int | None, what: str) -> None:
        if src == dst or not needs_shared_memory(src, dst):
            return
        elems = scratch_elements(src, dst, bits, spec.stmatrix, spec.ldmatrix)
        out.append(Conversion(elems * bits // 8, line, f"{what}: {elems:,} × {bits // 8} B", loop, index))

    for index, step in enumerate(live.steps):
        op = step.op
        if step.is_end:
            continue
        loop = step.loops[-1] if step.loops else None
        if op.kind == OpKind.STORE and op.id not in accesses and num_warps > 1:
            nbytes = store_conversion_fallback(op, live, producers, env, num_warps)
            if nbytes:
                out.append(Conversion(nbytes, op.line, "fp32 store of a tile computed from 16-bit loads", loop,
                                      index))
        elif op.kind == OpKind.STORE and op.id in accesses and len(op.operands) > 1 and \
                (half := _interleave_operand(op.operands[1], producers, env)) is not None:
            # tl.interleave(a, b) = join + reshape: each thread holds its a/b pairs side by side, a layout
            # the (unvectorised) store does not have, and a reshape is never rematerialised, so the
            # conversion stays whatever the loads cost (measured Triton 3.9, bitsandbytes dequant_4bit /
            # dequant_fp4: convert_layout of the [N, 2] join, 2N × element bytes, sm_80/90/100)
            found = source(half)
            src = src_layout(OpKind.LOAD, found[1]) if found is not None and found[0] == OpKind.LOAD else None
            if src is not None and len(src.shape) == 1:
                spt, order = layouts[op.id]
                dst = blocked(accesses[op.id].shape, spt, order, num_warps)
                # converted before the store's cast: in the interleaved values' own type (fp32 in dequant_fp4)
                pairs = layout_ops.reshape(layout_ops.join(src), (2 * src.shape[0],))
                add(pairs, dst, max(8, int(8 * element_bytes(half.dtype))), op.line, loop,
                    "interleaved pairs to the store's layout")
        elif op.kind in (OpKind.STORE, OpKind.ATOMIC) and op.id in accesses and len(op.operands) > 1:
            # an atomic (split-K's `tl.atomic_add(c_ptrs, acc)`) is laid out for coalescing like a store
            found = source(op.operands[1])
            if found is None:
                continue
            kind, origin, biggest_load = found
            if kind == OpKind.LOAD and biggest_load < threads:
                continue  # every load feeding it is cheap enough to recompute in the store's layout
            src = src_layout(kind, origin)
            if src is None:
                continue
            spt, order = layouts[op.id]
            dst = blocked(accesses[op.id].shape, spt, order, num_warps)
            bits = accesses[op.id].bits
            value, stored = op.operands[1].dtype, pointee(op.operands[0].dtype)
            if op.kind == OpKind.STORE and value.startswith(("fp", "bf")) and stored.startswith(("fp", "bf")):
                # a float value narrower than the pointer is converted before tl.store widens it (Triton 3.9:
                # a bf16 row sum stored as fp32 converts 2 B an element, tests/analysis/test_smem_reduce.py)
                bits = min(bits, int(8 * element_bytes(value)))
            add(src, dst, max(8, bits), op.line, loop,
                "dot result to the store's layout" if kind == OpKind.DOT else "store in a narrower layout")
        elif op.kind == OpKind.ELEMENTWISE and op.result is not None and len(op.result.shape) >= 2:
            out_shape = tile_shape(op.result, env)
            if out_shape is None:
                continue
            if out_shape in load_layout:
                tile = source(op.result)
                if tile is not None and tile[0] != OpKind.LOAD:
                    continue  # the tile is in an MMA or slice layout, not the loads' blocked one
                spt, order = layouts[tile[1].id] if tile is not None else load_layout[out_shape]
                tile_layout: Layout | None = blocked(out_shape, spt, order, num_warps)
            else:
                tile_layout = _shaped_layout(op.result, producers, env, layouts, accesses, num_warps)
            if tile_layout is None:
                continue
            for x in op.operands:
                vec, dim = _broadcast_vector(x, out_shape, producers, env)
                if vec is None:
                    continue
                found = source(vec)
                if found is None or found[0] != OpKind.LOAD or found[2] < threads:
                    continue
                src = src_layout(OpKind.LOAD, found[1])
                if src is None:
                    continue
                dst = layout_ops.drop_dim(tile_layout, dim)
                bits = max(8, int(8 * element_bytes(vec.dtype)))
                add(src, dst, bits, op.line, loop, "vector broadcast into a tile")
    return out


def _interleave_operand(value: Value, producers: Mapping[int, Op], env: Mapping[str, Any]) -> Value | None:
    """The first operand of the 1-D `tl.interleave` (join of two [N] tiles reshaped to [2N]) that a stored
    value is computed from element-wise, or None."""
    shape = tile_shape(value, env)
    found: list[Value] = []

    def visit(op: Op, _: Value) -> Iterable[Value]:
        if op.kind == OpKind.RESHAPE and op.operands:
            join = producers.get(op.operands[0].id)
            if join is not None and join.kind == OpKind.JOIN and join.operands and len(join.operands[0].shape) == 1:
                found.append(join.operands[0])
            return ()
        if op.kind in _PASS_THROUGH:
            return [x for x in op.operands if x.shape and tile_shape(x, env) == shape]
        return ()

    walk_upstream(value, producers, visit, bound=32)
    return found[0] if found else None


def _broadcast_vector(x: Value, out_shape: tuple[int, ...], producers: Mapping[int, Op],
                      env: Mapping[str, Any]) -> tuple[Value | None, int]:
    """A tile one rank lower broadcast into the result (`v[None, :]`, `v[:, None]`, `s[:, :, None]`, or
    numpy-style [N] against [M, N]) and the result dim it does not cover. Measured (Triton 3.9, sm_80/90/100):
    a loaded [HC, N] tile times a [HC, N, C] tile as `h[:, :, None]` is converted into the slice of the
    3-D tile's layout like a vector into a 2-D tile (liger-kernel mHC backward: [4, 64] fp32 → 1,024 B)."""
    rank = len(out_shape)
    shape = tile_shape(x, env) if x.shape else None
    if rank < 2 or shape is None:
        return None, 0
    if len(shape) == rank - 1 and shape == out_shape[1:] and out_shape[0] > 1:
        return x, 0
    if len(shape) == rank and shape.count(1) == 1 and shape != out_shape:
        op = producers.get(x.id)
        if op is not None and op.kind == OpKind.VIEW and op.operands and len(op.operands[0].shape) == rank - 1:
            dim = shape.index(1)
            if tile_shape(op.operands[0], env) == shape[:dim] + shape[dim + 1:]:
                return op.operands[0], dim
    return None, 0


def _shaped_layout(value: Value, producers: Mapping[int, Op], env: Mapping[str, Any],
                   layouts: Mapping[int, tuple[tuple[int, ...], tuple[int, ...]]], accesses: Mapping[int, _Access],
                   num_warps: int, depth: int = 0) -> Layout | None:
    """The layout of a tile no load or store of its shape fixes, taken element-wise back to a `tl.reshape` /
    `tl.join` of loaded tiles, which keep every element in its thread (layout_ops). Measured (Triton 3.9,
    unsloth _nvfp4_dequant_kernel): the [R, C/8, 16] reshape of the join of [R, C] int32 bytes holds the
    loaded [R, C/8] scales broadcast by `s[:, :, None]` in its dim-2 slice; the scales cross warps into it
    through R × C/8 × 4 B of scratch (2,048 B at 64 × 64, 8,192 at 128 × 128, 4 warps, sm_80/90/100)."""
    shape = tile_shape(value, env)
    if shape is None or depth > 4:
        return None
    found: list[Op] = []

    def visit(op: Op, _: Value) -> Iterable[Value]:
        if op.kind in (OpKind.LOAD, OpKind.RESHAPE, OpKind.JOIN):
            found.append(op)
            return ()
        if op.kind in _PASS_THROUGH:
            return [x for x in op.operands if x.shape and tile_shape(x, env) == shape]
        return ()

    walk_upstream(value, producers, visit)
    if not found:
        return None
    op = found[0]
    if op.kind == OpKind.LOAD:
        if op.id not in accesses or accesses[op.id].shape != shape:
            return None
        spt, order = layouts[op.id]
        return blocked(shape, spt, order, num_warps)
    if not op.operands:
        return None
    inner = _shaped_layout(op.operands[0], producers, env, layouts, accesses, num_warps, depth + 1)
    if inner is None:
        return None
    try:
        return layout_ops.join(inner) if op.kind == OpKind.JOIN else layout_ops.reshape(inner, shape)
    except ValueError:
        return None


def store_conversion_fallback(store: Op, live: Liveness, producers: Mapping[int, Op], env: Mapping[str, Any],
                              num_warps: int) -> int:
    """Fallback where the store's shape is not known: a 1-D fp32 store of values computed from 8/16-bit loads.

    Triton picks each access's layout from its vector width (16 B: 8 halves, 4 floats), so such a tile is
    converted through shared memory, one 32-thread × 8-element × 4-B slab per warp. Measured (Triton 3.9,
    layernorm/rmsnorm backward, sm_80/90/100): num_warps × 1,024 B (2 warps 2,048 … 16 warps 16,384); a
    single warp converts with shuffles (0 B).
    """
    if len(store.operands) < 2:
        return 0
    value, pointer = store.operands[1], store.operands[0]
    # what is written is the pointer's element type (Triton casts the value at the store)
    if len(value.shape) != 1 or element_bytes(pointee(pointer.dtype)) != 4:
        return 0
    narrow = 0

    def visit(op: Op, _: Value) -> Iterable[Value]:
        nonlocal narrow
        if op.kind == OpKind.LOAD:
            if op.result is not None and op.result.shape and element_bytes(op.result.dtype) < 4:
                narrow = max(narrow, int(16 // element_bytes(op.result.dtype)))
            return ()
        return [x for x in op.operands if x.shape] if op.kind in (OpKind.ELEMENTWISE, OpKind.CAST, OpKind.VIEW) else ()

    walk_upstream(value, producers, visit, through=derived(live, Analysis.MERGE_SOURCES.key(), lambda: _merge_sources(live)))
    if not narrow:
        return 0
    size = numel(value, env)
    slab = 32 * num_warps * min(narrow, 8)
    return 4 * min(size, slab) if size else 0
