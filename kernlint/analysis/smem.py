"""Shared memory and tensor memory per (kernel, config, target), broken down per buffer.

Rules measured with Triton 3.9 / ptxas 13.4 and on an H200 with
Triton 3.6 (docs/design.md, "Ground truth"):
* pipelined dot operands: num_stages buffers of (BM·BK + BK·BN)·bytes when the dot runs on wgmma/tcgen05
  (sm_90/sm_100, ≥ 4 warps, BM ≥ 64), num_stages − 1 buffers on cp.async targets (sm_80/89/120) and for
  the mma.sync fallback on sm_90; exact for every measured matmul config;
* sm_100 adds 16 B of mbarriers per pipelined loop (24,592 = 24,576 + 16);
* loads in a `tl.range(..., num_stages=S)` loop without a dot: S − 1 buffers (softmax: BLOCK·4 B at S = 2);
* cross-warp reductions and scans: smem_reduce.py (scratch from the operand's blocked layout);
* buffers are reused between loops (Triton's allocator is liveness based), so the total is a peak.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kernlint.analysis.computed_operands import LOOP_INVARIANT_COMPUTED, fits_dead_operand_copy
from kernlint.analysis.dot_buffers import (MMA_BARRIER_BYTES, MMA_WAIT_BARRIER_BYTES, TRANSPOSE_SCRATCH_PER_WARP,
                                           loop_dot_buffers, multi_dot_loops)
from kernlint.analysis.liveness import Liveness, derived, invariant_load, producers as producers_of
from kernlint.analysis.loop_trips import static_trips
from kernlint.analysis.placement import DotPlacement, numel
from kernlint.analysis.register_tmem import folded_accumulations
from kernlint.analysis.passes import Constant, Pass, families, run_passes
from kernlint.analysis.smem_convert import Conversion, conversion_scratch
from kernlint.analysis.smem_gather import gather_scratch
from kernlint.analysis.smem_loops import flattened, mma_waits_on_staged_copy, register_staged_bytes
from kernlint.analysis.smem_reduce import reduction_scratch
from kernlint.analysis.smem_swizzle import SWIZZLE_ATOM_BYTES, pad_staged_operand, staged_across_loops
from kernlint.analysis.smem_types import SmemBuffer, SmemEstimate
from kernlint.analysis.smem_straight import region_buffers, straight_line_region
from kernlint.analysis.smem_staged_a import LABEL as STAGED_A
from kernlint.analysis.smem_staged_a import staged_a_operands, staged_a_spans
from kernlint.hardware.specs import GpuSpec
from kernlint.ir.nodes import Op, OpKind, element_bytes, pointee
from kernlint.ir.symbolic import as_int
from kernlint.ir.cache_keys import Analysis

SM100_BARRIER_BYTES = 16
# One 8-byte mbarrier per pipeline stage for TMA copies (measured, Triton 3.9 sm_90: 3 stages → +24 B,
# 4 → +32, 5 → +40 over the operand buffers of a tensor-descriptor matmul).
TMA_BARRIER_BYTES = 8


def _stages_for(loop_stages: int, spec: GpuSpec, async_mma: bool) -> int:
    if spec.pipeline_rule == "async_all_stages" and async_mma:
        return max(1, loop_stages)
    return max(1, loop_stages - 1)


@dataclass(slots=True)
class SmemState:
    """What the shared-memory passes (SMEM_PASSES, below) read and build for one (kernel, config, target)."""
    live: Liveness
    dots: list[DotPlacement]
    env: Mapping[str, Any]
    spec: GpuSpec
    num_warps: int
    num_stages: int
    loop_ops: dict[int, Op]
    parents: dict[int, int | None]
    producers: Mapping[int, Op]
    complete: bool = True
    per_loop: dict[int | None, list[SmemBuffer]] = field(default_factory=dict)   # loop (None: top) → buffers
    conversions: list[Conversion] = field(default_factory=list)   # layout-conversion scratch, per converting op
    timed: set[int | None] = field(default_factory=set)   # loops whose conversions are timed against their copies
    shared_tile_loops: set[int] = field(default_factory=set)   # loops whose buffers are counted per loaded tile
    dot_loops: set[int] = field(default_factory=set)
    # per-dot buffers (dot index, rule order, loop, buffer or None: the loop's group exists), placed in
    # program order by "dot buffers in program order"
    dot_buffers: list[tuple[int, int, int | None, SmemBuffer | None]] = field(default_factory=list)
    region: list[DotPlacement] = field(default_factory=list)
    region_keys: set[int | None] = field(default_factory=set)
    scratch: dict[int | None, SmemBuffer] = field(default_factory=dict)   # the largest scratch per loop
    scratch_fits: Callable[[list[SmemBuffer], SmemBuffer], bool] | None = None
    straight_reuse: bool = False
    swizzled_staged: set[int] | None = None
    total: int = 0
    buffers: tuple[SmemBuffer, ...] = ()
    fresh: set[int] = field(default_factory=set)   # TMEM dots whose accumulator is double-buffered
    estimate: SmemEstimate | None = None

    def loop_stages(self, loop_id: int) -> tuple[int, bool]:
        # a tl.static_range loop is unrolled while the kernel is traced: no loop is left to pipeline (Triton
        # 3.9, four unrolled 32×32×64 fp32 dots at 16 warps, num_stages 4: 16,384 B, one copy of A and B)
        op = self.loop_ops[loop_id]
        if static_trips(op, self.env) in (0, 1) or op.for_attrs().loop == "static_range":
            # a loop whose constexpr bounds give one iteration is folded away by MLIR's scf.for
            # canonicalisation before the pipeliner runs: nothing is multi-buffered (fla chunk_o.py
            # `for i_v in range(tl.cdiv(V, BV))` with V = BV: 4 tiles × 1 buffer, Triton 3.9 sm_90)
            return 1, True
        explicit = op.for_attrs().num_stages
        if explicit is not None:
            value = as_int(explicit.evaluate(self.env))
            if value is not None:
                return value, True
        return self.num_stages, False


def estimate_smem(live: Liveness, dots: list[DotPlacement], env: Mapping[str, Any], spec: GpuSpec,
                  num_warps: int, num_stages: int, disabled: frozenset[str] = frozenset()) -> SmemEstimate:
    """Run SMEM_PASSES in order (less the `disabled` ones, for ablation) and return the estimate."""
    loop_ops = {s.op.id: s.op for s in live.steps if s.op.kind == OpKind.FOR and not s.is_end}
    parents = {s.op.id: (s.loops[-1] if s.loops else None) for s in live.steps if s.op.kind == OpKind.FOR and not s.is_end}
    state = SmemState(live, dots, env, spec, num_warps, num_stages, loop_ops, parents, producers_of(live))
    run_passes(SMEM_PASSES, state, spec, disabled)
    assert state.estimate is not None
    return state.estimate


def _conversions(s: SmemState) -> None:
    # no num_stages in it: a config's stage variants share it on the liveness, keyed on the very dots list
    # (estimate() keeps one per target and num_warps there; any other list is computed afresh)
    key = Analysis.CONVERSION_SCRATCH.key(s.num_warps, s.spec.stmatrix, s.spec.ldmatrix, id(s.dots))
    kept = s.live.cache.get(key)
    if kept is None or kept[0] is not s.dots:
        kept = s.live.cache[key] = (s.dots, conversion_scratch(s.live, s.producers, s.env, s.num_warps,
                                                               s.spec, s.dots))
    s.conversions += kept[1]


def _gathers(s: SmemState) -> None:
    s.conversions += gather_scratch(s.live, s.producers, s.env, s.num_warps, s.spec)


def _multi_dot_loops(s: SmemState) -> None:
    # Loops with several dots (attention) count their buffers per loaded tile (kernlint/analysis/dot_buffers.py).
    s.shared_tile_loops = multi_dot_loops(s.dots)
    for loop_id in s.shared_tile_loops:
        stages, _ = s.loop_stages(loop_id)
        own = [(c.step, c.bytes) for c in s.conversions if c.loop == loop_id and c.step >= 0] if stages <= 1 else []
        if own:
            s.timed.add(loop_id)
        s.per_loop[loop_id] = [SmemBuffer(*b) for b in loop_dot_buffers(s.live, s.dots, loop_id, s.env, s.spec,
                                                                         s.num_warps, stages, own)]
    s.dot_loops |= s.shared_tile_loops


def _own_dots(s: SmemState) -> list[tuple[int, DotPlacement]]:
    return [(i, d) for i, d in enumerate(s.dots) if d.in_loop not in s.shared_tile_loops]


def _pipelined_operands(s: SmemState) -> None:
    spec = s.spec
    for i, d in _own_dots(s):
        if d.in_loop is None or not d.pipelined_operands:
            continue
        s.dot_loops.add(d.in_loop)
        stages, _ = s.loop_stages(d.in_loop)
        # sm_100 with an operand the pipeliner keeps in registers (staged once per k-step): the async
        # operands get num_stages − 1 buffers and the loop one 8-B barrier. Measured (Triton 3.9,
        # examples/persistent_matmul.py, B offsets clamped by tl.where): 64×64×64 s3 → 2 × 8,192 (A)
        # + 8,192 (B) + 8 = 24,584 B; 128×64×64 s4 → 3 × 16,384 + 8,192 + 8 = 57,352 B.
        staged_b = spec.mma.stages_every_operand_load and bool(d.register_pipelined) \
            and not mma_waits_on_staged_copy(d, s.loop_ops, s.parents, s.env, spec, stages)
        buffers = _stages_for(stages, spec, d.async_mma and not staged_b)
        if d.operand_bytes == 0:
            s.complete = False
        operand_total = buffers * d.operand_bytes
        if d.tma and not d.async_mma and spec.mma.async_mma:
            operand_total = _tma_fallback_operands(d, stages, buffers, s.env)
            s.dot_buffers.append((i, 0, d.in_loop, SmemBuffer(
                "mbarriers", TMA_BARRIER_BYTES * buffers, "TMA barriers, one per buffer", d.op.line)))
        s.dot_buffers.append((i, 0, d.in_loop, SmemBuffer(
            "dot operands", operand_total,
            f"{buffers} × {d.operand_bytes:,} B ({spec.tensor_core if d.async_mma else 'mma.sync'}, num_stages={stages})",
            d.op.line)))


def _computed_operands(s: SmemState) -> None:
    for i, d in _own_dots(s):
        if d.in_loop is None or not (d.computed_operand_bytes or d.feeding_load_bytes or d.operand_scratch_bytes
                                     or d.invariant_operand_bytes):
            continue
        stages, _ = s.loop_stages(d.in_loop)
        s.dot_buffers.append((i, 1, d.in_loop, None))
        if d.feeding_load_bytes and stages > 1:
            s.dot_buffers.append((i, 1, d.in_loop, SmemBuffer(
                "pipelined loads feeding a computed operand", (stages - 1) * d.feeding_load_bytes,
                f"{stages - 1} × {d.feeding_load_bytes:,} B", d.op.line)))
        copies = d.computed_operand_bytes
        if mma_waits_on_staged_copy(d, s.loop_ops, s.parents, s.env, s.spec, stages):  # smem_loops.py
            copies += register_staged_bytes(d, s.env)
        if copies:
            s.dot_buffers.append((i, 1, d.in_loop, SmemBuffer(
                "computed dot operand", copies, f"1 × {d.computed_operand_bytes:,} B"
                + (" + the previous register-staged copy" if copies > d.computed_operand_bytes else ""),
                d.op.line)))
        if d.invariant_operand_bytes:
            s.dot_buffers.append((i, 1, d.in_loop, SmemBuffer(
                LOOP_INVARIANT_COMPUTED, d.invariant_operand_bytes, f"1 × {d.invariant_operand_bytes:,} B",
                d.op.line)))
        if d.operand_scratch_bytes:  # computed_operands.py: a register/TMEM operand converted in the loop
            s.dot_buffers.append((i, 1, d.in_loop, SmemBuffer(
                "dot operand conversion", d.operand_scratch_bytes,
                f"{d.operand_scratch_bytes:,} B of layout-conversion scratch", d.op.line)))
        s.dot_loops.add(d.in_loop)


def _invariant_operands(s: SmemState) -> None:
    # a tile loaded once and read by several dots is converted once: one shared copy (Triton 3.9, four
    # straight-line dots over two loaded B tiles, tests/analysis/test_smem_scratch_mechanisms.py)
    counted: set[tuple[int | None, int]] = set()
    for i, d in _own_dots(s):
        staged = sum(b for lid, b in d.staged_loads if (d.in_loop, lid) not in counted) if d.staged_loads \
            else d.staged_bytes
        counted.update((d.in_loop, lid) for lid, _ in d.staged_loads)
        if staged:
            s.dot_buffers.append((i, 2, d.in_loop, SmemBuffer(
                "loop-invariant dot operand", staged, f"1 × {staged:,} B", d.op.line)))


def _place_dot_buffers(s: SmemState) -> None:
    for _, _, loop_id, buffer in sorted(s.dot_buffers, key=lambda t: (t[0], t[1])):   # stable: rule order kept
        group = s.per_loop.setdefault(loop_id, [])
        if buffer is not None:
            group.append(buffer)


def _staged_a(s: SmemState) -> None:
    for loop_id, (nbytes, detail, line) in staged_a_operands(s.live, s.dots, s.producers, s.env).items():
        s.per_loop.setdefault(loop_id, []).append(SmemBuffer(STAGED_A, nbytes, detail, line))  # smem_staged_a.py


def _pipelined_loads(s: SmemState) -> None:
    for step in s.live.steps:
        op = step.op
        if step.is_end or op.kind != OpKind.LOAD or not step.loops or op.result is None or not op.result.shape:
            continue
        loop_id = step.loops[-1]
        if loop_id in s.dot_loops:
            continue
        stages, explicit = s.loop_stages(loop_id)
        if not explicit or stages < 2:
            continue
        if invariant_load(op, loop_id, s.live, s.producers):
            # the same address every iteration: not pipelined (Triton 3.9, a [128, 32] fp16 tile re-read in a
            # tl.range(num_stages=5) loop: 256 B in all, where 4 × 8 KiB were counted; test_smem_pipelined_loads)
            continue
        size = numel(op.result, s.env)
        if size is None:
            s.complete = False
            continue
        nbytes = int(size * element_bytes(op.result.dtype)) * (stages - 1)
        s.per_loop.setdefault(loop_id, []).append(SmemBuffer(
            "pipelined load", nbytes, f"{stages - 1} × {size:,} × {element_bytes(op.result.dtype):g} B", op.line))


def _tcgen05_barriers(s: SmemState) -> None:
    dots, loop_ops = s.dots, s.loop_ops
    for loop_id in {d.in_loop for d in dots if d.async_mma and d.in_loop in s.dot_loops} - s.shared_tile_loops:
        nbytes = SM100_BARRIER_BYTES
        if any(d.register_pipelined and not mma_waits_on_staged_copy(d, loop_ops, s.parents, s.env, s.spec,
                                                                        s.loop_stages(loop_id)[0])
               for d in dots if d.in_loop == loop_id) \
                or loop_ops[loop_id].for_attrs().loop == "static_range" \
                or static_trips(loop_ops[loop_id], s.env) in (0, 1):
            # one 8-B barrier: an operand staged from registers (see the note above), a loop folded away
            # (tests/truth/one_trip_loop.py: 16,384 + 8 B on sm_100, Triton 3.9) or unrolled (static_range)
            nbytes = TMA_BARRIER_BYTES
        elif any(d.tma for d in dots if d.in_loop == loop_id):
            stages, _ = s.loop_stages(loop_id)  # + one 8-B TMA mbarrier per stage, 16-B aligned
            nbytes = -(-(SM100_BARRIER_BYTES + TMA_BARRIER_BYTES * stages) // 16) * 16
        s.per_loop.setdefault(loop_id, []).append(SmemBuffer("mbarriers", nbytes, "pipeline barriers",
                                                             loop_ops[loop_id].line))
    if any(d.async_mma and d.in_loop is None for d in dots):
        # a tcgen05 MMA outside any loop waits on one 8-B mbarrier (tests/truth/chained_dots.py
        # gemm_gelu_kernel on sm_100: 16,384 B of operands + 8, Triton 3.9)
        s.per_loop.setdefault(None, []).append(SmemBuffer("mbarriers", TMA_BARRIER_BYTES, "MMA completion barrier",
                                                          min(d.op.line for d in dots if d.in_loop is None)))


def _wgmma_tma_barriers(s: SmemState) -> None:
    for loop_id in {d.in_loop for d in s.dots if d.tma and d.async_mma and d.in_loop in s.dot_loops}:
        stages, _ = s.loop_stages(loop_id)
        s.per_loop.setdefault(loop_id, []).append(SmemBuffer("mbarriers", TMA_BARRIER_BYTES * stages,
                                                             "TMA barriers, one per stage", s.loop_ops[loop_id].line))


def _tma_stores(s: SmemState) -> None:
    for step in s.live.steps:
        staged_store = _tma_store_buffer(step.op, s.env) if not step.is_end else None
        if staged_store is not None:
            s.per_loop.setdefault(step.loops[-1] if step.loops else None, []).append(staged_store)


def _straight_line(s: SmemState) -> None:
    # Straight-line dots and those of folded one-trip loops share one timeline (smem_straight.py).
    region, region_keys, effective, folded = straight_line_region(s.live, s.dots, s.loop_ops, s.env)
    if not region:
        return
    s.region, s.region_keys = region, region_keys
    for key in region_keys:
        # the region's timeline holds its staged A tiles too (their own peak added to it over-counted)
        s.per_loop[key] = [b for b in s.per_loop.pop(key, []) if key is None and b.label not in (
            "loop-invariant dot operand", "mbarriers", STAGED_A)]
    staged = [(a, z, b) for loop, a, z, b, _ in staged_a_spans(s.live, s.dots, s.producers, s.env)
              if loop in region_keys]
    s.per_loop.setdefault(None, []).extend(SmemBuffer(*b) for b in region_buffers(
        s.live, s.dots, region, [c for c in s.conversions if c.loop in region_keys and c.step >= 0], effective,
        folded, s.env, s.spec, staged))
    s.timed |= region_keys


def _reductions(s: SmemState) -> None:
    # Reduction/scan scratch (reused; the largest one counts, alongside the buffers of its loop).
    uses = derived(s.live, Analysis.REDUCTION_SCRATCH.key(s.num_warps, s.spec.stmatrix, s.spec.ldmatrix),   # no num_stages in it
                   lambda: reduction_scratch(s.live, s.producers, s.env, s.num_warps, s.spec))
    for use in uses:  # smem_reduce.py
        use_loop = None if s.region and use.loop in s.region_keys else use.loop
        if use_loop != use.loop:
            use = type(use)(use_loop, use.label, use.bytes, use.detail, use.line)
        if use.loop not in s.scratch or s.scratch[use.loop].bytes < use.bytes:
            s.scratch[use.loop] = SmemBuffer(use.label, use.bytes, use.detail, use.line)


def _place_conversions(s: SmemState) -> None:
    for conv in s.conversions:
        if conv.loop in s.timed:
            continue
        if conv.loop not in s.scratch or s.scratch[conv.loop].bytes < conv.bytes:
            s.scratch[conv.loop] = SmemBuffer("layout conversion", conv.bytes, conv.detail, conv.line)


def _row_scaled_tmem(s: SmemState) -> None:
    for loop_id, conv_bytes, line in _row_scaled_tmem_accumulators(s.dots, s.producers, s.env, s.spec, s.num_warps):
        if loop_id not in s.scratch or s.scratch[loop_id].bytes < conv_bytes:
            s.scratch[loop_id] = SmemBuffer("layout conversion", conv_bytes,
                                            "row vector moved into the TMEM accumulator's layout", line)


def _flattened_epilogue(s: SmemState) -> None:
    _fuse_flattened_epilogue(s.live, s.loop_ops, s.per_loop, s.scratch, s.env)


def _dead_operand_copies(s: SmemState) -> None:
    s.scratch_fits = fits_dead_operand_copy


def _straight_line_reuse(s: SmemState) -> None:
    s.straight_reuse = True


def _swizzle_padding(s: SmemState) -> None:
    s.swizzled_staged = staged_across_loops(s.dots, s.spec)


def _peak_over_loops(s: SmemState) -> None:
    best: tuple[SmemBuffer, ...] = ()
    best_total = 0
    for key in set(s.per_loop) | set(s.scratch):
        group = list(s.per_loop.get(key, []))
        if key in s.scratch and not (s.scratch_fits is not None and s.scratch_fits(group, s.scratch[key])):
            group.append(s.scratch[key])
        if key is None and s.straight_reuse:
            group = _reuse_after_straight_line_dots(group, s.dots)
        if s.swizzled_staged is not None:
            group = pad_staged_operand(group, s.swizzled_staged)
        total = sum(b.bytes for b in group)
        if total > best_total:
            best, best_total = tuple(group), total
    s.buffers, s.total = best, best_total


def _double_buffered_tmem(s: SmemState) -> None:
    s.fresh = _fresh_tmem_accumulators(s.live, s.dots, lambda loop_id: s.loop_stages(loop_id)[0])


def _smem_estimate(s: SmemState) -> None:
    s.estimate = SmemEstimate(s.total, s.buffers, _tmem_columns(s.dots, s.fresh), s.complete)


def _row_scaled_tmem_accumulators(dots: list[DotPlacement], producers: Mapping[int, Op], env: Mapping[str, Any],
                                  spec: GpuSpec, num_warps: int) -> list[tuple[int, int, int]]:
    """(loop, bytes, line) of the conversion scratch for `acc = acc * alpha[:, None]; acc = tl.dot(p, v, acc)`
    on sm_100 with two warpgroups: the row vector comes from another dot's TMEM read and is moved into the
    accumulator's TMEM-read layout through shared memory (TTGIR: `convert_layout tensor<128x1xf32, #linear> ->
    #linear1`, allocation.size 512). Measured (Triton 3.9, sm_100, examples/attention_fwd.py 128×64 · 8 warps ·
    2 stages: Q at 0, K at 32,768, V at 65,536, the 512-B scratch at 98,304, barriers above it -> 98,848 B =
    the buffers + 512; 512 B also at 128×128 and 64×64 tiles, and in the causal suite kernel). At 4 warps both
    read layouts map rows to the same threads and the TTGIR has no such conversion."""
    if not spec.mma.tmem_accumulator or num_warps != 8:
        return []
    out: list[tuple[int, int, int]] = []
    for d in dots:
        if not d.tmem_accumulator or d.in_loop is None or len(d.op.operands) < 3:
            continue
        scale = producers.get(d.op.operands[2].id)
        if scale is None or scale.kind != OpKind.ELEMENTWISE or scale.fn != "*":
            continue
        rows = [v for v in scale.operands if len(v.shape) == 2 and as_int(v.shape[1].evaluate(env)) == 1]
        # with ≤ 128 rows the second warpgroup takes half of the columns, so the two read layouts differ in the
        # columns a thread's row slice comes from; at 256 rows the warpgroups split the rows and nothing is
        # converted (attention 256×64 · 8 warps: 81,952 / 131,104 B, no scratch)
        if rows and d.m and d.m <= 128:
            out.append((d.in_loop, 4 * 128, d.op.line))
    return out


# Scratch buffers live only across their own op (Allocation.cpp: scratch of a convert_layout / reduce / scan).
_SCRATCH_LABELS = ("layout conversion", "reduction scratch", "scan scratch", "reduced tile to store layout",
                   "reduced tile to atomic layout")


def _reuse_after_straight_line_dots(group: list[SmemBuffer], dots: list[DotPlacement]) -> list[SmemBuffer]:
    """The operands of a dot outside any loop are dead once it has run, and Triton's liveness-based allocator
    gives their bytes to a scratch buffer that comes after it (the product converted for its store, a row sum
    of it, the row sums converted for their store or atomic): the pair costs the larger of the two, not the
    sum. Measured (Triton 3.9, tests/truth/chained_dots.py gemm_gelu_kernel, K = 64 in one dot): sm_80 / sm_90
    64×64 · 4 warps 16,384 B = the A and B tiles, where operands + the 8,192-B epilogue conversion would be
    24,576; a row sum of the product added to memory with tl.atomic_add (mamba-ssm
    _chunk_state_bwd_ddAcs_stable_kernel, tests/analysis/test_smem_scratch_mechanisms.py): 16,384 B, the 64 × 4 B
    conversion for the atomic fits in the dead operands (sm_80/90; + the 8-B barrier on sm_100)."""
    last_dot = max((d.op.line for d in dots if d.in_loop is None and d.staged_bytes), default=None)
    if last_dot is None:
        return group
    operands = [b for b in group if b.label in ("loop-invariant dot operand", STAGED_A) and b.line <= last_dot]
    later = [b for b in group if b.label in _SCRATCH_LABELS and b.line > last_dot]
    if not operands or not later:
        return group
    if sum(b.bytes for b in operands) >= max(b.bytes for b in later):
        return [b for b in group if b not in later]
    return [b for b in group if b not in operands]


def _fuse_flattened_epilogue(live: Liveness, loop_ops: Mapping[int, Op], per_loop: dict[int | None, list[SmemBuffer]],
                             scratch: dict[int | None, SmemBuffer], env: Mapping[str, Any]) -> None:
    """`tl.range(..., flatten=True)` (persistent matmuls): Triton fuses the loop nest into one pipelined loop,
    so the inner loop's operand buffers are allocated before it and freed after it, and the conversion
    scratch of the outer body (the accumulator's epilogue) is allocated next to them. It reuses the slot
    of an operand staged once per iteration, dead by then: the pair costs the larger of the two. (Any
    scratch of the outer body is treated so; the epilogue conversion is the one measured.) Measured
    (Triton 3.9 TTGIR, examples/persistent_matmul.py, 128×64 tiles, 3 stages): sm_90 8 warps 49,152 B of A
    buffers + 16,384 B of mma → blocked scratch = 65,536; 4 warps (8,192 B scratch, the 8,192-B staged B
    slot) 57,344; sm_80 4 warps 32,768 + 16,384 = 49,152."""
    parent = {s.op.id: (s.loops[-1] if s.loops else None) for s in live.steps if s.op.kind == OpKind.FOR and not s.is_end}
    for outer_id in [k for k in scratch if k is not None and flattened(loop_ops[k], env)]:
        inner = [k for k in per_loop if k is not None and parent.get(k) == outer_id]
        if len(inner) != 1:
            continue
        group = per_loop[inner[0]]
        staged = [b for b in group if b.label == "computed dot operand"]
        conv = scratch.pop(outer_id)
        if staged and max(b.bytes for b in staged) >= conv.bytes:
            continue
        group[:] = [b for b in group if b not in staged] + [conv]


def _tma_fallback_operands(d: DotPlacement, stages: int, buffers: int, env: Mapping[str, Any]) -> int:
    """Shared memory of TMA-loaded operands feeding an mma.sync dot on sm_90/sm_100 (< 4 warps, BM < 64, or
    16 warps on sm_100): num_stages − 1 buffers like cp.async, each with its own 8-B mbarrier. Unpipelined
    (num_stages = 1) each TMA copy gets a buffer that is read back to registers and freed before the next
    copy, so only the largest operand tile counts. Measured (Triton 3.9, bmm_descriptor_kernel): sm_90 and
    sm_100 16×64×64 w1 s2 → 10,240 + 8 B; 256×256×64 w16 s3 on sm_100 → 2 × 65,536 + 16 B; 32×32×32 w1 s1
    → 2,048 + 8 B (two 2,048-B tiles, one at a time: ttgir local_alloc → async_tma_copy → local_load each).
    """
    if stages > 1:
        return buffers * d.operand_bytes
    sizes = [numel(v, env) for v in d.pipelined_operands]
    return max((int(n * element_bytes(v.dtype)) for n, v in zip(sizes, d.pipelined_operands) if n), default=0)


def _tma_store_buffer(op: Op, env: Mapping[str, Any]) -> SmemBuffer | None:
    """A tensor-descriptor store on sm_90/sm_100 is a TMA copy from shared memory: the tile is written to one
    buffer of block-shape × element bytes first (ttgir: local_alloc → async_tma_copy_local_to_global).
    Measured (Triton 3.9, bmm_descriptor_kernel 64×64×16 w2 s2, sm_90/sm_100): 8,192 B = 64 × 64 × 2, larger
    than the loop's 4,096 + 8 B of operand buffers, which are dead by then (the peak is the epilogue)."""
    if op.kind != OpKind.STORE or not op.operands or not op.operands[0].dtype.startswith("desc<"):
        return None
    size = numel(op.operands[0], env)
    if size is None:
        return None
    nbytes = int(size * element_bytes(pointee(op.operands[0].dtype)))
    return SmemBuffer("TMA store staging", nbytes, f"1 × {nbytes:,} B", op.line)


# TMEM_COLUMNS: the tensor memory of one SM (PTX ISA, tcgen05.alloc); a second accumulator buffer is taken
# only while the allocations so far leave room for it.
TMEM_COLUMNS = 512


def _fresh_tmem_accumulators(live: Liveness, dots: list[DotPlacement], stages_of: Callable[[int], int]) -> set[int]:
    """Op ids of TMEM dots in a pipelined loop whose accumulator starts afresh every trip (`qk = tl.dot(q, kᵀ)`:
    no accumulator operand, not folded into a loop-carried sum). Triton's tcgen05 pipeliner gives such an
    accumulator two buffers, so the MMA of the next trip runs while this trip's result is read; a
    loop-carried accumulator (`acc = tl.dot(a, b, acc)`, `acc += tl.dot(a, b)`) keeps one, and so does a fresh
    product that is the loop's only MMA (`acc += tl.dot(a, b) * scale`, measured on the public set: unsloth's
    _w8a8_block_fp8_matmul 128×128×128 w8 s3, 128 columns)."""
    results = {d.op.result.id for d in dots if d.tmem_accumulator and d.op.result is not None}
    sums = folded_accumulations(live, results)
    folded = {o.id for s in live.steps if not s.is_end and s.op.result is not None and s.op.result.id in sums
              for o in s.op.operands}
    in_loop: dict[int | None, int] = {}
    for d in dots:
        if d.tmem_accumulator:
            in_loop[d.in_loop] = in_loop.get(d.in_loop, 0) + 1
    out: set[int] = set()
    for d in dots:
        if not d.tmem_accumulator or d.in_loop is None or d.op.result is None or len(d.op.operands) > 2:
            continue
        if in_loop[d.in_loop] < 2:
            continue   # alone in its loop: one buffer (unsloth's block-scaled fp8 matmul, 128×128: 128)
        if d.op.result.id in folded or stages_of(d.in_loop) < 2:
            continue
        out.add(d.op.id)
    return out


def _tmem_columns(dots: list[DotPlacement], fresh: set[int] = frozenset()) -> int:  # type: ignore[assignment]
    """Tensor-memory columns: per loop, each accumulator's columns (two buffers for one that starts afresh
    every trip of a pipelined loop, while they fit), the largest loop's total rounded up to a power of two.

    Measured (Triton 3.9, metadata.tmem_size, sm_100): attention forward HEAD_DIM 128, 128×128: 512 (qk 2 ×
    128 + acc 128 = 384), 128×64: 256; causal HEAD_DIM 64, 128×64: 256 (2 × 64 + 64); the dQ kernel 128×64:
    512 (qk and dp 2 × 64 each + dq 128); the dQ kernel 128×128: 512 (qk 2 × 128 + dp 128 + dq 128: dp's
    second buffer would pass 512); causal HEAD_DIM 64, 64×64: 128 (qk's two 64-row buffers share 64 columns,
    one per half of the lanes). Not modelled: the dK/dV kernel 128×128 reports 640 (qkᵀ doubled past 512,
    yet it compiles); the model stays at 512 there rather than predict an OutOfResources that does not
    happen. Loop-carried matmul accumulators keep one buffer at every num_stages (examples/matmul.py 128×128:
    128)."""
    cols_by_loop: dict[int | None, int] = {}
    tmem_dots = [d for d in dots if d.tmem_accumulator and d.m is not None and d.n is not None]
    for d in tmem_dots:
        cols_by_loop[d.in_loop] = cols_by_loop.get(d.in_loop, 0) + -(-d.m // 128) * d.n  # type: ignore[operator]
    # fresh accumulators in program order take a second buffer while the loop's total stays within the
    # tensor memory (a 64-row accumulator's second buffer uses the other 64 lanes of its columns: free)
    for d in tmem_dots:
        cols = -(-d.m // 128) * d.n  # type: ignore[operator]  # 128 lanes; a 256-row tile: two column blocks
        if d.op.id in fresh and d.m > 64 and cols_by_loop[d.in_loop] + cols <= TMEM_COLUMNS:  # type: ignore[operator]
            cols_by_loop[d.in_loop] += cols
    peak = max(cols_by_loop.values(), default=0)
    if peak == 0:
        return 0
    if peak > TMEM_COLUMNS:
        return peak
    alloc = 32  # tcgen05.alloc hands out powers of two, at least 32 columns (PTX ISA, tcgen05.alloc)
    while alloc < peak:
        alloc *= 2
    return alloc


# --- The shared-memory model as an ordered pass list --------------------------------------------------------
# Buffers are collected per loop (None: top level) and scratch per loop; the estimate is the largest loop's
# total (Triton's allocator is liveness based, so loops reuse each other's bytes). Order matters: the
# straight-line region regroups what the dot passes placed, scratch follows the region, and the group
# rules act when the peak is taken.
SMEM_PASSES: tuple[Pass[SmemState], ...] = (
    Pass("layout conversion scratch",
         "a ttg.convert_layout between two register layouts goes through shared-memory scratch",
         _conversions, "smem_convert"),
    Pass("gather scratch",
         "tl.gather converts its source, index and result into a warp-local layout through shared memory",
         _gathers, "smem_gather"),
    Pass("multi-dot loop buffers",
         "a loop with several dots (attention) allocates its buffers per loaded tile, shared between dots",
         _multi_dot_loops, "dot_buffers",
         constants=(Constant("MMA_BARRIER_BYTES", MMA_BARRIER_BYTES, "bytes per tcgen05 MMA",
                             "Triton 3.9 sm_100 attention TTGIR: one 2 × 8-B mbarrier per MMA of the loop",
                             gate="tests/analysis/test_truth.py::test_sm100_shared_memory_is_exact_on_the_development_sets"),
                    Constant("MMA_WAIT_BARRIER_BYTES", MMA_WAIT_BARRIER_BYTES, "bytes", "Triton 3.9 sm_100: the "
                             "mbarrier an unpipelined tcgen05 MMA is waited on",
                             gate="tests/analysis/test_truth.py::test_sm100_shared_memory_is_exact_on_the_development_sets"),
                    Constant("TRANSPOSE_SCRATCH_PER_WARP", TRANSPOSE_SCRATCH_PER_WARP, "bytes per warp",
                             "Triton 3.9 attention backward: conversion scratch of a register-resident "
                             "transposed operand (dot_buffers.py)",
                             gate="tests/analysis/test_dot_buffers.py::test_attention_backward_shared_memory_matches_triton"))),
    Pass("pipelined dot operands",
         "a dot loop's loaded operands get num_stages buffers on wgmma / tcgen05, num_stages − 1 with cp.async "
         "(GpuSpec.pipeline_rule); TMA operands of an mma.sync fallback one mbarrier per buffer",
         _pipelined_operands, "smem",
         constants=(Constant("TMA_BARRIER_BYTES", TMA_BARRIER_BYTES, "bytes per stage", "Triton 3.9 sm_90 "
                             "tensor-descriptor matmul: 3 stages +24 B, 4 +32, 5 +40",
                             gate="tests/analysis/test_truth.py::test_matmul_shared_memory_is_exact_against_reference_truth"),)),
    Pass("computed dot operands",
         "an operand computed in registers is copied to shared memory once per k-step (plus the loads feeding "
         "it, pipelined)", _computed_operands, "computed_operands"),
    Pass("loop-invariant dot operands",
         "an operand loaded once outside the dot's loop is converted to one shared copy", _invariant_operands,
         "placement"),
    Pass("dot buffers in program order",
         "the per-dot buffers above placed in their loops' groups, dot by dot", _place_dot_buffers, "smem",
         essential=True),
    Pass("staged A operands",
         "an mma.sync A operand computed through tl.where holds one shared copy from its definition to its dot",
         _staged_a, "smem_staged_a"),
    Pass("pipelined loads",
         "loads in a tl.range(num_stages=S) loop without a dot get S − 1 buffers", _pipelined_loads, "smem"),
    Pass("tcgen05 barriers",
         "each pipelined tcgen05 dot loop holds its mbarriers (16 B; 8 B when staged from registers or "
         "unrolled; + one per TMA stage); an MMA outside loops waits on one",
         _tcgen05_barriers, "smem", families("tcgen05"),
         constants=(Constant("SM100_BARRIER_BYTES", SM100_BARRIER_BYTES, "bytes per loop", "Triton 3.9 sm_100 "
                             "matmul: 24,592 = 24,576 + 16",
                             gate="tests/analysis/test_truth.py::test_sm100_shared_memory_is_exact_on_the_development_sets"),
                    Constant("TMA_BARRIER_BYTES", TMA_BARRIER_BYTES, "bytes", "tests/truth/one_trip_loop.py: "
                             "16,384 + 8 B on sm_100, Triton 3.9",
                             gate="tests/analysis/test_smem_straight_line_fold.py::test_one_trip_loop_dots_share_the_timeline_after_it"))),
    Pass("wgmma TMA barriers",
         "a TMA-fed wgmma loop holds one 8-B mbarrier per stage", _wgmma_tma_barriers, "smem", families("wgmma"),
         constants=(Constant("TMA_BARRIER_BYTES", TMA_BARRIER_BYTES, "bytes per stage", "Triton 3.9 sm_90 "
                             "tensor-descriptor matmul: 3 stages +24 B, 4 +32, 5 +40",
                             gate="tests/analysis/test_truth.py::test_matmul_shared_memory_is_exact_against_reference_truth"),)),
    Pass("TMA store staging",
         "a tensor-descriptor store stages its tile in one shared buffer", _tma_stores, "smem",
         families("wgmma", "tcgen05")),
    Pass("straight-line region",
         "straight-line dots and those of folded one-trip loops share one timeline of operand copies",
         _straight_line, "smem_straight"),
    Pass("reduction and scan scratch",
         "cross-warp reductions and scans (and a reduced row converted for its store) use scratch sized by the "
         "operand's blocked layout", _reductions, "smem_reduce"),
    Pass("conversion scratch in its loop",
         "each loop's largest conversion scratch joins its group, unless timed against the loop's copies",
         _place_conversions, "smem", essential=True),
    Pass("row-scaled TMEM accumulator",
         "acc * alpha[:, None] on a tcgen05 accumulator at 8 warps moves the row vector through 512 B of scratch",
         _row_scaled_tmem, "smem", families("tcgen05")),
    Pass("flattened epilogue",
         "tl.range(flatten=True) fuses the loop nest: the outer body's scratch reuses a dead staged operand",
         _flattened_epilogue, "smem_loops"),
    Pass("dead operand copies",
         "a loop's scratch fits in the place of an operand copy that is dead after its dot",
         _dead_operand_copies, "computed_operands"),
    Pass("reuse after straight-line dots",
         "the operands of a dot outside loops are dead after it: a later scratch reuses their bytes",
         _straight_line_reuse, "smem"),
    Pass("swizzle padding",
         "a staged tcgen05 operand read by two loops is aligned to the 1,024-B swizzle atom above the barriers",
         _swizzle_padding, "smem_swizzle", families("tcgen05"),
         constants=(Constant("SWIZZLE_ATOM_BYTES", SWIZZLE_ATOM_BYTES, "bytes", "8 rows × 128 B of the 128-B "
                             "swizzle; Triton 3.9 sm_100 causal attention 64×64 w4 s3: 58,368 B, the sum 57,376",
                             gate="tests/analysis/test_smem_tcgen05_attention.py::test_q_read_by_two_loops_sits_above_both_loops_buffers_at_a_1024_byte_boundary"),)),
    Pass("peak over loops",
         "the estimate is the largest loop group (buffers plus its largest scratch)", _peak_over_loops, "smem",
         essential=True),
    Pass("double-buffered TMEM accumulators",
         "a fresh tcgen05 accumulator of a pipelined loop with several MMAs gets a second buffer while it fits",
         _double_buffered_tmem, "smem", families("tcgen05")),
    Pass("tensor-memory columns",
         "per loop the accumulators' columns, the largest rounded up to a power of two (≥ 32)", _smem_estimate,
         "smem", essential=True,
         constants=(Constant("TMEM_COLUMNS", TMEM_COLUMNS, "columns", "tensor memory of one SM (PTX ISA, "
                             "tcgen05.alloc)",
                             gate="tests/analysis/test_tmem_double_buffer.py::test_tmem_exact_share_and_no_false_out_of_resources"),)),
)
