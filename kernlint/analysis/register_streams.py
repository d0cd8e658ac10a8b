"""Loads ptxas need not hold whole: several loaded tiles that meet only in an element-wise chain ending in
a store (`y = x * w + b; tl.store(Y, y)`) can be consumed vector by vector, so ptxas sinks part of the
loads towards their use instead of issuing them all first.

Measured (Triton 3.9, sm_90, 4 warps, fp32; micro kernels storing x·w+b / x·w / x·2+1 from 3 / 2 / 1
loaded tiles, BLOCK/128 elements per thread): registers at 16/32/64 elements per thread were 34/62/140
(three loads), 32/52/116 (two), 26/44/84 (one): the extra loads add about a quarter to a half of their
tiles, not all of them. The largest tile of a group is held whole (the one-load kernel keeps its tile).
The kernels are tests/truth/streamed_loads.py; tests/analysis/test_register_streams.py holds the counts.

Effect on the recorded truth (benchmarks/accuracy.py, Triton 3.9; before the rules of this module →
after): examples + reference kernels register median A100 9.4 → 8.3 %, H100 10.2 → 7.8 %, B200
12.3 → 10.7 %, within 20 % 71/68/70 → 76/75/76 %, spill F1 0.78/0.87/0.74 → 0.78/0.89/0.79; wider suite
11.4/10.2/11.1 → 10.0/9.0/9.6 %, within 20 % 64/70/70 → 66/73/74 % (layernorm's wide rows: 95 → 73 registers
against ptxas 64 at 32 fp16 per thread; softmax at 64 fp32 per thread 73 → 100 against 98; the scan of
linear_recurrence 59 → 96 against 96). Helion and the H200 picks are unchanged; Triton 3.6: H100 9.8 →
7.8 %; public kernels (held out) A100 25.5 → 22.8 %. Still wrong: examples/swiglu.py is under-counted (its
looped two-load chain is left alone, as measured, but other terms miss 10-30 %).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kernlint.analysis.liveness import Liveness, derived, readers
from kernlint.analysis.placement import _producer_map
from kernlint.hardware.specs import MMA_FAMILIES
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes
from kernlint.ir.walk import bounded_walk, walk_upstream
from kernlint.ir.cache_keys import Analysis

_CHAIN = (OpKind.ELEMENTWISE, OpKind.CAST)
_STREAM_USERS = (OpKind.ELEMENTWISE, OpKind.CAST, OpKind.STORE)
# loads a group needs before ptxas sinks any: two in straight-line code (micro two_loads: 116 registers at
# 64 fp32 per thread where both tiles need 128 + addresses), three inside a loop — with two loads per
# iteration ptxas keeps both tiles (a looped x·w micro kernel: 128; examples/swiglu.py at 32-64 bf16 per
# thread: 48-80; Helion's looped rms_norm), with three it sinks (layernorm's normalise pass, a looped x·w+b)
MIN_GROUP_STRAIGHT, MIN_GROUP_LOOP = 2, 3
SUNK_MIN_REGS = 12.0     # smaller tiles are all issued up front (micro kernels at ≤ 8 fp32 per thread)
SUNK_FULL_REGS = 128.0   # a tile this large is held whole


def sunk_share(regs: float) -> float:
    """The share of a non-largest loaded tile of a group that is live at the peak. ptxas sinks a load
    more the smaller its tile is, and holds a 128-register tile whole: with share = regs / 128 the micro
    kernels above come out 30/60/148 (three fp32 loads; measured 34/62/140) and 28/52/116 (two; measured
    32/52/116), and examples/layernorm.py's normalise pass at 128 elements per thread spills as ptxas does."""
    return 1.0 if regs < SUNK_MIN_REGS else min(1.0, regs / SUNK_FULL_REGS)


