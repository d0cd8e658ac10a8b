"""Registers per thread from the live tiles at the peak program point.

Model (fitted to ptxas by benchmarks/fit_registers.py): every live tile costs its elements per thread (numel /
(32·num_warps), ≥ 1) times 32-bit words per element (fp16 ½, fp8 ¼, fp32/i32 1, fp64/i64 2). Address, offset and mask
tiles are vectorised by Triton's blocked layout, one register set per vector. Dot operands that the pipeliner sends to
shared memory cost nothing; on sm_100 the accumulator lives in tensor memory and only its epilogue copy costs
registers. A fixed per-architecture overhead covers thread indices, loop counters and scalar arguments. ptxas then caps
at min(255, 65536 / threads); above that it spills (a wgmma accumulator above maxnreg fails).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kernlint.analysis.liveness import Liveness, derived
from kernlint.analysis.passes import Constant, CostTable, Pass, Targets, families, run_passes
from kernlint.analysis.register_access import element_wise_load_costs, vectorised_offset_costs
from kernlint.analysis.register_chained import MMA_COLS_PER_WARP, MMA_ROWS_PER_WARP, chained_replication
from kernlint.analysis.register_constants import constant_tiles
from kernlint.analysis.register_inplace import IN_FLIGHT_BYTES, stream_in_place
from kernlint.analysis.register_math import MATH_TEMPORARIES, math_temporaries
from kernlint.analysis.register_merges import through_merges_and_loops
from kernlint.analysis.register_parallel import parallel_chain_demand, reduced_only, widened_16bit
from kernlint.analysis.register_offsets import non_affine_offset_costs, tma_descriptor_costs
from kernlint.analysis.register_elementwise import carry_streamed_data, streamed_values
from kernlint.analysis.register_delayed import delayable_loads, squeezed_demand
from kernlint.analysis.register_streams import (LOAD_WINDOW_REGS, ROW_TREE_PARTIALS, STREAM_WINDOW, SUNK_FULL_REGS,
                                                SUNK_MIN_REGS, TREE_SHARE, reduction_tree, sink_loads,
                                                window_accumulated_loads)
from kernlint.analysis.register_tmem import (CONVERT_DESTINATION_SHARE, FOLDED_READ_SHARE, TCGEN05_LD_MAX_WORDS,
                                             deferred_row_sums, epilogue_registers, folded_accumulations,
                                             staged_async_operands)
from kernlint.analysis.register_types import PHILOX_STATE_WORDS, LiveTile, RegisterEstimate
from kernlint.analysis.register_unaligned import unaligned_pointer_costs
from kernlint.analysis.register_unroll import unrolled_loads
from kernlint.analysis.register_vectors import IN_FLIGHT, ONE_BY_ONE_MAX, stream_short_accumulated_loads
from kernlint.analysis.register_widen import hold_widened_loads_narrow
from kernlint.analysis.placement import DotPlacement, mma_family, numel
from kernlint.analysis.spill_collapse import (COLLAPSE_RATIO, MMA_SYNC_16W_COLLAPSE_RATIO, PHILOX_SERIAL_LIMIT,
                                              REGISTER_GRANULE, apply_philox_serialisation, apply_spill_collapse)
from kernlint.hardware.specs import GpuSpec
from kernlint.ir.dtypes import PHILOX_RESULTS
from kernlint.ir.nodes import OpKind, Value, element_bytes, is_pointer, pointee
from kernlint.ir.symbolic import as_int, shown
from kernlint.ir.cache_keys import Analysis

__all__ = ["PHILOX_STATE_WORDS", "REGISTER_PASSES", "LiveTile", "RegisterEstimate", "RegisterState",
           "estimate_registers"]


@dataclass(frozen=True, slots=True)
class RegisterModel:
    """Per-architecture constants fitted to ptxas truth (fit script: benchmarks/fit_registers.py)."""
    base: float              # registers no tile accounts for (indices, predicates, scalar args)
    index_vector: int        # elements sharing one register for integer/mask tiles
    data_scale: float = 1.0  # registers per live data-tile word (fitted; ptxas keeps extra temporaries)
    acc_scale: float = 1.0   # the same for dot accumulators (an MMA fragment has no slack to stream)
    headroom_share: float = 0.0  # share of a 1-warp CTA's free registers (up to 64) ptxas spends anyway


# Fitted by benchmarks/fit_registers.py on benchmarks/truth/triton-3.9.json + suite-triton-3.9.json (Triton
# 3.9.0, ptxas 12.9/13.4, 1,194 records of 39 kernels; re-fitted after the Philox, static_range, loop-carried
# and element-by-element load rules, then the free-mask rule; wgmma keeps the fit before the mask rule, whose
# fit (base 8, acc 1.15) lowered the reference sm_90 spill F1 from 0.87 to 0.83); mma_sync = sm_80/89/120, wgmma = sm_90, tcgen05 = sm_100.
MODELS: dict[str, RegisterModel] = {
    "mma_sync": RegisterModel(base=6.0, index_vector=4, data_scale=1.1, acc_scale=1.25),
    "wgmma": RegisterModel(base=6.0, index_vector=4, data_scale=0.95, acc_scale=1.2, headroom_share=0.15),
    "tcgen05": RegisterModel(base=8.0, index_vector=4, data_scale=0.95, acc_scale=1.2),
}


def is_data(value: Value, produced_by_load: bool) -> bool:
    """Data tiles hold one value per element; index/address/mask tiles are affine in thread ids."""
    return bool(value.shape) and (produced_by_load or not (is_pointer(value.dtype)
                                                           or value.dtype.startswith(("i", "u"))))


# How far over the budget recomputable addresses are squeezed away. Without a limit the held-out public
# kernels lost four true spills (fla chunk_precond_kda_bwd 300 vs 255 and liger _mhc_post_res_bwd 310-315:
# ptxas spilled 84-644 B) for two false ones fixed; within 10 % none of them changes.
REMAT_SQUEEZE = 0.1


# registers no tile accounts for in a kernel without tensor-core dots, on every target ("dot-free base")
DOT_FREE_BASE = 6.0

ONE_WARP_TARGET = 64   # 65,536 registers / (32 CTAs x 32 threads): the most a 1-warp CTA can use at full residency


def register_budget(spec: GpuSpec, num_warps: int, maxnreg: int | None) -> int:
    threads = 32 * num_warps
    per_thread = spec.regs_per_sm // threads
    budget = min(spec.max_regs_per_thread, per_thread - per_thread % 8 if per_thread < 256 else 255)
    if maxnreg:
        budget = min(budget, maxnreg)
    return budget


def tile_cost(value: Value, env: Mapping[str, Any], threads: int, model: RegisterModel,
              fragment: bool = False) -> float | None:
    """Registers of one tile; `fragment`: an integer tile holding one value per element (an int32 dot
    accumulator), costed like data rather than as an affine index tile."""
    size = numel(value, env)
    if size is None:
        return None
    if not value.shape:
        return 2.0 if is_pointer(value.dtype) or element_bytes(value.dtype) == 8 else 1.0
    per_thread = max(1, math.ceil(size / threads))
    if is_pointer(value.dtype):
        if value.dtype.startswith(("blockptr<", "desc<")):
            return 2.0 * min(per_thread, 4)  # base + offsets, no per-element addresses
        vec = max(1, min(per_thread, int(16 // element_bytes(pointee(value.dtype)))))
        return 2.0 * math.ceil(per_thread / vec)
    if value.dtype == "i1":
        # A multi-vector mask holds no general registers: ptxas keeps the row and column predicates and
        # re-forms each vector's predicate at its access. Measured (Triton 3.9, sm_90, [BM, 128] fp32 copy,
        # masked `(rows < M) & (cols < N)` vs unmasked, 8/16/32 vectors per thread): 48/96/168 vs 48/94/168.
        return 0.0
    if value.dtype.startswith(("i", "u")) and not fragment:
        vec = max(1, min(per_thread, model.index_vector))
        return math.ceil(per_thread / vec) * max(1.0, element_bytes(value.dtype) / 4)
    return per_thread * element_bytes(value.dtype) / 4


def index_cost(value: Value, env: Mapping[str, Any], threads: int, model: RegisterModel) -> float | None:
    """Registers of an address/offset/mask tile.

    A 1-D tile built from `base + tl.arange` is one base register (pair) plus immediate offsets in each
    vector access; a 2-D tile needs one base per row a thread touches (rows differ by a runtime stride).
    """
    if len(value.shape) == 1:
        return 2.0 if is_pointer(value.dtype) or element_bytes(value.dtype) == 8 else 1.0
    return tile_cost(value, env, threads, model)


@dataclass(slots=True)
class RegisterState:
    """What the register passes (REGISTER_PASSES, below) read and build for one (kernel, config, target)."""
    live: Liveness
    dots: list[DotPlacement]
    env: Mapping[str, Any]
    spec: GpuSpec
    num_warps: int
    maxnreg: int | None
    num_stages: int
    sink: bool                    # False for Helion reductions (analysis/estimate.py)
    family: str                   # the dots' MMA family at this num_warps (placement.mma_family)
    model: RegisterModel
    threads: int
    loaded: set[int]              # results of loads and atomics
    costs: CostTable = field(default_factory=CostTable)
    in_smem: set[int] = field(default_factory=set)     # dot operands read from shared memory: no registers
    in_tmem: set[int] = field(default_factory=set)     # accumulators in tensor memory: no registers
    streamed: set[int] = field(default_factory=set)    # element-wise values that never exist whole
    data: set[int] = field(default_factory=set)        # data tiles (scaled by model.data_scale)
    acc: set[int] = field(default_factory=set)         # accumulators in registers (model.acc_scale)
    complete: bool = True
    remat: set[int] = field(default_factory=set)       # addresses ptxas may recompute instead of holding
    delayable: set[int] = field(default_factory=set)   # sunk loads ptxas may issue late
    transient: dict[int, float] = field(default_factory=dict)  # step → registers held only at that step
    philox: dict[int, float] = field(default_factory=dict)     # the part of `transient` that is Philox state
    tmem_read: dict[int, float] = field(default_factory=dict)  # step → landed TMEM fragments
    peak: float = 0.0
    peak_at: int = 0
    read_at_peak: float = 0.0
    firm_peak: float = 0.0        # the peak without the rematerialisable addresses
    undelayed_peak: float = 0.0   # the peak without the delayable loads
    demand: int = 0
    budget: int = 0
    estimate: RegisterEstimate | None = None
    disabled: frozenset[str] = frozenset()   # the passes this run leaves out (ablation), for re-estimates
    whole_view: bool = False      # every chain held whole, 16-bit results computed in fp32 (register_parallel.py)


def estimate_registers(live: Liveness, dots: list[DotPlacement], env: Mapping[str, Any], spec: GpuSpec,
                       num_warps: int, maxnreg: int | None, num_stages: int = 1, sink: bool = True,
                       disabled: frozenset[str] = frozenset(), whole_view: bool = False) -> RegisterEstimate:
    """Run REGISTER_PASSES in order (less the `disabled` ones, for ablation) and return the estimate.
    `whole_view`: the kernel as if every element chain were held whole (the parallel-chains pass's bound)."""
    family = mma_family(spec.tensor_core, num_warps)
    # A kernel whose dots fall back to mma.sync (16-warp sm_100) gets mma.sync's constants; without
    # tensor-core dots the target's own constants (they also carry its ptxas's habits)
    model = MODELS[family if any(not d.fma for d in dots) else spec.tensor_core]
    loaded = {v.id for s in live.steps if s.op.kind in (OpKind.LOAD, OpKind.ATOMIC) and not s.is_end for v in s.op.all_results()}
    state = RegisterState(live, dots, env, spec, num_warps, maxnreg, num_stages, sink, family, model,
                          32 * num_warps, loaded, disabled=disabled, whole_view=whole_view)
    run_passes(REGISTER_PASSES, state, spec, disabled)
    assert state.estimate is not None
    return state.estimate


def _philox_state(value: Value, env: Mapping[str, Any], threads: int) -> float:
    size = numel(value, env)
    return PHILOX_STATE_WORDS * max(1, math.ceil(size / threads)) if size is not None else 0.0


def _accumulators(live: Liveness, dots: list[DotPlacement], env: Mapping[str, Any]) -> set[int]:
    """Dot results in registers and the if-merged and loop-carried values they flow through.

    An int32 accumulator (an 8-bit integer `tl.dot`) is an MMA fragment like an fp32 one: one register per
    element, not an affine index tile. Measured (Triton 3.9, ptxas 13.4, tests/shared_sources.py
    INT8_GEMM 128×128×128 w8 s4, sm_90): 128 registers, 64 of them the [128, 128] i32 fragment; costed as an
    index tile (4 elements a register) the estimate was 54."""
    seeds = {d.op.result.id for d in dots if d.op.result is not None}
    for step in live.steps:  # `acc += tl.dot(a, b)` in int32: the sum is the fragment too
        op = step.op
        if not step.is_end and op.kind == OpKind.ELEMENTWISE and op.result is not None and op.result.shape \
                and op.result.dtype.startswith(("i", "u")) and any(o.id in seeds for o in op.operands):
            seeds.add(op.result.id)
    return through_merges_and_loops(live, seeds, env)


def _register_pipelined_loads(live: Liveness, dots: list[DotPlacement], env: Mapping[str, Any], num_stages: int,
                              costs: dict[int, float]) -> None:
    """An operand load the pipeliner keeps in registers (not a cp.async copy) is issued num_stages − 1
    iterations ahead, so that many copies of the tile are live. Measured (Triton 3.9, sm_80,
    bmm_descriptor_kernel, B reshaped from [1, BK, BN]; ttgir: num_stages − 1 `tt.load`s of B before the
    loop, carried through it): 64×128×32 w4 s5 → 205 registers, 64×64×64 w4 s4 → 168, vs 148 / 112 for
    one B tile (16 words/thread each: 4 resp. 3 in flight)."""
    loop_stages = {s.op.id: s.op.for_attrs().num_stages for s in live.steps if s.op.kind == OpKind.FOR and not s.is_end}
    for d in dots:
        if not d.register_pipelined or d.in_loop is None:
            continue
        explicit = loop_stages.get(d.in_loop)
        stages = as_int(explicit.evaluate(env)) if explicit is not None else None
        in_flight = max(1, (stages if stages is not None else num_stages) - 1)
        for value in d.register_pipelined:
            if value.id in costs and value not in d.element_loaded:  # isSmallLoad: not pipelined at all
                costs[value.id] *= in_flight


def _def_line(live: Liveness, vid: int) -> int:
    return live.steps[live.intervals[vid][0]].op.line


# --- The register model as an ordered pass list -------------------------------------------------------------
# Each mechanism below is one measured ptxas / Triton behaviour; the function that computes it lives in the
# module the pass names, with the measurement in its comments. Order matters: a pass sees the costs the
# passes before it left (the cost passes, then the live-set sweep, then the passes that adjust the demand,
# then the estimate and the passes that rewrite it).

def _async_operands(s: RegisterState) -> None:
    s.in_smem |= {v.id for d in s.dots if d.async_mma for v in (*d.pipelined_operands, *d.operand_views)}


def _staged_tcgen05_operands(s: RegisterState) -> None:
    s.in_smem |= staged_async_operands(s.live, s.dots)


def _tmem_accumulators(s: RegisterState) -> None:
    in_tmem = {d.op.result.id for d in s.dots if d.tmem_accumulator and d.op.result is not None}
    in_tmem |= folded_accumulations(s.live, in_tmem)
    s.in_tmem = through_merges_and_loops(s.live, in_tmem, s.env)  # if-merged and loop-carried copies stay too


def _streamed_values(s: RegisterState) -> None:
    s.streamed = derived(s.live, Analysis.STREAMED_VALUES.key(), lambda: streamed_values(s.live, s.loaded, s.env))
    if s.whole_view:   # only what a reduction consumes still streams into its partial sums
        s.streamed = reduced_only(s.live, s.streamed)


def _tile_costs(s: RegisterState) -> None:
    accumulators = _accumulators(s.live, s.dots, s.env)
    model, costs = s.model, s.costs
    widened = {st.op.result.id for st in s.live.steps if not st.is_end and st.op.result is not None
               and widened_16bit(st.op)} if s.whole_view else set()
    for vid, value in s.live.values.items():
        if vid in s.in_smem or vid in s.in_tmem or vid in s.streamed:
            costs.zero(vid)
            continue
        if is_data(value, vid in s.loaded) or vid in accumulators:
            cost = tile_cost(value, s.env, s.threads, model, fragment=vid in accumulators)
            if vid in accumulators:
                s.acc.add(vid)
                if cost is not None:
                    cost *= model.acc_scale
            else:
                s.data.add(vid)
                if cost is not None:
                    cost *= model.data_scale
        else:
            cost = index_cost(value, s.env, s.threads, model)
        if cost is None:
            s.complete = False
            cost = 0.0
        elif s.whole_view and vid in widened:
            cost *= 2.0   # computed in fp32, converted back after
        costs.set(vid, cost)


def _constant_splats(s: RegisterState) -> None:
    for vid in constant_tiles(s.live):
        s.costs.zero(vid)


def _vectorised_offsets(s: RegisterState) -> None:
    s.costs.set_all(vectorised_offset_costs(s.live, s.env, s.threads, s.costs, s.model.index_vector))


def _non_affine_offsets(s: RegisterState) -> None:
    s.costs.set_all(non_affine_offset_costs(s.live, s.env, s.num_warps))


def _tma_descriptors(s: RegisterState) -> None:
    s.costs.set_all(tma_descriptor_costs(s.live, s.spec.has_tma))


def _unaligned_pointers(s: RegisterState) -> None:
    s.costs.set_all(unaligned_pointer_costs(s.live, s.env, s.threads))


def _element_wise_loads(s: RegisterState) -> None:
    # element-by-element addresses are rematerialised by ptxas when the budget is short ("address
    # rematerialisation" below)
    for vid, cost in element_wise_load_costs(s.live, s.env, s.threads).items():
        if vid in s.costs and s.costs[vid] > 0.0:  # not held in shared memory or streamed
            s.costs.set(vid, cost * (s.model.data_scale if vid in s.data else 1.0))
            if is_pointer(s.live.values[vid].dtype):
                s.remat.add(vid)


def _chained_dots(s: RegisterState) -> None:
    for vid, factor in chained_replication(s.live, s.dots, s.env, s.num_warps, s.family).items():
        s.costs.scale(vid, factor)


def _carried_streams(s: RegisterState) -> None:
    # the cap at a value's own tile was measured on dot-free kernels; next to chained dots a value's registers
    # include copies across warps that tile_cost does not count (tests/analysis/test_chained_dots.py)
    env, threads, model = s.env, s.threads, s.model
    own_size = None if s.dots else (lambda v: (tile_cost(v, env, threads, model) or 0.0) * model.data_scale)
    carry_streamed_data(s.live, s.streamed, s.costs, own_size)


def _widened_loads(s: RegisterState) -> None:
    hold_widened_loads_narrow(s.live, s.costs, s.loaded, s.env, s.num_warps)


def _in_place_streams(s: RegisterState) -> None:
    stream_in_place(s.live, s.costs, s.env, s.threads)


def _sunk_loads(s: RegisterState) -> None:
    sink_loads(s.live, s.costs, enabled=s.sink, streams_2d=s.spec.streams_2d_reductions, env=s.env, num_warps=s.num_warps)


def _delayed_loads(s: RegisterState) -> None:
    if s.sink:
        s.delayable = delayable_loads(s.live, s.costs)


def _short_accumulated_loads(s: RegisterState) -> None:
    stream_short_accumulated_loads(s.live, s.costs, s.env, s.threads, s.spec.tensor_core)


def _windowed_accumulated_loads(s: RegisterState) -> None:
    window_accumulated_loads(s.live, s.costs, s.spec.tensor_core, s.model.data_scale)


def _pipelined_operand_loads(s: RegisterState) -> None:
    _register_pipelined_loads(s.live, s.dots, s.env, s.num_stages, s.costs)


def _unrolled_loads(s: RegisterState) -> None:
    for vid, copies in unrolled_loads(s.live, s.env, hoist_full_tiles=s.spec.hoists_unrolled_tiles).items():
        s.costs.scale(vid, copies)


def _tmem_epilogue(s: RegisterState) -> None:
    env, threads, model = s.env, s.threads, s.model
    s.tmem_read = epilogue_registers(s.live, s.in_tmem, env, threads,
                                     lambda v: tile_cost(v, env, threads, model, fragment=True) or 0.0)


def _reduction_trees(s: RegisterState) -> None:
    for i, step in enumerate(s.live.steps):
        if step.is_end or step.op.kind == OpKind.DOT:
            continue
        s.transient[i] = s.transient.get(i, 0.0) + reduction_tree(s.live, i, s.costs)


def _philox(s: RegisterState) -> None:
    for i, step in enumerate(s.live.steps):
        if step.is_end or step.op.kind != OpKind.ELEMENTWISE or step.op.fn not in PHILOX_RESULTS \
                or step.op.result is None:
            continue
        state = _philox_state(step.op.result, s.env, s.threads) * s.model.data_scale
        s.philox[i] = max(0.0, state - s.costs.get(step.op.result.id, 0.0))
        s.transient[i] = s.transient.get(i, 0.0) + s.philox[i]


def _math_temporaries(s: RegisterState) -> None:
    for i, extra in math_temporaries(s.live).items():
        s.transient[i] = s.transient.get(i, 0.0) + extra


def _deferred_row_sums(s: RegisterState) -> None:
    for vid, (a, b) in deferred_row_sums(s.live, s.dots, s.env, s.num_warps, s.spec.tensor_core).items():
        s.costs.add_event(a, s.costs[vid])    # a second copy of p
        s.costs.add_event(b, -s.costs[vid])


def _dot_free_base(s: RegisterState) -> None:
    if not any(not d.fma for d in s.dots) and s.model.base > DOT_FREE_BASE:
        s.model = replace(s.model, base=DOT_FREE_BASE)


def _live_set_peak(s: RegisterState) -> None:
    costs, live = s.costs, s.live
    events = costs.events
    remat_events: dict[int, float] = {}
    delay_events: dict[int, float] = {}
    for vid, (start, end) in live.intervals.items():  # half-open, see liveness.occupies
        stop = end if end > start else start + 1
        extra = ((remat_events,) if vid in s.remat else ()) + ((delay_events,) if vid in s.delayable else ())
        for ev in (events, *extra):
            ev[start] = ev.get(start, 0.0) + costs[vid]
            ev[stop] = ev.get(stop, 0.0) - costs[vid]
    running, peak, peak_at, read_at_peak, running_remat, firm_peak = 0.0, 0.0, 0, 0.0, 0.0, 0.0
    running_delay, undelayed_peak = 0.0, 0.0
    transient, tmem_read = s.transient, s.tmem_read
    for i in range(len(live.steps) + 1):
        running += events.get(i, 0.0)
        running_remat += remat_events.get(i, 0.0)
        running_delay += delay_events.get(i, 0.0)
        total = running + transient.get(i, 0.0) + tmem_read.get(i, 0.0)
        firm_peak = max(firm_peak, total - running_remat)
        undelayed_peak = max(undelayed_peak, total - running_delay)
        if total > peak:
            peak, peak_at, read_at_peak = total, i, total - running - transient.get(i, 0.0)
    s.peak, s.peak_at, s.read_at_peak, s.firm_peak, s.undelayed_peak = (peak, peak_at, read_at_peak, firm_peak,
                                                                        undelayed_peak)
    s.demand = int(math.ceil(peak + s.model.base))
    s.budget = register_budget(s.spec, s.num_warps, s.maxnreg)


def _address_remat(s: RegisterState) -> None:
    if s.budget < s.demand <= s.budget * (1 + REMAT_SQUEEZE) and s.remat:
        # Recomputing an address (base + row offset + column offset) is cheaper than spilling it: a little
        # over the budget, ptxas squeezes to it while what cannot be recomputed fits. Measured (Triton 3.9,
        # sm_90, examples/persistent_matmul.py, B loaded element by element): 64x128x64 w4 241-245 registers,
        # no spill, where holding every address asks 261 (examples' sm_90 spill F1 0.87 -> 0.91).
        s.demand = max(s.budget, int(math.ceil(s.firm_peak + s.model.base)))


def _occupancy_remat(s: RegisterState) -> None:
    if not s.remat or s.maxnreg or s.demand > s.budget:
        return   # over the budget: address rematerialisation above
    if any(st.op.kind == OpKind.FOR for st in s.live.steps):
        # in a loop the addresses advance trip by trip and are kept (the development suite's
        # persistent_matmul with B loaded element by element: 27 of 29 configs further from ptxas)
        return
    # straight-line code: ptxas recomputes element-by-element addresses next to their loads rather than give
    # up the occupancy the rest of the live set allows
    step = s.spec.same_occupancy_registers(s.threads, int(math.ceil(s.firm_peak + s.model.base)))
    s.demand = min(s.demand, step)


def _delayed_load_squeeze(s: RegisterState) -> None:
    if s.delayable:   # a looped sunk group's loads issued late (register_delayed.py)
        s.demand = squeezed_demand(s.demand, s.budget, math.ceil(s.undelayed_peak + s.model.base))


def _parallel_chains(s: RegisterState) -> None:
    if not s.streamed or s.maxnreg or s.num_warps == 1:
        return   # 1 warp: the one-warp headroom pass prices the free registers
    target = s.spec.full_occupancy_registers(s.threads)
    if s.demand >= target:
        return
    # the same kernel with every streamed chain held whole (this pass and the streaming left out)
    whole = estimate_registers(s.live, s.dots, s.env, s.spec, s.num_warps, s.maxnreg, s.num_stages, s.sink,
                               s.disabled | {_PARALLEL}, whole_view=True).demand
    s.demand = parallel_chain_demand(s.demand, whole, target)


def _one_warp_headroom(s: RegisterState) -> None:
    model = s.model
    if model.headroom_share and s.num_warps == 1 and not s.maxnreg and s.demand < ONE_WARP_TARGET:
        # ptxas sizes its register target by the block: with 32 threads an SM is capped at 32 CTAs = 1,024
        # threads, so 64 registers cost no occupancy and ptxas uses some of them. Measured (Triton 3.9
        # layernorm_kernel BLOCK 256 PTX, sm_90): `.reqntid 32` -> 53 registers, the same PTX with
        # `.reqntid 128` -> 32, neither spilling. How much it takes varies by kernel (softmax and vector add
        # stay tight, row loops grow 20-50 %); the share is fitted on sm_90 (examples within 20 % 87.2 ->
        # 88.3 %, suite 79.7 -> 81.6 %), where 1-warp compiles sit at 1.22x the estimate; on sm_80 / sm_100
        # (1.10-1.11x) the same share lowered the share within 20 %, so it is 0 there.
        s.demand = int(round(s.demand + model.headroom_share * (ONE_WARP_TARGET - s.demand)))


def _register_estimate(s: RegisterState) -> None:
    live, costs, model, demand, budget, peak_at = s.live, s.costs, s.model, s.demand, s.budget, s.peak_at
    at_peak = live.live_at(peak_at) if peak_at < len(live.steps) else []
    data_at_peak = sum(costs[v.id] for v in at_peak if v.id in s.data) + s.transient.get(peak_at, 0.0) \
        + s.read_at_peak
    acc_at_peak = sum(costs[v.id] for v in at_peak if v.id in s.acc)
    allocated = min(demand, budget)
    spill = max(0, demand - budget) * 4
    tiles = sorted((LiveTile(v.name or "tile", "x".join(str(shown(d, s.env)) for d in v.shape) or "scalar",
                             v.dtype, costs[v.id], _def_line(live, v.id))
                    for v in live.live_at(peak_at) if costs[v.id] >= 1.0),
                   key=lambda t: -t.registers)[:8]
    peak_line = live.steps[peak_at].op.line if peak_at < len(live.steps) else 0
    s.estimate = RegisterEstimate(demand, allocated, budget, demand / budget, spill, peak_line, tuple(tiles),
                                  s.complete, data_at_peak / model.data_scale if model.data_scale else 0.0,
                                  max(0.0, s.peak - data_at_peak - acc_at_peak),
                                  acc_at_peak / model.acc_scale if model.acc_scale else 0.0,
                                  s.philox.get(peak_at, 0.0))


def _philox_serialisation(s: RegisterState) -> None:
    assert s.estimate is not None
    s.estimate = apply_philox_serialisation(s.estimate, s.spec, s.num_warps, s.maxnreg)


def _spill_collapse(s: RegisterState) -> None:
    # far over the budget ptxas compiles for full occupancy (32 registers) instead
    assert s.estimate is not None
    s.estimate = apply_spill_collapse(s.estimate, s.dots, s.spec, s.num_warps, s.maxnreg)


_FAMILIES = ("mma_sync", "wgmma", "tcgen05")
_STREAMED = "streamed element-wise values"
_PARALLEL = "parallel element chains"
_FITTED = "benchmarks/fit_registers.py on benchmarks/truth/triton-3.9.json + suite-triton-3.9.json"

REGISTER_PASSES: tuple[Pass[RegisterState], ...] = (
    Pass("async operands in shared memory",
         "wgmma / tcgen05 dot operands the pipeliner copies to shared memory hold no registers",
         _async_operands, "placement", families("wgmma", "tcgen05")),
    Pass("staged tcgen05 operands",
         "a register-loaded tcgen05 operand staged through shared memory once per k-step holds no registers",
         _staged_tcgen05_operands, "register_tmem", families("tcgen05")),
    Pass("accumulators in tensor memory",
         "a tcgen05 accumulator (and its folded sums, merges and loop copies) lives in tensor memory",
         _tmem_accumulators, "register_tmem", families("tcgen05")),
    Pass(_STREAMED,
         "a single-use element-wise intermediate is computed element by element, never whole",
         _streamed_values, "register_elementwise"),
    Pass("tile costs",
         "every live tile costs its elements per thread × 32-bit words, scaled by the fitted data / accumulator "
         "factors; address, offset and mask tiles one register set per vector",
         _tile_costs, "registers", essential=True,
         constants=(Constant("base", tuple(MODELS[f].base for f in _FAMILIES), "registers (mma_sync, wgmma, "
                             "tcgen05), added at the peak", _FITTED,
                             gate="tests/analysis/test_truth.py::test_development_set_gates"),
                    Constant("data_scale", tuple(MODELS[f].data_scale for f in _FAMILIES), "× data-tile words",
                             _FITTED,
                             gate="tests/analysis/test_truth.py::test_matmul_registers_within_20_percent_on_sm90_when_not_spilling"),
                    Constant("acc_scale", tuple(MODELS[f].acc_scale for f in _FAMILIES), "× accumulator words",
                             _FITTED,
                             gate="tests/analysis/test_truth.py::test_matmul_registers_within_20_percent_on_sm90_when_not_spilling"),
                    Constant("index_vector", tuple(MODELS[f].index_vector for f in _FAMILIES),
                             "elements per register of an index tile", _FITTED,
                             gate="tests/analysis/test_truth.py::test_development_set_gates"))),
    Pass("one-trip constant splats",
         "the variable of a one-trip loop entering as a splat is folded into its readers: no tile",
         _constant_splats, "register_constants"),
    Pass("vectorised offsets",
         "an int64 offset tile of a vectorised access holds one offset per vector", _vectorised_offsets,
         "register_access"),
    Pass("non-affine offsets",
         "a 1-D offset vector that is not affine in the thread index (clamped) holds one register per element",
         _non_affine_offsets, "register_offsets"),
    Pass("TMA descriptors",
         "a tensor descriptor's registers on TMA targets", _tma_descriptors, "register_offsets",
         Targets(needs=("has_tma",))),
    Pass("unaligned pointers",
         "addresses built from a pointer loaded at run time are not vectorised: one 64-bit address per element",
         _unaligned_pointers, "register_unaligned"),
    Pass("element-by-element loads",
         "a load whose pointers are not contiguous holds one address and one register per element",
         _element_wise_loads, "register_access"),
    Pass("chained-dot replication",
         "a short tile of a chained dot (attention's p) is replicated across the warps along M",
         _chained_dots, "register_chained",
         constants=(Constant("MMA_ROWS_PER_WARP", MMA_ROWS_PER_WARP, "rows", "m16 of mma.sync (PTX ISA)",
                             gate="tests/analysis/test_chained_dots.py::test_short_attention_tile_is_replicated_on_sm90"),
                    Constant("MMA_COLS_PER_WARP", MMA_COLS_PER_WARP, "columns", "n8 of mma.sync (PTX ISA)",
                             gate="tests/analysis/test_chained_dots.py::test_mma_sync_puts_the_warps_along_the_longer_side"))),
    Pass("streamed data carried",
         "a streamed sum holds at most the registers of the operands it replaces", _carried_streams,
         "register_elementwise"),
    Pass("widened loads held narrow",
         "a widened load reduced row by row keeps its narrow form", _widened_loads, "register_widen"),
    Pass("in-place streams",
         "an in-place element-wise update ptxas streams vector by vector (disjoint static offsets)",
         _in_place_streams, "register_inplace",
         constants=(Constant("IN_FLIGHT_BYTES", IN_FLIGHT_BYTES, "bytes per thread",
                             "Triton 3.9 sm_90 suite rope_bwd_inplace_kernel SASS: two 16-B vectors "
                             "loaded while the previous are stored",
                             gate="tests/analysis/test_register_inplace.py::test_rope_registers_follow_ptxas_as_the_tile_grows"),)),
    Pass("sunk loads",
         "loads meeting only in an element-wise chain to one store are sunk towards their use; loads streamed "
         "into a reduction keep a window and the partial sums",
         _sunk_loads, "register_streams",
         constants=(Constant("SUNK_MIN_REGS", SUNK_MIN_REGS, "registers", "micro kernels at ≤ 8 fp32 per thread",
                             gate="tests/analysis/test_register_streams.py::test_sunk_loads_within_15_percent_of_ptxas"),
                    Constant("SUNK_FULL_REGS", SUNK_FULL_REGS, "registers", "micro kernels: a tile this large is "
                             "held whole",
                             gate="tests/analysis/test_register_streams.py::test_sunk_loads_within_15_percent_of_ptxas"),
                    Constant("STREAM_WINDOW", STREAM_WINDOW, "registers", "tests/truth/reduced_streams.py, "
                             "Triton 3.9 sm_90: 55 = 32 partials + 16 + 7",
                             gate="tests/analysis/test_reduced_streams.py::test_streamed_into_a_reduction_within_20_percent_on_sm90"),
                    Constant("ROW_TREE_PARTIALS", ROW_TREE_PARTIALS, "registers", "tests/truth/reduced_streams.py: "
                             "x·x over 64 fp32 per thread takes 32",
                             gate="tests/analysis/test_reduced_streams.py::test_streamed_into_a_reduction_within_20_percent_on_sm90"))),
    Pass("delayed loads",
         "on sm_80 / sm_100 ptxas issues a looped sunk group's loads late to fit the budget (set found here, "
         "squeezed below)", _delayed_loads, "register_delayed", Targets(needs=("delays_sunk_loads",))),
    Pass("short accumulated loads",
         "an in-loop accumulation of a short loaded row keeps about two 16-byte vectors in flight",
         _short_accumulated_loads, "register_vectors",
         constants=(Constant("IN_FLIGHT", IN_FLIGHT, "vectors", "rmsnorm / layernorm at 32 warps, Triton 3.9 "
                             "(register_vectors.py)",
                             gate="tests/analysis/test_register_vectors.py::test_short_rows_within_20_percent_on_sm90_and_sm100"),
                    Constant("ONE_BY_ONE_MAX", ONE_BY_ONE_MAX, "vectors", "measured at 4; at 8 ptxas issues in "
                             "pairs",
                             gate="tests/analysis/test_register_vectors.py::test_eight_vectors_keep_the_window_rule"))),
    Pass("windowed accumulated loads",
         "an in-loop accumulation holds a window of its loads, not the whole tiles",
         _windowed_accumulated_loads, "register_streams",
         constants=(Constant("LOAD_WINDOW_REGS", LOAD_WINDOW_REGS, "registers", "tests/truth/accumulated_loads.py, "
                             "Triton 3.9 sm_80/sm_90 1 warp: 64/96/168 at 32/64/128 elements per thread",
                             gate="tests/analysis/test_register_rows.py::test_windowed_row_accumulations_within_20_percent_of_ptxas"),)),
    Pass("register-pipelined operand loads",
         "an operand load the pipeliner keeps in registers is issued num_stages − 1 iterations ahead",
         _pipelined_operand_loads, "registers"),
    Pass("unrolled loads",
         "a fully unrolled tl.static_range loop puts its loads' copies in flight at once", _unrolled_loads,
         "register_unroll"),
    Pass("TMEM epilogue reads",
         "a tcgen05.ld lands a TMEM fragment whole in registers at the reading op (with its row vectors and "
         "store conversion)", _tmem_epilogue, "register_tmem", families("tcgen05"),
         constants=(Constant("TCGEN05_LD_MAX_WORDS", TCGEN05_LD_MAX_WORDS, "registers", "the widest tcgen05.ld "
                             "(.32x32b.x128, PTX ISA)",
                             gate="tests/analysis/test_dot_operand_registers.py::test_large_tmem_fragment_is_narrowed_piece_by_piece"),
                    Constant("FOLDED_READ_SHARE", FOLDED_READ_SHARE, "share", "fitted tcgen05 epilogue share "
                             "(register_tmem.py)",
                             gate="tests/analysis/test_dot_operand_registers.py::test_tmem_epilogue_holds_the_landed_fragment"),
                    Constant("CONVERT_DESTINATION_SHARE", CONVERT_DESTINATION_SHARE, "share", "sm_100 fp32 "
                             "epilogue stores, Triton 3.9: source + 0.75-0.78 × destination",
                             gate="tests/analysis/test_dot_operand_registers.py::test_large_tmem_fragment_is_narrowed_piece_by_piece"))),
    Pass("reduction trees",
         "a reduction of a tile read again keeps its partial-sum tree beside the tile; a scan keeps "
         "the inputs it reads while writing", _reduction_trees,
         "register_streams",
         constants=(Constant("TREE_SHARE", TREE_SHARE, "× the reduced tile", "Triton 3.9 sm_90 examples/softmax.py fp32, "
                             "16-128 elements per thread: 4-33 registers above the model without it",
                             gate="tests/analysis/test_register_streams.py::test_reduction_tree_of_a_tile_read_again_softmax"),)),
    Pass("Philox state",
         "tl.rand holds four 32-bit counter words per element through its ten rounds", _philox, "registers",
         constants=(Constant("PHILOX_STATE_WORDS", PHILOX_STATE_WORDS, "words per element", "Triton 3.9 sm_90, "
                             "tl.rand only, 1 warp: 1/2/4/8/32 elements -> 14/20/30/48/145 registers",
                             gate="tests/analysis/test_philox_serialisation.py::test_rand_only_probes"),)),
    Pass("math temporaries",
         "an accurate libdevice call (sin, cos, log, tanh, erf, pow, erfinv, acosh) holds its own temporaries "
         "at the call, whatever the tile size", _math_temporaries, "register_math",
         constants=(Constant("MATH_TEMPORARIES", tuple(float(v) for v in MATH_TEMPORARIES.values()),
                             "registers per call (" + ", ".join(MATH_TEMPORARIES) + ")",
                             "tests/truth/math_calls.py, Triton 3.9 sm_90/sm_100, 4 warps, fp32, 1/4/16 "
                             "elements a thread: median excess over the same kernel without the call",
                             gate="tests/analysis/test_register_math.py::test_math_calls_within_a_fifth_of_ptxas"),)),
    Pass("deferred row sums",
         "a tcgen05 row sum of p deferred past the second dot keeps a second copy of p",
         _deferred_row_sums, "register_tmem", families("tcgen05")),
    Pass("dot-free base",
         "without tensor-core dots ptxas 13 (sm_100) allocates like ptxas 12 (sm_90): the same base registers",
         _dot_free_base, "registers",
         constants=(Constant("DOT_FREE_BASE", DOT_FREE_BASE, "registers", "the corpus truth "
                             "(benchmarks/truth/corpus): sm_100 and sm_90 compiles of the same config differ by a "
                             "median 0 registers (equal in 373 of 620), where the fitted tcgen05 base was 2 above "
                             "wgmma's; sm_100 median error 21.7 -> 18.8 % (packages A) and 19.7 -> 15.9 % (B)",
                             gate="tests/analysis/test_register_parallel.py::test_dot_free_kernels_share_the_base"),)),
    Pass("live-set peak",
         "sweep the live intervals; the peak plus the fitted base is the demand, against the budget "
         "min(255, 65536 / threads) or maxnreg",
         _live_set_peak, "registers", essential=True),
    Pass("address rematerialisation",
         "a little over the budget ptxas recomputes element-by-element addresses instead of spilling them",
         _address_remat, "registers",
         constants=(Constant("REMAT_SQUEEZE", REMAT_SQUEEZE, "share of the budget", "held-out public kernels: "
                             "fla chunk_precond_kda_bwd and liger _mhc_post_res_bwd spill beyond it",
                             gate="tests/analysis/test_register_remat.py::test_addresses_are_recomputed_instead_of_spilled"),)),
    Pass("addresses recomputed for occupancy",
         "below the budget, in straight-line code, ptxas recomputes element-by-element addresses rather than "
         "hold them past the occupancy step the rest of the live set reaches", _occupancy_remat, "registers"),
    Pass("delayed-load squeeze",
         "the demand of a kernel with delayable loads squeezed towards the budget", _delayed_load_squeeze,
         "register_delayed", Targets(needs=("delays_sunk_loads",))),
    Pass(_PARALLEL,
         "below the full-occupancy registers ptxas computes several elements' chains side by side: the demand "
         "rises towards that of the chains held whole", _parallel_chains, "register_parallel",
         constants=(Constant("full-occupancy registers", 32, "registers", "GpuSpec.full_occupancy_registers: "
                             "65,536 / 2,048 threads for 2-32 warps on sm_80-sm_100 [CUDA-CC]",
                             gate="tests/analysis/test_register_parallel.py::test_no_higher_than_full_occupancy"),)),
    Pass("one-warp headroom",
         "with 1 warp ptxas spends part of the registers that cost no occupancy", _one_warp_headroom,
         "registers", families("wgmma"),
         constants=(Constant("ONE_WARP_TARGET", ONE_WARP_TARGET, "registers", "65,536 / (32 CTAs × 32 threads)",
                             gate="tests/analysis/test_register_headroom.py::test_one_warp_target_is_the_full_residency_count"),
                    Constant("headroom_share", MODELS["wgmma"].headroom_share, "share", "fitted on sm_90: "
                             "layernorm_kernel .reqntid 32 -> 53 registers, 128 -> 32",
                             gate="tests/analysis/test_register_headroom.py::test_one_warp_estimates_follow_ptxas_on_sm90"))),
    Pass("register estimate",
         "allocated = min(demand, budget); spill bytes from the excess; the largest tiles at the peak",
         _register_estimate, "registers", essential=True),
    Pass("Philox serialisation",
         "ptxas 13 runs independent Philox chains one after another when that reaches full occupancy",
         _philox_serialisation, "spill_collapse", Targets(needs=("serialises_philox",)),
         constants=(Constant("PHILOX_SERIAL_LIMIT", PHILOX_SERIAL_LIMIT, "× full-occupancy registers",
                             "Triton 3.9 tl.rand kernels, 2-8 warps, sm_90/sm_100: serialised up to 1.56, kept "
                             "at 2.19",
                             gate="tests/analysis/test_philox_serialisation.py::test_rand_only_probes"),)),
    Pass("spill collapse",
         "far over the budget ptxas allocates for full occupancy and sends the rest to local memory",
         _spill_collapse, "spill_collapse",
         constants=(Constant("COLLAPSE_RATIO", COLLAPSE_RATIO, "demand / budget", "development suite: collapsed in "
                             "11 of 16 records at 1.75-2, 6 of 16 at 1.5-1.75",
                             gate="tests/analysis/test_spill_collapse.py::test_collapse_predictions_are_mostly_right_on_the_truth_files"),
                    Constant("MMA_SYNC_16W_COLLAPSE_RATIO", MMA_SYNC_16W_COLLAPSE_RATIO, "demand / budget",
                             "benchmarks/probe_register_collapse.py at 16 warps: 6×32 words collapse, 5×32 keep "
                             "128",
                             gate="tests/analysis/test_spill_collapse.py::test_sixteen_warp_mma_sync_dot_kernels_collapse_far_over_their_budget"),
                    Constant("REGISTER_GRANULE", REGISTER_GRANULE, "registers", "ptxas allocates in multiples "
                             "of 8 below 255",
                             gate="tests/analysis/test_spill_collapse.py::test_collapsed_straight_line_kernels_get_ptxas_registers_and_still_spill"))),
)
