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
from dataclasses import dataclass
from typing import Any

from kernlint.analysis.liveness import Liveness, derived
from kernlint.analysis.register_access import element_wise_load_costs, vectorised_offset_costs
from kernlint.analysis.register_chained import chained_replication
from kernlint.analysis.register_constants import constant_tiles
from kernlint.analysis.register_inplace import stream_in_place
from kernlint.analysis.register_merges import through_merges_and_loops
from kernlint.analysis.register_offsets import non_affine_offset_costs, tma_descriptor_costs
from kernlint.analysis.register_elementwise import carry_streamed_data, streamed_values
from kernlint.analysis.register_delayed import delayable_loads, squeezed_demand
from kernlint.analysis.register_streams import reduction_tree, sink_loads, window_accumulated_loads
from kernlint.analysis.register_tmem import (deferred_row_sums, epilogue_registers, folded_accumulations,
                                             staged_async_operands)
from kernlint.analysis.register_unaligned import unaligned_pointer_costs
from kernlint.analysis.register_unroll import unrolled_loads
from kernlint.analysis.register_vectors import stream_short_accumulated_loads
from kernlint.analysis.register_widen import hold_widened_loads_narrow
from kernlint.analysis.placement import DotPlacement, mma_family, numel
from kernlint.hardware.specs import GpuSpec
from kernlint.ir.dtypes import PHILOX_RESULTS
from kernlint.ir.nodes import Value, element_bytes, is_pointer, pointee
from kernlint.ir.symbolic import as_int, shown


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


@dataclass(frozen=True, slots=True)
class LiveTile:
    name: str
    shape: str
    dtype: str
    registers: float
    line: int


@dataclass(frozen=True, slots=True)
class RegisterEstimate:
    demand: int                   # registers the live set asks for (may exceed the budget)
    allocated: int                # what ptxas would allocate: min(demand, budget) (see spill_collapse.py)
    budget: int                   # min(255, 65536 / threads), or maxnreg
    pressure: float               # demand / budget
    spill_bytes: int              # estimated bytes spilled per thread (0 when demand ≤ budget)
    peak_line: int
    peak_tiles: tuple[LiveTile, ...]  # largest contributors at the peak
    complete: bool
    data_regs: float = 0.0        # unscaled data-tile registers at the peak (for fitting the model)
    index_regs: float = 0.0       # address/offset/mask/scalar registers at the peak
    acc_regs: float = 0.0         # unscaled dot-accumulator registers at the peak
    serial_regs: float = 0.0      # registers of independent per-element chains at the peak (Philox rounds)


# How far over the budget recomputable addresses are squeezed away. Without a limit the held-out public
# kernels lost four true spills (fla chunk_precond_kda_bwd 300 vs 255 and liger _mhc_post_res_bwd 310-315:
# ptxas spilled 84-644 B) for two false ones fixed; within 10 % none of them changes.
REMAT_SQUEEZE = 0.1


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