def _element_wise_sources(start: Value, producers: Mapping[int, Op], where: Mapping[int, tuple[int, ...]],
                          loops: tuple[int, ...], strict: bool) -> tuple[dict[int, Value], set[int], bool]:
    """The tiles an element-wise chain ending in `start` is made of: (loaded and computed tiles by id, ids of
    the loaded ones, whether a load (or, `strict`, any op of the chain) sits in another block than `loops`).
    `strict` also follows an `if CONSTEXPR:` whose taken branch left the value as it was (mamba's
    `if HAS_D: out -= x * D` with HAS_D false): the merged value is the one from before the `if`."""
    tiles: dict[int, Value] = {}
    loads: set[int] = set()
    outside = False

    def visit(p: Op, v: Value) -> Iterable[Value]:
        nonlocal outside
        if not v.shape:
            return ()
        if p.kind == OpKind.LOAD:
            outside |= where.get(p.id) != loops
            loads.add(v.id)
            tiles[v.id] = v
        elif p.kind in _CHAIN:
            outside |= strict and where.get(p.id) != loops
            tiles[v.id] = v
            return p.operands
        elif p.kind == OpKind.IF and strict:
            for phi, then_value, else_value in p.merges:
                if phi.id == v.id and then_value.id not in producers and else_value.id in producers:
                    tiles[v.id] = v
                    return (else_value,)
        return ()

    walk_upstream(start, producers, visit)
    return tiles, loads, outside


def sunk_loads(live: Liveness) -> list[tuple[int, ...]]:
    """Groups of loaded values (ids) that ≥ 2 loads feed into a store through element-wise ops only, loaded
    in the store's block, where every tile of the chain is read only by element-wise ops and stores (a tile
    a reduction also reads — fused_add_rmsnorm's `h = x + residual`, stored and normalised — is
    materialised whole), and that feed no other store."""
    producers = _producer_map(live)
    where = {s.op.id: s.loops for s in live.steps if not s.is_end}
    users = readers(live)
    groups: list[tuple[set[int], int, bool]] = []   # (loads, stores they feed, in a loop)
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind != OpKind.STORE or len(op.operands) < 2 or not op.operands[1].shape:
            continue
        # outside: a load of another block (before the loop) feeds the chain
        chain, loads, outside = _element_wise_sources(op.operands[1], producers, where, step.loops, strict=False)
        streaming = all(u.kind in _STREAM_USERS and where.get(u.id) == step.loops
                        for vid in chain for u in users.get(vid, ()))
        if outside or not (streaming and loads):
            continue
        stores = 1
        for g in [g for g in groups if g[0] & loads]:
            groups.remove(g)
            loads |= g[0]
            stores += g[1]
        groups.append((loads, stores, bool(step.loops)))
    # one store: its output tile absorbs the loads chunk by chunk. Two stores fed by the same loads (geglu's
    # in-place da and db) each need their whole tile before the first store, which no load may pass (it
    # could alias): measured (suite geglu_tanh_bwd) as if every load were held.
    return [tuple(sorted(g)) for g, stores, looped in groups
            if stores == 1 and len(g) >= (MIN_GROUP_LOOP if looped else MIN_GROUP_STRAIGHT)]


# Loaded tiles that only feed one reduction are consumed piecewise: ptxas keeps a window of loads in flight
# and folds each into the per-thread partial sums, instead of holding the tiles. Measured (Triton 3.9, sm_90,
# tests/truth/reduced_streams.py; tests/analysis/test_reduced_streams.py holds the counts): `tl.sum(x * x)` over 64
# fp32 per thread takes 32 registers where the tile alone is 64; `tl.sum(o * do, axis=1)` over two
# [128, 128] fp32 tiles at 4 warps (128 per thread each, 32 rows per thread) takes 55 where they are 256.
# Beyond the partial sums (one per row a thread holds, `reduction_partials`) the group keeps about 16 data
# registers: fp32 [128, 128] at 4 warps holds 32 rows per thread and takes 55 = 32 + 16 + 7; a 1-D row's
# tree keeps about 8 partial sums (x·x over 64 fp32 per thread: 32).
# sm_80 the same; sm_100 the same for 1-D rows (32 and 50 registers) but not for row sums of 2-D tiles (fp16
# [128, 64] at 4 warps: 96 registers against 32 on sm_90; the public flash-attn `_bwd_preprocess`: 90-98 on
# B200, 32-38 on A100/H100). Inside a loop ptxas holds the tiles (fla's decoding kernel, two [128, 128] fp16
# row sums per iteration: 88 registers, the tiles whole): straight-line code only.
STREAM_WINDOW = 16.0
ROW_TREE_PARTIALS = 8.0


