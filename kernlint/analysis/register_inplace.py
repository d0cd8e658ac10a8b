"""In-place element-wise updates that ptxas streams vector by vector (`x = tl.load(P + offs); tl.store(P + offs, f(x))`).

Triton emits every load of a block before its stores, and ptxas may move a load below a store only when it can
prove the two addresses disjoint. It can when both are the same base register plus compile-time offsets: the
same scalar pointer (a kernel argument, possibly moved by a runtime scalar such as `pid * stride`) plus a tile
of offsets built from `tl.arange`, constants and constexprs only. Then every 16-byte vector of the update is
loaded, computed and stored before the next is loaded, and no loaded tile of the update is ever whole.
A load through another pointer (`dk` while `dq` is stored, which may alias) cannot pass the store and stays
whole until its own use (geglu_tanh_bwd's `a` and `b`, stored in place, read `dc` too: measured whole).

Measured (Triton 3.9, sm_90, suite rope_bwd_inplace_kernel, dq [128 heads, 64] bf16 · 4 warps = 64 q1 and 64
q2 elements per thread, updated in place; nvdisasm --print-life-ranges): the SASS alternates
`LDG.E.128 [R44+0x2000]; LDG.E.128 [R44+0x2080]; STG.E.128 [R44+0x1000]; STG.E.128 [R44+0x1080]` — two
vectors (q1 and q2 of one chunk) are loaded while the previous chunk is stored — with 45-51 live registers
through the whole update; the dk tiles and cos / sin (other pointers) are loaded before the first dq store.
ptxas reports 56 registers at 16, 32 and 64 elements per thread alike (suite truth 54 / 58 / 56).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kernlint.analysis.liveness import Liveness, derived, readers
from kernlint.analysis.placement import _producer_map, numel
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes, is_pointer
from kernlint.ir.walk import bounded_walk, walk_upstream
from kernlint.ir.cache_keys import Analysis

# a streamed load keeps the vector being stored and the next one in flight (the SASS above): 2 × 16 bytes
IN_FLIGHT_BYTES = 32
_CHAIN = (OpKind.ELEMENTWISE, OpKind.CAST)
_STREAM_USERS = (OpKind.ELEMENTWISE, OpKind.CAST, OpKind.STORE)
_STATIC_OFFSET_OPS = (OpKind.ARANGE, OpKind.VIEW, OpKind.ELEMENTWISE, OpKind.CAST)


def _static_offsets(value: Value, producers: dict[int, Op], depth: int = 0) -> bool:
    """Whether an integer offset tile is built from tl.arange and compile-time constants only (constants and
    constexprs are folded into the ops, so any operand with no tile shape is a runtime scalar)."""
    if depth > 32 or not value.shape:
        return False
    op = producers.get(value.id)
    if op is None or op.kind not in _STATIC_OFFSET_OPS:
        return False
    return all(_static_offsets(v, producers, depth + 1) for v in op.operands)


def pointer_base(address: Value, producers: dict[int, Op]) -> int | None:
    """The id of the scalar pointer a pointer tile is built on when the rest of it is compile-time offsets
    (`base + offs`, `base + offs + hd // 2`), else None."""
    value = address
    for _ in range(32):
        if not value.shape:
            return value.id if is_pointer(value.dtype) else None
        op = producers.get(value.id)
        if op is None or op.kind not in (OpKind.ELEMENTWISE, OpKind.VIEW):
            return None
        pointers = [v for v in op.operands if is_pointer(v.dtype)]
        if len(pointers) != 1 or not all(_static_offsets(v, producers) for v in op.operands if v is not pointers[0]):
            return None
        value = pointers[0]
    return None


def _feeds_other_stores(loads: set[int], own: set[int], ops_of: Mapping[int, list[Op]]) -> bool:
    """Whether the loaded values reach, through any chain of ops, a store or atomic not in `own`."""
    def results(vid: int) -> list[int]:
        return [v.id for op in ops_of.get(vid, ()) for v in op.all_results()]

    for vid in bounded_walk(list(loads), results, key=lambda vid: vid, bound=None):
        if any(op.kind in (OpKind.STORE, OpKind.ATOMIC) and op.id not in own for op in ops_of.get(vid, ())):
            return True
    return False


def in_place_streams(live: Liveness) -> dict[int, int]:
    """The loaded tiles (and their casts) that ptxas streams through an in-place update (module doc), by value
    id, with the element bytes of the load each comes from."""
    producers = _producer_map(live)
    index = {s.op.id: i for i, s in enumerate(live.steps) if not s.is_end}
    where = {s.op.id: s.loops for s in live.steps if not s.is_end}
    ops_of = readers(live)
    # (same-base loads, their casts, store op ids)
    groups: list[tuple[set[int], set[int], set[int], set[int]]] = []
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind != OpKind.STORE or len(op.operands) < 2 or not op.operands[1].shape:
            continue
        base = pointer_base(op.operands[0], producers)
        if base is None:
            continue
        load_ops: set[int] = set()
        loads: set[int] = set()
        tiles: list[Value] = []

        def visit(p: Op, v: Value) -> tuple[Value, ...]:
            if not v.shape:
                return ()
            tiles.append(v)
            if p.kind == OpKind.LOAD:
                if where.get(p.id) == step.loops and p.operands and pointer_base(p.operands[0], producers) == base:
                    load_ops.add(p.id)
                    loads.add(v.id)
                return ()
            return p.operands if p.kind in _CHAIN else ()

        walk_upstream(op.operands[1], producers, visit)
        if not loads or not all(u.kind in _STREAM_USERS and where.get(u.id) == step.loops
                                for v in tiles for u in ops_of.get(v.id, ())):
            continue
        casts = {v.id for v in tiles if producers.get(v.id) is not None and producers[v.id].kind == OpKind.CAST
                 and all(o.id in loads for o in producers[v.id].operands)}
        merged = (load_ops, loads, casts, {op.id})
        for g in [g for g in groups if g[1] & loads]:
            groups.remove(g)
            merged = tuple(a | b for a, b in zip(merged, g))
        groups.append(merged)
    out: dict[int, int] = {}
    stores = [s.op.id for s in live.steps if not s.is_end and s.op.kind in (OpKind.STORE, OpKind.ATOMIC)]
    for load_ops, loads, casts, own in groups:
        first, last = min(index[o] for o in load_ops), max(index[o] for o in own)
        # a store through another pointer between the loads and the update's last store may alias them, and
        # a store of the loaded data through another pointer (geglu_tanh_bwd's db from `a`, stored after `a`'s
        # update) needs every element of it after the update: either way the tiles are held whole
        if any(first < index[s] < last for s in stores if s not in own) or _feeds_other_stores(loads, own, ops_of):
            continue
        load_bytes = max(1, int(element_bytes(live.values[next(iter(loads))].dtype)))
        for vid in loads | casts:
            source = live.values[vid] if vid in loads else producers[vid].operands[0]
            out[vid] = max(1, int(element_bytes(source.dtype)))
        for vid in _address_tiles(load_ops | own, producers, ops_of):
            out.setdefault(vid, load_bytes)
    return out


def _address_tiles(accesses: set[int], producers: dict[int, Op], ops_of: Mapping[int, list[Op]]) -> set[int]:
    """The pointer and offset tiles that only address the update's own loads and stores (`dq_ptr + first_q`,
    `first_q` itself): they are consumed vector by vector with the data (in the SASS every access of the
    update is an immediate offset from one base pair)."""
    def addressing(v: Value) -> bool:   # a tile computed by arithmetic, a view or an arange
        op = producers.get(v.id)
        return bool(v.shape) and op is not None and op.kind in (OpKind.ELEMENTWISE, OpKind.VIEW, OpKind.ARANGE)

    pointers = [producers_op.operands[0] for producers_op in
                (op for ops in ops_of.values() for op in ops) if producers_op.id in accesses]
    candidates = {v.id for v in bounded_walk(pointers, lambda v: producers[v.id].operands, bound=None,
                                             admit=addressing)}
    producing = {vid: producers[vid].id for vid in candidates}
    changed = True
    while changed:   # drop a tile another op reads (a mask comparison, another access)
        changed = False
        inside = accesses | {producing[vid] for vid in candidates}
        for vid in list(candidates):
            if any(op.id not in inside for op in ops_of.get(vid, ())):
                candidates.discard(vid)
                changed = True
    return candidates


def stream_in_place(live: Liveness, costs: dict[int, float], env: Mapping[str, Any], threads: int) -> None:
    """Scale each in-place streamed load (and its cast) to the share of its elements in flight (in place):
    IN_FLIGHT_BYTES of the loaded type per thread out of the elements a thread holds."""
    for vid, load_bytes in derived(live, Analysis.IN_PLACE_STREAMS.key(), lambda: in_place_streams(live)).items():
        size = numel(live.values[vid], env)
        if vid not in costs or size is None:
            continue
        per_thread = max(1, math.ceil(size / threads))
        costs[vid] *= min(1.0, IN_FLIGHT_BYTES / load_bytes / per_thread)