def estimate_registers(live: Liveness, dots: list[DotPlacement], env: Mapping[str, Any], spec: GpuSpec,
                       num_warps: int, maxnreg: int | None, num_stages: int = 1, sink: bool = True) -> RegisterEstimate:
    family = mma_family(spec.tensor_core, num_warps)
    # A kernel whose dots fall back to mma.sync (16-warp sm_100) gets mma.sync's constants; without
    # tensor-core dots the target's own constants (they also carry its ptxas's habits)
    model = MODELS[family if any(not d.fma for d in dots) else spec.tensor_core]
    threads = 32 * num_warps
    in_smem = {v.id for d in dots if d.async_mma for v in (*d.pipelined_operands, *d.operand_views)}
    if spec.tensor_core == "tcgen05":
        in_smem |= staged_async_operands(live, dots)
    in_tmem = {d.op.result.id for d in dots if d.tmem_accumulator and d.op.result is not None}
    in_tmem |= folded_accumulations(live, in_tmem)
    in_tmem = through_merges_and_loops(live, in_tmem, env)  # if-merged and loop-carried copies stay in TMEM too
    costs: dict[int, float] = {}
    data: set[int] = set()
    loaded = {v.id for s in live.steps if s.op.kind in ("load", "atomic") and not s.is_end for v in s.op.all_results()}
    streamed = derived(live, "streamed values", lambda: streamed_values(live, loaded, env))
    accumulators = _accumulators(live, dots, env)
    acc: set[int] = set()
    complete = True
    for vid, value in live.values.items():
        if vid in in_smem or vid in in_tmem or vid in streamed:
            costs[vid] = 0.0
            continue
        if is_data(value, vid in loaded) or vid in accumulators:
            cost = tile_cost(value, env, threads, model, fragment=vid in accumulators)
            if vid in accumulators:
                acc.add(vid)
                if cost is not None:
                    cost *= model.acc_scale
            else:
                data.add(vid)
                if cost is not None:
                    cost *= model.data_scale
        else:
            cost = index_cost(value, env, threads, model)
        if cost is None:
            complete = False
            cost = 0.0
        costs[vid] = cost
    for vid in constant_tiles(live):
        costs[vid] = 0.0  # a one-trip loop's variable entering as a splat is the splat (register_constants.py)
    costs.update(vectorised_offset_costs(live, env, threads, costs, model.index_vector))
    costs.update({**non_affine_offset_costs(live, env, num_warps), **tma_descriptor_costs(live, spec.capability),
                  **unaligned_pointer_costs(live, env, threads)})
    # element-by-element addresses are rematerialised by ptxas when the budget is short (see remat below)
    remat: set[int] = set()
    for vid, cost in element_wise_load_costs(live, env, threads).items():
        if vid in costs and costs[vid] > 0.0:  # not held in shared memory or streamed
            costs[vid] = cost * (model.data_scale if vid in data else 1.0)
            if is_pointer(live.values[vid].dtype):
                remat.add(vid)
    for vid, factor in chained_replication(live, dots, env, num_warps, family).items():
        costs[vid] *= factor  # a short tile of a chained dot is copied across warps (register_chained.py)
    # the cap at a value's own tile was measured on dot-free kernels; next to chained dots a value's registers
    # include copies across warps that tile_cost does not count (tests/test_chained_dots.py)
    own_size = None if dots else (lambda v: (tile_cost(v, env, threads, model) or 0.0) * model.data_scale)
    carry_streamed_data(live, streamed, costs, own_size)
    hold_widened_loads_narrow(live, costs, loaded, env, num_warps)
    stream_in_place(live, costs, env, threads)
    sink_loads(live, costs, enabled=sink, capability=spec.capability, env=env, num_warps=num_warps)
    delayable = delayable_loads(live, costs, spec.capability) if sink else set()
    stream_short_accumulated_loads(live, costs, env, threads, spec.tensor_core)   # a few vectors: two in flight
    window_accumulated_loads(live, costs, spec.tensor_core, model.data_scale)
    _register_pipelined_loads(live, dots, env, num_stages, costs)
    for vid, copies in unrolled_loads(live, env, hoist_full_tiles=spec.capability >= 90).items():
        costs[vid] *= copies
    # Epilogue reads of a TMEM accumulator hold its fragment in registers at the reading op (register_tmem.py).
    tmem_read = epilogue_registers(live, in_tmem, env, threads,
                                   lambda v: tile_cost(v, env, threads, model, fragment=True) or 0.0)
    transient: dict[int, float] = {}
    philox: dict[int, float] = {}   # the Philox rounds' counter words (a serialisable part of `transient`)
    for i, step in enumerate(live.steps):
        if step.is_end or step.op.kind == "dot":
            continue
        transient[i] = transient.get(i, 0.0) + reduction_tree(live, i, costs)
        if step.op.kind == "elementwise" and step.op.attrs.get("fn") in PHILOX_RESULTS and step.op.result is not None:
            state = _philox_state(step.op.result, env, threads) * model.data_scale
            philox[i] = max(0.0, state - costs.get(step.op.result.id, 0.0))
            transient[i] = transient.get(i, 0.0) + philox[i]
    events: dict[int, float] = {}
    remat_events: dict[int, float] = {}
    delay_events: dict[int, float] = {}
    for vid, (a, b) in deferred_row_sums(live, dots, env, num_warps, spec.tensor_core).items():  # a 2nd copy of p
        events[a], events[b] = events.get(a, 0.0) + costs[vid], events.get(b, 0.0) - costs[vid]
    for vid, (start, end) in live.intervals.items():  # half-open, see liveness.occupies
        stop = end if end > start else start + 1
        extra = ((remat_events,) if vid in remat else ()) + ((delay_events,) if vid in delayable else ())
        for ev in (events, *extra):
            ev[start] = ev.get(start, 0.0) + costs[vid]
            ev[stop] = ev.get(stop, 0.0) - costs[vid]
    running, peak, peak_at, read_at_peak, running_remat, firm_peak = 0.0, 0.0, 0, 0.0, 0.0, 0.0
    running_delay, undelayed_peak = 0.0, 0.0
    for i in range(len(live.steps) + 1):
        running += events.get(i, 0.0)
        running_remat += remat_events.get(i, 0.0)
        running_delay += delay_events.get(i, 0.0)
        total = running + transient.get(i, 0.0) + tmem_read.get(i, 0.0)
        firm_peak = max(firm_peak, total - running_remat)
        undelayed_peak = max(undelayed_peak, total - running_delay)
        if total > peak:
            peak, peak_at, read_at_peak = total, i, total - running - transient.get(i, 0.0)
    demand = int(math.ceil(peak + model.base))
    budget = register_budget(spec, num_warps, maxnreg)
    if budget < demand <= budget * (1 + REMAT_SQUEEZE) and remat:
        # Recomputing an address (base + row offset + column offset) is cheaper than spilling it: a little
        # over the budget, ptxas squeezes to it while what cannot be recomputed fits. Measured (Triton 3.9,
        # sm_90, examples/persistent_matmul.py, B loaded element by element): 64x128x64 w4 241-245 registers,
        # no spill, where holding every address asks 261 (examples' sm_90 spill F1 0.87 -> 0.91).
        demand = max(budget, int(math.ceil(firm_peak + model.base)))
    if delayable:   # a looped sunk group's loads issued late (register_delayed.py)
        demand = squeezed_demand(demand, budget, math.ceil(undelayed_peak + model.base))
    at_peak = live.live_at(peak_at) if peak_at < len(live.steps) else []
    data_at_peak = sum(costs[v.id] for v in at_peak if v.id in data) + transient.get(peak_at, 0.0) + read_at_peak
    acc_at_peak = sum(costs[v.id] for v in at_peak if v.id in acc)
    if model.headroom_share and num_warps == 1 and not maxnreg and demand < ONE_WARP_TARGET:
        # ptxas sizes its register target by the block: with 32 threads an SM is capped at 32 CTAs = 1,024
        # threads, so 64 registers cost no occupancy and ptxas uses some of them. Measured (Triton 3.9
        # layernorm_kernel BLOCK 256 PTX, sm_90): `.reqntid 32` -> 53 registers, the same PTX with
        # `.reqntid 128` -> 32, neither spilling. How much it takes varies by kernel (softmax and vector add
        # stay tight, row loops grow 20-50 %); the share is fitted on sm_90 (examples within 20 % 87.2 ->
        # 88.3 %, suite 79.7 -> 81.6 %), where 1-warp compiles sit at 1.22x the estimate; on sm_80 / sm_100
        # (1.10-1.11x) the same share lowered the share within 20 %, so it is 0 there.
        demand = int(round(demand + model.headroom_share * (ONE_WARP_TARGET - demand)))
    allocated = min(demand, budget)
    spill = max(0, demand - budget) * 4
    tiles = sorted((LiveTile(v.name or "tile", "x".join(str(shown(d, env)) for d in v.shape) or "scalar", v.dtype,
                             costs[v.id], _def_line(live, v.id))
                    for v in live.live_at(peak_at) if costs[v.id] >= 1.0),
                   key=lambda t: -t.registers)[:8]
    peak_line = live.steps[peak_at].op.line if peak_at < len(live.steps) else 0
    return RegisterEstimate(demand, allocated, budget, demand / budget, spill, peak_line, tuple(tiles), complete,
                            data_at_peak / model.data_scale if model.data_scale else 0.0,
                            max(0.0, peak - data_at_peak - acc_at_peak), acc_at_peak / model.acc_scale if model.acc_scale else 0.0,
                            philox.get(peak_at, 0.0))