def reduced_streams(live: Liveness) -> list[tuple[Op, tuple[tuple[int, ...], tuple[int, ...]]]]:
    """Every group of tiles that feeds a single one-operand reduction in straight-line code through element-wise
    ops only, where no tile of the chain is read by anything else (softmax's x, also read after its max, is
    held whole), as (the reduction, (ids of its loaded and chain tiles, ids of the address tiles only those
    loads read))."""
    producers = _producer_map(live)
    where = {s.op.id: s.loops for s in live.steps if not s.is_end}
    users = readers(live)
    out: list[tuple[Op, tuple[tuple[int, ...], tuple[int, ...]]]] = []
    for step in live.steps:
        op = step.op
        if step.is_end or step.loops or op.kind != OpKind.REDUCE or len(op.operands) != 1 or not op.operands[0].shape:
            continue
        tiles, loads, outside = _element_wise_sources(op.operands[0], producers, where, step.loops, strict=True)
        only_chain = all(u.id == op.id or (u.kind in _CHAIN and u.result is not None and u.result.id in tiles)
                         for vid in tiles for u in users.get(vid, ()))
        if loads and not outside and only_chain:
            addresses = _private_addresses(live, [p for p in (producers.get(v) for v in loads) if p], step.loops)
            out.append((op, (tuple(sorted(tiles)), tuple(sorted(addresses - set(tiles))))))
    return out


def _private_addresses(live: Liveness, loads: list[Op], loops: tuple[int, ...]) -> set[int]:
    """The element-wise pointer and offset tiles that only these loads (or each other) read: computed per
    chunk beside the loads they feed. A tile another op also reads (an offset reused by a store) is left out."""
    producers, users = _producer_map(live), readers(live)
    where = {s.op.id: s.loops for s in live.steps if not s.is_end}
    cands: set[int] = set()

    def visit(p: Op, v: Value) -> Iterable[Value]:
        if v.shape and p.kind == OpKind.ELEMENTWISE and where.get(p.id) == loops:
            cands.add(v.id)
            return p.operands
        return ()

    for ld in loads:
        if ld.operands:
            walk_upstream(ld.operands[0], producers, visit)
    load_ids = {ld.id for ld in loads}
    changed = True
    while changed:
        changed = False
        for vid in list(cands):
            if any(u.id not in load_ids and (u.result is None or u.result.id not in cands)
                   for u in users.get(vid, ())):
                cands.discard(vid)
                changed = True
    return cands


