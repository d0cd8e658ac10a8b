"""An explainable time model for ranking configs: waves × max(compute, memory, issue, latency) per wave.

Each term is a number a reviewer can check by hand; the rationale names the one that dominates.
  * Work per CTA comes from the IR: `tl.dot` FLOPs, loaded/stored bytes and element operations, each
    multiplied by the trip counts of the loops around it (read from the source, `source.trip_count`).
  * Waves: CTAs of the bucket's grid over `ctas_per_sm × SMs` (occupancy from `estimate()`).
  * Compute: tensor-core rate per SM, scaled by eligibility — wgmma only with ≥ 4 warps and ≥ 64-row tiles
    (docs/design.md: buffers = num_stages when the dot runs on wgmma, BM ≥ 64 and num_warps ≥ 4), and
    by the operand reuse of the instruction's N (smem bandwidth bounds small-N wgmma).
  * Memory: bandwidth per SM times a Little's-law factor — bytes in flight per SM (CTAs × bytes per loop
    iteration × pipeline depth) over bandwidth × latency. Dot operands are re-read by many CTAs and mostly
    hit L2, so they see `L2_OVER_DRAM` × DRAM bandwidth.
  * Latency: one CTA's dependent DRAM round trips (loop iterations ÷ pipeline depth) — what small grids
    and 1-row-per-CTA reductions are bound by.
  * Spills: every spilled byte per thread is a local-memory store and load: penalised, not banned
    (docs/design.md: the fastest config sometimes spills).
Constants are leads from datasheets (H100/H200 SXM: 989 dense fp16 TFLOP/s, 3.35/4.8 TB/s) and ordinary
Hopper latencies; they rank configs, they do not predict microseconds.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kernlint.analysis.estimate import KernelEstimate
from kernlint.hardware.specs import GpuSpec
from kernlint.ir.nodes import KernelIR, Op, OpKind, element_bytes, is_pointer, pointee
from kernlint.recommend.access_cost import access_wavefronts, mask_aligned
from kernlint.recommend.loop_unroll import numel_of as _numel
from kernlint.recommend.loop_unroll import ptxas_unroll
from kernlint.frontend.host_facts import KernelSource, trip_count, trip_span

# Hardware numbers (DRAM bandwidth, boost clock, L2, dense tensor-core TFLOP/s) are the target's GpuSpec
# fields, each with its source in kernlint/hardware/specs.py. mma.sync on Hopper reaches about 2/3 of wgmma
# (an assumption of this model, stated in the rationale).
MMA_SYNC_ON_ASYNC_HW = 0.62
DRAM_LATENCY_US = 0.8          # loaded DRAM round trip, µs
LAUNCH_US = 2.5                # kernel launch + first/last wave ramp
CTA_OVERHEAD_US = 0.25         # CTA start, index math, epilogue store drain
L2_OVER_DRAM = 3.5             # L2 hit bandwidth over DRAM: a 128x256 wgmma tile streams ~11 TB/s of operands
SOFT_MAX_P = 2.0               # per-wave time = p-norm of the bounds: the largest dominates, the others still count
SPILL_US_PER_BYTE_THREAD = 0.004
L2_USABLE = 0.6                # H100 L2 is two partitions; lines can be duplicated in both (half-ish usable)
ITER_BASE_US = 0.4
ITER_PER_ELEM_US = 0.05
# Unvectorised loads in a row loop lengthen every round trip. Nsight Compute on the H200 (rmsnorm, n_cols
# do_not_specialize; benchmarks/gpu/ncu/h200_counters_run1.csv): 4 scalar fp16 per thread (32 threads 8 B
# apart) touch 8 L1 sectors per request, 2 per thread touch 4; at the same requests and DRAM bytes that is
# 25.2 M against 12.6 M sectors, L1 64 % against 43 % busy, DRAM only 35 % against 42 %, and 67.7 against
# 56.3 µs (1024×32768). Such a loop is latency-bound, so the L1 time those extra sectors take is added to
# its round trips, SCALAR_L1_IN_LATENCY times over (replay of the saved H200 timings: 1.0 changes no pick,
# 1.5-2.0 the same picks, 3.0 worse; rmsnorm 0.959 → 0.985, all 938 pairs 0.9715 → 0.9748). Not for loops
# that reduce across the tile each iteration (cross-entropy: its barrier already serialises the iteration;
# counting it there picked 0.881 of the best instead of 0.960) nor straight-line bodies (one round trip).
SCALAR_L1_IN_LATENCY = 2.0
# A loop-free kernel that reduces across the whole CTA (softmax's row max and row sum) takes each reduction
# through shared memory and a barrier, a chain that grows with log2(num_warps). H200 run 26, whole-row
# softmax at equal modelled memory time: 4 warps beat 8 (4096 × 4096: 21.5 against 22.2 µs; 16384 × 3000:
# 71.0 against 73.6) and 1 warp beat 2 (32768 × 512: 25.0 against 25.9). Replay of every saved H200 timing:
# 0.9746 → 0.9754, softmax 0.988 → 0.995, no other kernel moves; 0.2-0.3 µs pick the same, from 0.35 µs
# softmax 8192 × 2048 goes to too few warps. Loops are left alone: a row loop's barriers overlap with the
# next iteration's loads (layernorm and rmsnorm lost 3-5 % with this term).
BLOCK_REDUCTION_US = 0.25
# A loop that reduces its tile to a value every trip (cross-entropy's online max and sum) pays each
# reduction's barrier chain, BLOCK_REDUCTION_US × log2(num_warps), on every trip, and its per-thread element
# work costs less than a plain row loop's: on the H200 all six cross-entropy shapes are fastest at 64
# elements per thread per trip, and a trip there took ~0.6 µs more than at 32 at equal residency (0.02 µs
# per element; ITER_PER_ELEM_US, 0.05, made the model pick 32 in all six). Replay of every saved H200
# timing (runs 1-32): 0.9764 → 0.9793, cross-entropy 0.959 → 0.982, no other kernel moves (the only other
# reducing loops, attention's, are pipelined); 0-0.015 give 0.980-0.982, 0.02-0.05 lose the gain.
REDUCING_ITER_PER_ELEM_US = 0.01
L1_WAVEFRONTS_PER_CLK = 1.0    # Hopper L1: one 128-B wavefront per clock per SM
# A CTA that needs more shared memory than the second-largest carve-out step (compute capability 9.0: shared
# memory per SM is set to one of 0, 8, 16, 32, 64, 100, 132, 164, 196 or 228 KB, CUDA C++ Programming Guide;
# 8.0 stops at 164) measured slower than the same tile one stage shallower on the H200: 128×128×64 matmul
# tiles at 8 warps 3-4 % slower at 7 stages (224 KB) than at 6 (192 KB) in runs 20-28 (1536×6144×2048 and
# 512×4096×14336, 39 pairs), attention 128×64 at HEAD_DIM 128 slower at 6 stages than at 5. Why is not
# established (L1 left at the largest carve-out is 28 KB, but two 100 KB CTAs of HEAD_DIM 64 attention, which
# take the same carve-out, were fastest at 6 stages), so the term is empirical and per CTA. Replay of every
# saved H200 timing: 0.9752 -> 0.9767 (bf16 matmul 0.970 -> 0.977, attention 0.987 -> 0.990); 2-10 % give
# the same picks; counted per SM (resident CTAs together) it lost 1-2 % on HEAD_DIM 64 attention. Live, H200
# runs 29-31 with the term: 0.9794 / 0.9796 / 0.9791 of the best (runs 27 / 28 without it: 0.9781 / 0.9762).
# The steps are the target's GpuSpec.smem_carveout_steps_kb, set on sm_90 only: sm_80 (steps 132/164) and
# sm_100 are not measured.
FULL_CARVEOUT_PENALTY = 0.03


def dram_bytes_per_s(spec: GpuSpec) -> float:
    return spec.dram_gbps * 1e9


@dataclass(frozen=True)
class Work:
    flops: float           # tl.dot FLOPs per CTA
    dot_bytes: float       # bytes loaded into dot operands per CTA
    bytes: float           # other bytes loaded/stored per CTA
    ops: float             # element operations per CTA (issue slots, all warps together)
    iter_bytes: float      # bytes one loop iteration (or the straight-line body) has in flight
    serial: float          # dependent DRAM round trips of one CTA
    pipelined: bool        # the loop's loads are software pipelined (num_stages ≥ 2 and a loop exists)
    iter_elems: float      # largest loaded tile of one iteration (elements): per-thread serial work
    unknown_trips: tuple[int, ...]
    wavefronts: float = 0.0  # L1 wavefronts (128-B lines per warp instruction) of the non-dot accesses
    scalar_excess: float = 0.0  # wavefronts unvectorised accesses inside loops add over vectorised ones
    scalar_accesses: int = 0  # non-dot accesses whose mask cannot be proven 16-aligned: not vectorised
    reread_bytes: float = 0.0  # loads of a tensor a previous loop already swept (multi-pass row kernels)
    reread_footprint: float = 0.0  # bytes one CTA must keep in L2 for those re-reads to hit
    # per straight-line body or unpipelined loop: (bytes it moves per CTA, bytes one CTA has in flight
    # per round trip) — each loop's memory efficiency from its own bytes in flight (Little's law)
    segments: tuple[tuple[float, float], ...] = ()
    loop_reduces: bool = False  # a loop body reduces or scans across its tile (a barrier per iteration)
    block_reductions: int = 0   # reductions/scans of a loop-free kernel (each a barrier chain, see above)
    stored: float = 0.0         # bytes one CTA stores: its share of the output (grid-size stand-in, core.py)
    loop_barriers: int = 0      # reductions/scans to a scalar inside loops: a cross-warp barrier chain per trip


# ops between a load and the tl.dot that reads it which leave it the same tile in memory terms
OPERAND_VIEWS = (OpKind.TRANS, OpKind.RESHAPE, OpKind.VIEW, OpKind.CAST)


def kernel_work(ir: KernelIR, src: KernelSource, env: Mapping[str, Any], num_stages: int,
                num_warps: int = 4) -> Work:
    flops = dot_bytes = other = ops = iter_bytes = serial = iter_elems = wavefronts = excess = stored = 0.0
    scalar = reductions = loop_barriers = 0
    sweeps: dict[str, list[tuple[int, float]]] = {}   # pointer argument → (loop line, bytes) per looped load
    unknown: list[int] = []
    segments: list[tuple[float, float]] = []
    has_loop = loop_reduces = False
    dot_inputs: set[int] = set()
    defs = ir.producers()
    dots = [op for op, _ in ir.walk() if op.kind == OpKind.DOT]
    for op in dots:
        for v in op.operands[:2]:
            # through layout changes and casts to the load: `tl.dot(q, tl.trans(k))` reads k as an operand
            # (re-read by every CTA of the head: an L2 hit, not a DRAM stream)
            while (d := defs.get(v.id)) is not None and d.kind in OPERAND_VIEWS and d.operands:
                v = d.operands[0]
            dot_inputs.add(v.id)

    def root(v: Any) -> str | None:
        seen = 0
        while v is not None and seen < 16:
            d = defs.get(v.id)
            if d is None or d.kind == OpKind.PARAM:
                return v.name or None
            v = next((o for o in d.operands if is_pointer(o.dtype)), None)
            seen += 1
        return None

    def visit(ops_: tuple[Op, ...], mult: float, depth: int, loop: int = 0, unroll: float = 1.0,
              span: float = 1.0) -> None:
        # mult: how often the body runs; span: how many tiles' worth of data its masked accesses move, the
        # loop's unrounded trip count — the masked-off tail of the last tile reads no memory
        nonlocal flops, dot_bytes, other, ops, iter_bytes, serial, has_loop, iter_elems, wavefronts, scalar, \
            loop_reduces, excess, reductions, stored, loop_barriers
        body_bytes = 0.0
        loads = 0
        for op in ops_:
            if op.kind == OpKind.FOR:
                has_loop = True
                trips = trip_count(src, op.line, env)
                if trips is None:
                    unknown.append(op.line)
                    trips = 8
                u = ptxas_unroll(op, trips, num_warps, env, dot_inputs,
                                 lambda m: m is None or mask_aligned(m, defs, src, env))
                frac = trip_span(src, op.line, env)
                for region in op.regions:
                    visit(region.ops, mult * trips, depth + 1, op.line, u,
                          span * (trips if frac is None else min(frac, trips)))
                continue
            for region in op.regions:
                visit(region.ops, mult, depth, loop, span=span)
            res = op.result
            loop_reduces = loop_reduces or (depth > 0 and op.kind in (OpKind.REDUCE, OpKind.SCAN))
            reductions += op.kind in (OpKind.REDUCE, OpKind.SCAN)
            # a whole tile reduced to one value in a loop: every CTA-wide trip waits on shared memory
            loop_barriers += depth > 0 and op.kind in (OpKind.REDUCE, OpKind.SCAN) and res is not None and not res.is_tile
            if op.kind == OpKind.DOT and res is not None:
                dot = op.dot_attrs()
                m, n, k = (_val(x, env) for x in (dot.M, dot.N, dot.K))
                flops += 2.0 * m * n * k * mult
            elif op.kind in (OpKind.LOAD, OpKind.STORE):
                val = res if op.kind == OpKind.LOAD else (op.operands[1] if len(op.operands) > 1 else None)
                if val is None or not val.is_tile:
                    continue
                dtype = pointee(val.dtype) if is_pointer(val.dtype) else val.dtype
                b = _numel(val.shape, env) * element_bytes(dtype)
                if op.kind == OpKind.LOAD and res is not None and res.id in dot_inputs:
                    dot_bytes += b * mult
                else:
                    mask = op.operands[1] if op.kind == OpKind.LOAD and len(op.operands) > 1 else \
                        op.operands[2] if op.kind == OpKind.STORE and len(op.operands) > 2 else None
                    moved = b * (span if mask is not None else mult)
                    other += moved
                    stored += moved if op.kind == OpKind.STORE else 0.0
                    if op.kind == OpKind.LOAD and loop and (r := root(op.operands[0])):
                        sweeps.setdefault(r, []).append((loop, moved))
                    vec = mask is None or mask_aligned(mask, defs, src, env)
                    scalar += not vec
                    wf = access_wavefronts(_numel(val.shape, env), element_bytes(dtype), num_warps, vec)
                    wavefronts += wf * mult
                    if not vec and loop:
                        excess += (wf - access_wavefronts(_numel(val.shape, env), element_bytes(dtype), num_warps,
                                                          True)) * mult
                body_bytes += b
                iter_elems = max(iter_elems, _numel(val.shape, env))
                loads += op.kind == OpKind.LOAD
            elif res is not None and res.is_tile:
                ops += _numel(res.shape, env) * mult
        if loads:
            serial += mult / unroll
        iter_bytes = max(iter_bytes, body_bytes)
        if body_bytes:
            segments.append((body_bytes * mult, body_bytes * unroll))

    visit(ir.body.ops, 1.0, 0)
    reread = footprint = 0.0
    for accesses in sweeps.values():
        first = accesses[0][0]
        later = [b for line, b in accesses if line != first]
        if later:
            reread += sum(later)
            footprint += max(b for line, b in accesses if line == first)
    # Triton's software pipeliner multi-buffers the loads that feed a tl.dot; other loop loads are not
    # pipelined by num_stages (their latency is hidden by other CTAs/warps instead)
    return Work(flops, dot_bytes, other, ops, iter_bytes, serial, has_loop and bool(dot_inputs) and num_stages >= 2,
                iter_elems, tuple(unknown), wavefronts, excess, scalar, reread, footprint, tuple(segments),
                loop_reduces, 0 if has_loop else reductions, stored, loop_barriers)


def _val(expr: Any, env: Mapping[str, Any]) -> float:
    if expr is None:
        return 1.0
    v = expr.evaluate(env) if hasattr(expr, "evaluate") else expr
    return float(v) if isinstance(v, (int, float)) else 1.0


@dataclass(frozen=True)
class Score:
    time_us: float
    terms: dict[str, float]     # per-wave µs of each bound
    waves: int
    ctas: int | None
    bound: str
    notes: tuple[str, ...]
    # streaming kernel (no tl.dot, no reduction inside a loop): between configs the model cannot separate,
    # the one with more warps per CTA is measured faster (ranking._tie_key says where)
    wide_ties: bool = False

    def rationale(self) -> str:
        t = ", ".join(f"{k} {v:.2f}" for k, v in self.terms.items())
        grid = f"{self.ctas} CTAs in {self.waves} wave(s)" if self.ctas else "grid unknown (throughput only)"
        extra = ("; " + "; ".join(self.notes)) if self.notes else ""
        return f"~{self.time_us:.1f} µs model, {self.bound}-bound; {grid}; per-wave µs: {t}{extra}"


def _saturation(in_flight: float, need: float) -> float:
    # saturating, not a knee: 1 − e^(−x) gives 63% at exactly enough bytes in flight, 95% at three times
    return max(1.0 - math.exp(-in_flight / need), 0.05) if need else 1.0


def score(est: KernelEstimate, work: Work, spec: GpuSpec, ctas: int | None) -> Score:
    cfg = est.config
    occ = est.occupancy
    assert occ is not None and est.registers is not None
    notes: list[str] = []
    per_sm_ctas = max(1, occ.ctas_per_sm)
    if ctas is not None:
        waves = max(1, math.ceil(ctas / (per_sm_ctas * spec.sms)))
        # in a partial single wave the SM only holds what the grid gives it
        resident = min(per_sm_ctas, max(1, math.ceil(ctas / spec.sms)))
    else:
        waves, resident = 1, per_sm_ctas
    # compute
    tc = spec.tensor_tflops.fp16 * 1e12 / spec.sms
    eff = 1.0
    if work.flops:
        asyncs = [d.async_mma for d in est.dots]
        if spec.mma.async_mma and not all(asyncs):
            eff *= MMA_SYNC_ON_ASYNC_HW
            notes.append("no wgmma (needs ≥ 4 warps and ≥ 64-row tiles): mma.sync")
        ns = [d.n for d in est.dots if d.n]
        if ns:  # operand reuse of one instruction: 64×N outputs per (64+N)×K operands read from smem
            n = min(min(ns), 256)
            eff *= min(1.0, (64 * n / (64 + n)) / (64 * 128 / 192))
    warps_resident = resident * cfg.num_warps
    compute = resident * work.flops / (tc * eff) * 1e6 if work.flops else 0.0
    # memory, with Little's law: enough bytes in flight per SM to cover the latency at full bandwidth
    bw = dram_bytes_per_s(spec) / spec.sms
    depth = max(1, cfg.num_stages - 1) if work.pipelined else 1
    in_flight = resident * work.iter_bytes * depth
    need = bw * DRAM_LATENCY_US * 1e-6
    mem_eff = _saturation(in_flight, need)
    if work.segments and not work.pipelined and sum(b for b, _ in work.segments) > 0:
        # each loop keeps its own bytes in flight: a harmonic mean over the bytes the loops move
        moved = sum(b for b, _ in work.segments)
        mem_eff = moved / sum(b / _saturation(resident * f, need) for b, f in work.segments)
        in_flight = max(resident * f for _, f in work.segments)
    # multi-pass row kernels (layernorm reads its row 3×) re-read from L2 only while the rows of all
    # resident CTAs fit in it: on H200 layernorm 2048×16384 (32 KiB rows) ran 48.5 µs with 528 rows in
    # flight (17 MiB) and 74 µs with 2112 (66 MiB > 50 MiB L2) at the same 64 warps per SM
    hit = 0.0
    if work.reread_bytes:
        concurrent = min(ctas, per_sm_ctas * spec.sms) if ctas else per_sm_ctas * spec.sms
        hit = min(1.0, L2_USABLE * spec.l2_mb * 2 ** 20 / max(1.0, concurrent * work.reread_footprint))
        if hit < 1.0:
            notes.append(f"re-read rows overflow L2: {hit:.0%} of re-reads hit")
    dram = work.bytes - work.reread_bytes * hit
    memory = resident * (dram + (work.dot_bytes + work.reread_bytes * hit) / L2_OVER_DRAM) / (bw * mem_eff) * 1e6
    # instruction issue: 4 schedulers × 32 lanes per clock, fewer than 8 resident warps cannot hide ALU latency
    lanes = 128 * spec.boost_clock_ghz * 1e3   # element ops per µs per SM
    issue = resident * work.ops / (lanes * min(1.0, warps_resident / 8)) if work.ops else 0.0
    if work.pipelined:
        latency = work.serial * DRAM_LATENCY_US / depth + CTA_OVERHEAD_US
    else:
        # an unpipelined iteration costs a round trip plus per-thread serial work: fitted on H200 row
        # kernels (benchmarks/gpu/h200_results_run2.json: 1 warp × 1024-element blocks ≈ 6 µs/iteration)
        per_thread = work.iter_elems / (32 * cfg.num_warps)
        per_elem = REDUCING_ITER_PER_ELEM_US if work.loop_reduces else ITER_PER_ELEM_US
        barriers = BLOCK_REDUCTION_US * work.loop_barriers * math.log2(cfg.num_warps)
        latency = work.serial * (ITER_BASE_US + per_elem * per_thread + barriers) + CTA_OVERHEAD_US
    # L1: one 128-B wavefront per cycle per SM (Hopper L1 load bandwidth 128 B/clk). Unvectorised accesses
    # with 8 elements per thread need 4 wavefronts per 64 useful bytes: on H200 rmsnorm (n_cols is
    # do_not_specialize) 8192-column rows ran 57 µs at 2 elements/thread vs 93-141 µs at 8-32
    # (benchmarks/gpu/h200_results.json)
    lsu = resident * work.wavefronts / (L1_WAVEFRONTS_PER_CLK * spec.boost_clock_ghz * 1e3) \
        if work.wavefronts else 0.0
    if not work.pipelined and work.scalar_excess and not work.loop_reduces:
        latency += SCALAR_L1_IN_LATENCY * resident * work.scalar_excess / (
            L1_WAVEFRONTS_PER_CLK * spec.boost_clock_ghz * 1e3)
    if work.block_reductions and cfg.num_warps > 1:
        latency += BLOCK_REDUCTION_US * work.block_reductions * math.log2(cfg.num_warps)
    terms = {"compute": compute, "memory": memory, "issue": issue, "latency": latency, "l1": lsu}
    bound = max(terms, key=lambda k: terms[k])
    wave = sum(v ** SOFT_MAX_P for v in terms.values()) ** (1.0 / SOFT_MAX_P)
    spill = est.registers.spill_bytes
    if spill:
        wave += resident * spill * SPILL_US_PER_BYTE_THREAD * (work.serial or 1)
        notes.append(f"~{spill} B/thread spilled")
    if mem_eff < 0.9 and bound == "memory":
        notes.append(f"{in_flight / 1024:.0f} KiB in flight per SM covers {mem_eff:.0%} of the latency")
    if work.unknown_trips:
        notes.append("loop trip count unknown at line(s) " + ",".join(map(str, work.unknown_trips)) + ": assumed 8")
    steps = spec.smem_carveout_steps_kb
    if steps and est.smem is not None and est.smem.total > steps[0] * 1024:
        wave *= 1 + FULL_CARVEOUT_PENALTY
        notes.append(f"{est.smem.total // 1024} KB of shared memory per CTA, above the {steps[0]} KB carve-out step "
                     f"(measured {FULL_CARVEOUT_PENALTY:.0%} slower on the H200)")
    return Score(LAUNCH_US + waves * wave, terms, waves, ctas, bound, tuple(notes),
                 wide_ties=not work.flops and not work.loop_reduces)


def score_floor(work: Work, spec: GpuSpec, num_warps: int, num_stages: int, ctas: int | None) -> float:
    """A lower bound of `score(est, work, spec, ctas).time_us` over every estimate of a config with these warps
    and stages, from the work alone: the search (kernlint.recommend.core) skips the estimate of a config whose
    bound cannot reach the candidates it has to beat.

    `score` reads four things from the estimate: CTAs per SM (here every count from 1 to the cap that threads
    and the CTA limit allow, the least time kept), the tensor-core efficiency of the dots (≤ 1: taken as 1),
    spilled bytes (≥ 0: taken as 0) and the carve-out penalty (≥ 1: taken as 1). Every term `score` adds is
    non-negative and grows with what it is given, so the bound is `score`'s own arithmetic with those four
    at their best. tests/recommend/test_search_bound.py checks it against `score` on every config of sweeps."""
    tc = spec.tensor_tflops.fp16 * 1e12 / spec.sms
    bw = dram_bytes_per_s(spec) / spec.sms
    need = bw * DRAM_LATENCY_US * 1e-6
    lanes = 128 * spec.boost_clock_ghz * 1e3
    l1_rate = L1_WAVEFRONTS_PER_CLK * spec.boost_clock_ghz * 1e3
    depth = max(1, num_stages - 1) if work.pipelined else 1
    if work.pipelined:
        latency0 = work.serial * DRAM_LATENCY_US / depth + CTA_OVERHEAD_US
    else:
        per_thread = work.iter_elems / (32 * num_warps)
        per_elem = REDUCING_ITER_PER_ELEM_US if work.loop_reduces else ITER_PER_ELEM_US
        barriers = BLOCK_REDUCTION_US * work.loop_barriers * math.log2(num_warps)
        latency0 = work.serial * (ITER_BASE_US + per_elem * per_thread + barriers) + CTA_OVERHEAD_US
    scalar = not work.pipelined and work.scalar_excess and not work.loop_reduces
    if work.block_reductions and num_warps > 1:
        latency0 += BLOCK_REDUCTION_US * work.block_reductions * math.log2(num_warps)
    segments = work.segments and not work.pipelined and sum(b for b, _ in work.segments) > 0
    cap = max(1, min(spec.max_ctas_per_sm, spec.max_warps_per_sm // num_warps))
    best = math.inf
    # At a fixed number of waves every term grows with the CTAs resident per SM (more CTAs, more work per
    # wave; the memory efficiency grows slower than the bytes; L2 re-reads hit less), so the least time over
    # the CTA counts is at the first count of each wave count: only those are evaluated. Past
    # ceil(ctas / SMs) nothing changes; with the grid unknown, one CTA per SM is the least.
    per_sm = 1
    last = min(cap, max(1, math.ceil(ctas / spec.sms))) if ctas is not None else 1
    while per_sm <= last:
        if ctas is not None:
            waves = max(1, math.ceil(ctas / (per_sm * spec.sms)))
            resident = min(per_sm, max(1, math.ceil(ctas / spec.sms)))
        else:
            waves, resident = 1, per_sm
        compute = resident * work.flops / tc * 1e6 if work.flops else 0.0
        mem_eff = _saturation(resident * work.iter_bytes * depth, need)
        if segments:
            moved = sum(b for b, _ in work.segments)
            mem_eff = moved / sum(b / _saturation(resident * f, need) for b, f in work.segments)
        hit = 0.0
        if work.reread_bytes:
            concurrent = min(ctas, per_sm * spec.sms) if ctas else per_sm * spec.sms
            hit = min(1.0, L2_USABLE * spec.l2_mb * 2 ** 20
                      / max(1.0, concurrent * work.reread_footprint))
        dram = work.bytes - work.reread_bytes * hit
        memory = resident * (dram + (work.dot_bytes + work.reread_bytes * hit) / L2_OVER_DRAM) / (bw * mem_eff) * 1e6
        issue = resident * work.ops / (lanes * min(1.0, resident * num_warps / 8)) if work.ops else 0.0
        lsu = resident * work.wavefronts / l1_rate if work.wavefronts else 0.0
        latency = latency0
        if scalar:
            latency += SCALAR_L1_IN_LATENCY * resident * work.scalar_excess / l1_rate
        wave = sum(v ** SOFT_MAX_P for v in (compute, memory, issue, latency, lsu)) ** (1.0 / SOFT_MAX_P)
        best = min(best, LAUNCH_US + waves * wave)
        if waves == 1:
            break
        per_sm = max(per_sm + 1, math.ceil(ctas / ((waves - 1) * spec.sms)))   # type: ignore[operator]
    return best