# Philox4x32 (triton/language/random.py, philox_impl): every element's four 32-bit counter words c0..c3 are
# updated together in each of the ten unrolled rounds, so while `tl.rand` is generated a thread holds four
# words per element (the seed's key pair is a shared scalar). Measured (Triton 3.9, sm_90, a kernel that only
# stores tl.rand(seed, offsets), 1 warp): 1/2/4/8/32 elements per thread -> 14/20/30/48/145 registers.
PHILOX_STATE_WORDS = 4


def _philox_state(value: Value, env: Mapping[str, Any], threads: int) -> float:
    size = numel(value, env)
    return PHILOX_STATE_WORDS * max(1, math.ceil(size / threads)) if size is not None else 0.0


def _accumulators(live: Liveness, dots: list[DotPlacement], env: Mapping[str, Any]) -> set[int]:
    """Dot results in registers and the if-merged and loop-carried values they flow through.

    An int32 accumulator (an 8-bit integer `tl.dot`) is an MMA fragment like an fp32 one: one register per
    element, not an affine index tile. Measured (Triton 3.9, ptxas 13.4, tests/test_pointer_inference.py
    INT8_GEMM 128×128×128 w8 s4, sm_90): 128 registers, 64 of them the [128, 128] i32 fragment; costed as an
    index tile (4 elements a register) the estimate was 54."""
    seeds = {d.op.result.id for d in dots if d.op.result is not None}
    for step in live.steps:  # `acc += tl.dot(a, b)` in int32: the sum is the fragment too
        op = step.op
        if not step.is_end and op.kind == "elementwise" and op.result is not None and op.result.shape \
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
    loop_stages = {s.op.id: s.op.attrs.get("num_stages") for s in live.steps if s.op.kind == "for" and not s.is_end}
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
