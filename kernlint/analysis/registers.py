"""Registers per thread from the live tiles at the peak program point.

Model (calibrated against ptxas, see benchmarks/fit_registers.py and tests/test_truth_reference.py):
every live tile costs its elements per thread (numel / (32 · num_warps), at least 1) times 32-bit words per
element (fp16 = ½, fp8 = ¼, fp32/i32 = 1, fp64/i64 = 2). Address, offset and mask tiles are
vectorised by Triton's blocked layout (16-byte accesses), so only one register set per vector survives.
Dot operands that the pipeliner sends to shared memory cost nothing; on sm_100 the accumulator lives in
tensor memory and only its epilogue copy costs registers. A fixed per-architecture overhead covers thread
indices, loop counters and scalar arguments. ptxas then caps at min(255, 65536 / threads); above that it
spills (or, for wgmma accumulators, fails when maxnreg is below the fragment).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kernlint.analysis.liveness import Liveness
from kernlint.analysis.placement import DotPlacement, numel
from kernlint.hardware.specs import GpuSpec
from kernlint.ir.nodes import Value, element_bytes, is_pointer, pointee


@dataclass(frozen=True, slots=True)
class RegisterModel:
    """Per-architecture constants fitted to ptxas truth (fit script: benchmarks/fit_registers.py)."""

    base: float              # registers no tile accounts for (indices, predicates, scalar args)
    index_vector: int        # elements sharing one register for integer/mask tiles
    tmem_epilogue: float     # share of a TMEM accumulator held in registers by the epilogue (sm_100)


MODELS: dict[str, RegisterModel] = {
    "mma_sync": RegisterModel(base=20.0, index_vector=4, tmem_epilogue=1.0),
    "wgmma": RegisterModel(base=20.0, index_vector=4, tmem_epilogue=1.0),
    "tcgen05": RegisterModel(base=18.0, index_vector=4, tmem_epilogue=0.75),
}


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
    allocated: int                # what ptxas would allocate: min(demand, budget)
    budget: int                   # min(255, 65536 / threads), or maxnreg
    pressure: float               # demand / budget
    spill_bytes: int              # estimated bytes spilled per thread (0 when demand ≤ budget)
    peak_line: int
    peak_tiles: tuple[LiveTile, ...]  # largest contributors at the peak
    complete: bool


def register_budget(spec: GpuSpec, num_warps: int, maxnreg: int | None) -> int:
    threads = 32 * num_warps
    per_thread = spec.regs_per_sm // threads
    budget = min(spec.max_regs_per_thread, per_thread - per_thread % 8 if per_thread < 256 else 255)
    if maxnreg:
        budget = min(budget, maxnreg)
    return budget


def tile_cost(value: Value, env: Mapping[str, Any], threads: int, model: RegisterModel) -> float | None:
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
    if value.dtype.startswith(("i", "u")):
        vec = max(1, min(per_thread, model.index_vector))
        return math.ceil(per_thread / vec) * max(1.0, element_bytes(value.dtype) / 4)
    return per_thread * element_bytes(value.dtype) / 4


def estimate_registers(live: Liveness, dots: list[DotPlacement], env: Mapping[str, Any], spec: GpuSpec,
                       num_warps: int, maxnreg: int | None) -> RegisterEstimate:
    model = MODELS[spec.tensor_core]
    threads = 32 * num_warps
    in_smem = {v.id for d in dots if d.async_mma for v in d.pipelined_operands}
    in_tmem = {d.op.result.id for d in dots if d.tmem_accumulator and d.op.result is not None}
    # Loop-carried copies of a TMEM accumulator stay in TMEM too.
    for step in live.steps:
        for c in step.op.attrs.get("carried", ()) if step.op.kind == "for" else ():
            if c.yielded.id in in_tmem:
                in_tmem.update({c.arg.id, c.init.id})
    costs: dict[int, float] = {}
    complete = True
    for vid, value in live.values.items():
        if vid in in_smem or vid in in_tmem:
            costs[vid] = 0.0
            continue
        cost = tile_cost(value, env, threads, model)
        if cost is None:
            complete = False
            cost = 0.0
        costs[vid] = cost
    # Epilogue reads of a TMEM accumulator hold part of it in registers at the reading op.
    transient: dict[int, float] = {}
    for i, step in enumerate(live.steps):
        if step.is_end or step.op.kind == "dot":
            continue
        for v in step.op.operands:
            if v.id in in_tmem:
                full = tile_cost(v, env, threads, model) or 0.0
                transient[i] = transient.get(i, 0.0) + full * model.tmem_epilogue
    events: dict[int, float] = {}
    for vid, (start, end) in live.intervals.items():  # half-open, see liveness.occupies
        stop = end if end > start else start + 1
        events[start] = events.get(start, 0.0) + costs[vid]
        events[stop] = events.get(stop, 0.0) - costs[vid]
    running, peak, peak_at = 0.0, 0.0, 0
    for i in range(len(live.steps) + 1):
        running += events.get(i, 0.0)
        total = running + transient.get(i, 0.0)
        if total > peak:
            peak, peak_at = total, i
    demand = int(math.ceil(peak + model.base))
    budget = register_budget(spec, num_warps, maxnreg)
    allocated = min(demand, budget)
    spill = max(0, demand - budget) * 4
    tiles = sorted((LiveTile(v.name or "tile", "x".join(str(d) for d in v.shape) or "scalar", v.dtype,
                             costs[v.id], _def_line(live, v.id))
                    for v in live.live_at(peak_at) if costs[v.id] >= 1.0),
                   key=lambda t: -t.registers)[:8]
    peak_line = live.steps[peak_at].op.line if peak_at < len(live.steps) else 0
    return RegisterEstimate(demand, allocated, budget, demand / budget, spill, peak_line, tuple(tiles), complete)


def _def_line(live: Liveness, vid: int) -> int:
    start = live.intervals[vid][0]
    return live.steps[start].op.line