def reduction_partials(reduce: Op, ebytes: int, env: Mapping[str, Any], num_warps: int) -> float:
    """Partial sums one thread keeps while it streams a tile into `reduce`: ROW_TREE_PARTIALS for a 1-D row;
    for a 2-D tile one per row (or column) the thread holds in Triton's default blocked layout (16-B vectors
    along the last dim, lanes then warps along it first)."""
    attrs = reduce.reduce_attrs()
    dims = [d.evaluate(env) if hasattr(d, "evaluate") else d for d in attrs.in_shape]
    if len(dims) != 2 or attrs.axis not in (0, 1) or not all(isinstance(d, int) and d > 0
                                                                          for d in dims):
        return ROW_TREE_PARTIALS   # a 1-D row, or everything reduced to one value: one tree
    rows, cols = dims
    vec = max(1, min(cols, 16 // max(1, ebytes)))
    lanes_c = min(32, max(1, cols // vec))
    warps_c = min(num_warps, max(1, cols // (vec * lanes_c)))
    per_col = max(1, cols // (lanes_c * warps_c))
    per_row = max(1, rows // ((32 // lanes_c) * max(1, num_warps // warps_c)))
    return float(per_row if attrs.axis == 1 else per_col)


def sink_loads(live: Liveness, costs: dict[int, float], enabled: bool = True, streams_2d: bool = True,
               env: Mapping[str, Any] | None = None, num_warps: int = 4) -> None:
    """Scale the registers of every non-largest load of each sunk group by `sunk_share`, and charge each group
    streamed into a reduction one window (STREAM_WINDOW + its partial sums) instead of its tiles (in place);
    `enabled` is False for Helion reductions (analysis/estimate.py); `streams_2d` (GpuSpec.streams_2d_reductions)
    is False where ptxas holds a 2-D reduction's tiles (sm_100)."""
    if not enabled:
        return
    for loads in derived(live, Analysis.SUNK_LOADS.key(), lambda: sunk_loads(live)):
        biggest = max(loads, key=lambda v: costs.get(v, 0.0))
        for vid in loads:
            if vid != biggest:
                costs[vid] = costs.get(vid, 0.0) * sunk_share(costs.get(vid, 0.0))
    loaded_ids = {v.id for s in live.steps if not s.is_end and s.op.kind == OpKind.LOAD for v in s.op.all_results()}
    for reduce, group in derived(live, Analysis.REDUCED_STREAMS.key(), lambda: reduced_streams(live)):
        two_d = len(reduce.operands[0].shape) > 1
        if two_d and not streams_2d:
            continue
        tiles, addresses = group
        loads = [v for v in tiles if v in loaded_ids]
        ebytes = min((element_bytes(live.values[v].dtype) for v in loads), default=4)
        keep = STREAM_WINDOW + reduction_partials(reduce, ebytes, env or {}, num_warps)
        # ptxas holds the window from the first of these loads to the reduction, whatever the tiles' own
        # lifetimes: it is charged to the reduced operand (live up to the reduction), the tiles and the
        # addresses only the loads read (formed chunk by chunk beside them) to nothing
        group_ids = (*tiles, *addresses)
        if sum(costs.get(vid, 0.0) for vid in group_ids) <= keep:
            continue
        for vid in group_ids:
            costs[vid] = 0.0
        costs[reduce.operands[0].id] = keep


TREE_SHARE = 0.3


def _independent_loops(live: Liveness) -> set[int]:
    """Loops that carry nothing from one iteration to the next (a persistent row loop: `for row in
    tl.range(start, n_rows, step)` with the whole row reduced inside): each iteration is straight-line code."""
    return derived(live, Analysis.INDEPENDENT_LOOPS.key(), lambda: {
        s.op.id for s in live.steps if s.op.kind == OpKind.FOR and not s.is_end and not s.op.carried
        and not s.op.for_attrs().rebinds_outer})


def reduction_tree(live: Liveness, index: int, costs: dict[int, float]) -> float:
    """Registers the within-thread part of a reduction holds at step `index` beyond its operands: Triton
    reduces a thread's elements pairwise (a tree), and when the reduced tile is still read after the
    reduction (softmax's `x - max(x)`, then `exp / sum`) the first level's partial sums need registers of
    their own instead of overwriting the elements. Measured (Triton 3.9, sm_90, examples/softmax.py, fp32,
    16/32/64/128 elements per thread): 4/8-15/25-31/33 registers above the model without this term; SASS of
    BLOCK 16384 · 8 warps peaks at 99 registers inside the pairwise FADD tree of `tl.sum`."""
    step = live.steps[index]
    if step.op.kind == OpKind.SCAN:
        # a scan writes its outputs while it still reads its inputs (in-thread prefix, warp shuffles, then
        # the cross-warp prefix from shared memory added to every element): inputs that die here are not
        # overwritten in place. Measured (Triton 3.9, sm_90, suite linear_recurrence_kernel: a 2-tuple scan
        # of fp32 tiles, 8/16/32 elements per thread): 57/84-96/145 registers, kernlint 40/59/97 without this
        return sum(costs.get(v.id, 0.0) for v in step.op.operands
                   if live.intervals.get(v.id, (0, -1))[1] == index)
    if step.op.kind != OpKind.REDUCE or not step.op.operands:
        return 0.0
    src = step.op.operands[0]
    if live.intervals.get(src.id, (0, -1))[1] <= index:
        return 0.0   # the tile dies here: the tree overwrites it
    if step.loops and not all(loop in _independent_loops(live) for loop in step.loops):
        # inside a loop (attention's row max, cross-entropy's online logsumexp) ptxas interleaves the tree
        # with the loop's other work: counting it there put attention 5 % and cross-entropy 9 % over
        return 0.0
    return TREE_SHARE * costs.get(src.id, 0.0)


def scan_results(live: Liveness) -> set[int]:
    """Values a scan produces: they exist whole (every element is written before any is read), so they are
    never streamed element by element (register_elementwise.streamed_values)."""
    return {v.id for s in live.steps if s.op.kind == OpKind.SCAN and not s.is_end for v in s.op.all_results()}


def scaled_products(live: Liveness, uses: Mapping[int, Mapping[int, str]]) -> set[int]:
    """Dot products scaled before they are added to a loop-carried accumulator (`acc += tl.dot(a, b) *
    a_s[:, None] * b_s[None, :]`, block-scaled fp8 GEMMs). The MMA writes the whole fresh product while the
    carried accumulator is live, so the product is never streamed element by element
    (register_elementwise.streamed_values). A plain `acc += tl.dot(a, b)` is not one: Triton's combine pass folds the
    add into the MMA's accumulator operand (lib/Dialect/TritonGPU... Combine: add(dot(a, b, 0), d) ->
    dot(a, b, d)). Found on the public set: unsloth's _w8a8_block_fp8_matmul at 64×64×64 · 4 warps,
    ptxas 157 (sm_90) / 196 (sm_100) registers against 73 / 105 estimated with the product streamed."""
    carried = {c.arg.id for s in live.steps if s.op.kind == OpKind.FOR and not s.is_end for c in s.op.carried}
    by_id = {s.op.id: s.op for s in live.steps if not s.is_end}
    out: set[int] = set()
    for step in live.steps:
        if step.is_end or step.op.kind != OpKind.DOT or step.op.result is None:
            continue
        value, hops = step.op.result, 0
        while hops < 8:
            users = uses.get(value.id, {})
            if len(users) != 1:
                break
            user = by_id.get(next(iter(users)))
            if user is None or user.kind != OpKind.ELEMENTWISE or user.result is None:
                break
            others = [v for v in user.operands if v.id != value.id]
            if user.fn == "+" and any(v.id in carried for v in others):
                if hops:   # scaled first: the product is materialised next to the accumulator
                    out.add(step.op.result.id)
                break
            value, hops = user.result, hops + 1
    return out


# In-flight load window of an in-loop accumulation (`acc += tl.load(...)`, `s += x * x`): ptxas issues a loop
# body's loads ahead of their use only up to about eight 16-byte vectors (32 registers), then lets each arriving
# vector be folded into the carried accumulator, so a larger loaded tile is never whole in registers.
# Measured (Triton 3.9, sm_80/sm_90, 1 warp, `acc += tl.load(X + i + offs)` over a runtime-bound loop, fp32;
# nvdisasm -lrm count for the live registers): 32/64/128 elements per thread -> 64/96/168 registers = the
# accumulator + 32..40; two loads multiplied into it (acc += x * w) 100/168 at 64/128 (the window is shared);
# rmsnorm_fwd (bf16 rows, 128 per thread) peaks at 164 live = 128 + 36, not 128 + 64. A load that is also
# stored is held whole (acc += x with x * 2 stored: 72/142 at 32/64 per thread). On sm_100 (ptxas-blackwell) one
# accumulator keeps the window (one load 64/96/168, x * w 64/104 at 32/64 per thread, 200 at 128), but two
# independent accumulations hold all their loads (layernorm_bwd_dwdb, 64 fp32 per thread into dw and db: 254
# registers, 128 + 128), so there the window is left off for two or more accumulators. Micro kernels:
# tests/truth/accumulated_loads.py; counts in tests/analysis/test_register_rows.py.
LOAD_WINDOW_REGS = 32.0
_ACCUMULATE_CHAIN = (OpKind.ELEMENTWISE, OpKind.CAST)


def accumulated_loads(live: Liveness) -> list[tuple[tuple[int, ...], int]]:
    """Per loop, the loaded tiles of its body that reach only the loop's yielded (loop-carried) values through
    element-wise ops and casts in the same body (nothing else reads them or the chain): the ids of those loads
    and of the chain's values short of the yielded sum (a cast that took over a load's registers holds its data),
    with the number of loop-carried accumulators they feed."""
    where = {s.op.id: s.loops for s in live.steps if not s.is_end}
    users = readers(live)
    yielded: dict[int, set[int]] = {s.op.id: {c.yielded.id for c in s.op.carried}
                                    for s in live.steps if s.op.kind == OpKind.FOR and not s.is_end}
    unrolled = {s.op.id for s in live.steps if s.op.kind == OpKind.FOR and s.op.for_attrs().loop == "static_range"}
    groups: dict[int, tuple[list[int], set[int]]] = {}
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind != OpKind.LOAD or op.result is None or not op.result.shape or not step.loops:
            continue
        loop = step.loops[-1]
        if loop in unrolled:   # tl.static_range: Triton unrolls it, register_unroll.unrolled_loads counts its loads
            continue
        sums, chain = set(), []
        ok = True

        def reading(v: Value) -> list[Op]:
            # a yielded value is also the loop's result: its readers after the loop read the final sum
            return [u for u in users.get(v.id, []) if v.id not in yielded.get(loop, set()) or loop in where.get(u.id, ())]

        for v in bounded_walk((op.result,), lambda v: [u.result for u in reading(v)], bound=None):
            is_yielded = v.id in yielded.get(loop, set())
            if is_yielded:
                sums.add(v.id)
            else:
                chain.append(v.id)
            if (not reading(v) and not is_yielded) or any(
                    u.kind not in _ACCUMULATE_CHAIN or where.get(u.id) != step.loops or u.result is None
                    for u in reading(v)):
                ok = False
                break
        if ok and sums:
            group, fed = groups.setdefault(loop, ([], set()))
            group.extend(v for v in chain if v not in group)
            fed |= sums
    return [(tuple(g), len(fed)) for g, fed in groups.values()]


def window_accumulated_loads(live: Liveness, costs: dict[int, float], tensor_core: str, data_scale: float) -> None:
    """Cap the values of each in-loop accumulation (`accumulated_loads`) at LOAD_WINDOW_REGS together (in place;
    `costs` carry the register model's data_scale, so the window does too): each costs at most its share of the
    window among the group's values live at the same time."""
    window = LOAD_WINDOW_REGS * data_scale

    def span(vid: int) -> tuple[int, int]:
        start, end = live.intervals[vid]
        return start, max(end, start + 1)   # half-open, as liveness.occupies

    for group, accumulators in derived(live, Analysis.ACCUMULATED_LOADS.key(), lambda: accumulated_loads(live)):
        if MMA_FAMILIES[tensor_core].holds_accumulated_loads and accumulators > 1:
            continue
        before = {v: costs.get(v, 0.0) for v in group}
        for vid in group:
            start, end = span(vid)
            together = sum(before[w] for w in group if span(w)[0] < end and start < span(w)[1])
            if together > window:
                costs[vid] = before[vid] * window / together
