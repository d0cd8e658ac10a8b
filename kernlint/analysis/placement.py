"""Where dot operands and accumulators live for one (config, target): registers, shared or tensor memory.

Triton's software pipeliner turns the loads that feed a `tl.dot` inside a loop into asynchronous copies
into shared memory (cp.async on sm_80, TMA/cp.async + wgmma on sm_90, tcgen05 on sm_100); the MMA reads
them from there. On sm_100 the accumulator lives in tensor memory (`metadata.tmem_size`).
Facts measured with Triton 3.9 / ptxas 13.4 and on an H200 with Triton 3.6 (docs/design.md, "Ground truth").
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kernlint.analysis.axis_info import load_vector_bytes
from kernlint.analysis.computed_operands import Chain, OperandCost, analyse, operand_cost
from kernlint.analysis.operand_loads import (  # noqa: F401 - numel is imported from here by other modules
    fma_dot as _fma_dot, narrow_async_copy as _narrow_async_copy, numel,
    mn_major_8bit_b as _mn_major_8bit_b, register_loaded_b as _register_loaded_b, scalar_loaded as _scalar_loaded,
)
from kernlint.analysis.liveness import Liveness, carried_inits, invariant_load, loop_ops, producers as producers_of
from kernlint.hardware.specs import MMA_FAMILIES, GpuSpec
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes
from kernlint.ir.symbolic import as_int
from kernlint.ir.walk import walk_upstream


@dataclass(frozen=True, slots=True)
class DotPlacement:
    op: Op
    m: int | None
    n: int | None
    k: int | None
    in_loop: int | None            # id of the innermost enclosing loop
    async_mma: bool                # wgmma / tcgen05 (vs mma.sync)
    pipelined_operands: tuple[Value, ...]  # load results that go straight to shared memory
    operand_bytes: int             # bytes of one stage of the pipelined operands
    tmem_accumulator: bool
    staged_bytes: int = 0          # loaded operands from outside the loop, kept once in shared memory
    tma: bool = False              # pipelined operands come from tensor descriptors (TMA copies)
    operand_views: tuple[Value, ...] = ()  # reshape/trans views between those loads and the dot
    computed_operand_bytes: int = 0  # an operand computed in the loop (dequantised B), staged once
    feeding_load_bytes: int = 0      # loads of the loop that feed such an operand (pipelined, stages − 1)
    register_pipelined: tuple[Value, ...] = ()  # operand loads kept in registers, num_stages − 1 in flight
    fma: bool = False              # fp32 ieee dot: FMA, no tensor-core (MMA) accumulator layout
    element_loaded: tuple[Value, ...] = ()  # of register_pipelined: loaded element by element, not pipelined
    staged_loads: tuple[tuple[int, int], ...] = ()  # (load op id, bytes) making up staged_bytes
    operand_scratch_bytes: int = 0   # conversion scratch of a computed operand, alive with the loop's buffers
    invariant_operand_bytes: int = 0  # loop-invariant computed operands, copied once before the loop


def _producer_map(live: Liveness) -> dict[int, Op]:
    return producers_of(live)


def _source_load(value: Value, producers: Mapping[int, Op]) -> Op | None:
    """The load feeding a dot operand, looking through layout-only ops (trans, view, cast)."""
    op = producers.get(value.id)
    hops = 0
    while op is not None and op.kind in (OpKind.TRANS, OpKind.VIEW, OpKind.CAST, OpKind.RESHAPE, OpKind.IF) and hops < 4:
        if op.kind == OpKind.IF:  # a value merged from two branches (e.g. EVEN_K masked/unmasked loads)
            branch_value = _merged_source(op, value, producers)
            if branch_value is None:
                return None
            value = branch_value
        elif op.kind == OpKind.CAST and op.operands and op.result is not None \
                and op.result.dtype != op.operands[0].dtype:
            return None   # a converted load (int8 → fp16) is a computed operand (computed_operands.py)
        elif op.operands:
            value = op.operands[0]
        op = producers.get(value.id)
        hops += 1
    return op if op is not None and op.kind == OpKind.LOAD else None


def _merged_source(op: Op, value: Value, producers: Mapping[int, Op]) -> Value | None:
    """The branch value an `if` result is merged from: the then-branch's, unless only the else-branch was
    lowered for this config (`if EVEN_K:` with EVEN_K false; the untaken branch defines nothing)."""
    for phi, then_value, else_value in op.merges:
        if phi.id == value.id:
            if then_value.id not in producers and else_value.id in producers:
                return else_value
            return then_value
    return None


def _feeding_loads(operand: Value, producers: Mapping[int, Op], loop_id: int,
                   step_loops: Mapping[int, tuple[int, ...]]) -> list[Op]:
    """Tile loads inside the loop that a computed dot operand is derived from."""
    found: list[Op] = []
    from_mma = False

    def visit(op: Op, _: Value) -> Iterable[Value]:
        nonlocal from_mma
        if loop_id not in step_loops.get(op.id, ()):
            return ()
        if op.kind == OpKind.LOAD:
            if op.result is not None and op.result.shape:
                found.append(op)
            return ()
        if op.kind == OpKind.DOT:  # derived from an MMA result (attention's P): it stays in registers
            from_mma = True
            return ()
        return [v for v in op.operands if v.shape]

    walk_upstream(operand, producers, visit)
    return [] if from_mma else found


def transposed_source(operand: Value, producers: Mapping[int, Op], inside: Callable[[Op], bool]) -> Value | None:
    """The tile a computed dot operand transposes (the input of a `tl.trans` between the operand and the
    loop's loads it is computed from), else None.

    Triton keeps such an operand's 2-D loads in registers and passes the transposed tile through shared
    memory once, where an untransposed computed operand has its loads pipelined. Measured (Triton 3.9,
    BT = BK = BV = 64, A = (k · s[:, None]) with k [BT, BK] fp16 and s [BT] fp32, B [BT, BV] fp16):
    dot(trans(A), B) at 4 warps, 3 stages: sm_80 2 × 8,192 (B) + 8,192 (Aᵀ) + 2 × 256 (s) = 25,088 B,
    sm_90 3 × 8,192 + 8,192 + 512 = 33,280 B; sm_100 pipelines k as well: 3 × 8,192 + 2 × 8,192 + 8,192 +
    512 + 16 = 49,680 B. dot(A, B') with A untransposed: sm_80 2 × 8,192 + 2 × 8,192 (k) + 512 = 33,280 B.
    (tests/analysis/test_transposed_operand.py)"""
    found: list[Value] = []

    def visit(op: Op, _: Value) -> Iterable[Value]:
        if not inside(op) or op.kind in (OpKind.LOAD, OpKind.DOT):
            return ()
        # a transposed row or column ([1, K] → [K, 1], broadcast afterwards) is not a transposed tile: fla
        # wall-attention's k · exp2(rᵀ − g) is read from its pipelined loads like any computed operand
        if op.kind == OpKind.TRANS and op.operands and not any(as_int(d.evaluate({})) == 1 for d in op.operands[0].shape):
            found.append(op.operands[0])
        return [v for v in op.operands if v.shape]

    walk_upstream(operand, producers, visit)
    return found[0] if found else None


def _views_between(operand: Value, source: Value, producers: Mapping[int, Op]) -> list[Value]:
    """Layout-only values from a pipelined load to the dot: they are the same shared-memory buffer."""
    out: list[Value] = []
    value = operand
    while value.id != source.id and len(out) < 4:
        op = producers.get(value.id)
        if op is not None and op.kind == OpKind.IF:
            # `a = tl.load(...)` under `if EVEN_K:` / `else:`: the merged value is the branch's load, which
            # Triton (the constexpr branch resolved at compile time) pipelines into shared memory like any
            # operand load. Measured (Triton 3.9, sm_90, examples/batched_matmul.py bmm_kernel 64×64×64 w4
            # s4): both loads are ttg.async_copy_global_to_local into 4 buffers, 64 registers in all.
            branch_value = _merged_source(op, value, producers)
            if branch_value is None:
                return []
            out.append(value)
            value = branch_value
            continue
        if op is None or op.kind not in (OpKind.TRANS, OpKind.VIEW, OpKind.RESHAPE) or not op.operands:
            return []
        out.append(value)
        value = op.operands[0]
    return out


def mma_family(tensor_core: str, num_warps: int) -> str:
    """The MMA family a config's dots lower to. Measured (Triton 3.9, sm_100): 16-warp dots fall back to
    mma.sync — no TMEM, num_stages − 1 operand buffers (128×128×64 w16 s4 → 98,304 B, tmem 0) — and ptxas
    then allocates like sm_80: attention backward dq 128×32 · 16 warps 64 registers + 1,464 B spilled on
    sm_100, 64 + 1,488 B on sm_80."""
    return "mma_sync" if num_warps > MMA_FAMILIES[tensor_core].max_warps else tensor_core


def _hoisted(op: Op, loops: tuple[int, ...], live: Liveness, producers: Mapping[int, Op]) -> tuple[int, ...]:
    """The loops an op really runs in: a load of the same tile every iteration is loaded once, like one
    before the loop (Triton 3.9: a dot loop whose A and B addresses never move, 128×64×32 fp32 at 1 warp and
    num_stages 4, stages both operands once, 24,576 B, where pipelining them would take 3 × 24,576)."""
    if loops and invariant_load(op, loops[-1], live, producers):
        return loops[:-1]
    return loops


def _computed_costs(op: Op, loop_id: int, live: Liveness, producers: Mapping[int, Op], env: Mapping[str, Any],
                    step_loops: Mapping[int, tuple[int, ...]], async_mma: bool, spec: GpuSpec,
                    num_warps: int) -> list[OperandCost | None]:
    """The cost of each computed operand of a dot in a loop (computed_operands.py), None where the older
    rules apply: loaded operands, another dot's result, loop-carried values, transposed tiles, FMA dots."""
    if _fma_dot(op, env):
        return [None, None]
    def load_inside(o: Op) -> bool:
        return loop_id in step_loops.get(o.id, ())
    chains: list[Chain | None] = []
    for operand in op.operands[:2]:
        chain = None
        if _source_load(operand, producers) is None and transposed_source(operand, producers, load_inside) is None:
            chain = analyse(operand, loop_id, live, producers, env, load_inside, num_warps)
        chains.append(chain)
    family = spec.tensor_core if async_mma else "mma_sync"
    return [None if chain is None else operand_cost(op.operands[i], i, chain, chains[1 - i], family, env, num_warps)
            for i, chain in enumerate(chains)]


def _pipelined_bytes(load: Op, producers: Mapping[int, Op], carried_init: Mapping[int, Value], env: Mapping[str, Any],
                     num_warps: int) -> int:
    """Bytes of one pipeline stage of a load feeding a computed operand: cp.async copies 4, 8 or 16 B, so a
    narrower per-thread run stays a register load (AssignLatencies.cpp, isSmallLoad): a strided fp16 row
    (mamba-ssm _chunk_scan_bwd_dstates_kernel's dA_cumsum, stride_dA_cs_csize unknown: not pipelined,
    32,768 B at 64×64×64 s3 on sm_80 = dout and C only) or a 2-B scalar. A loaded fp32 scalar is pipelined
    (measured: x · c with c = tl.load(c_ptr + i), 2 × 4 B at 3 stages on sm_80/90/100)."""
    res = load.result
    width = load_vector_bytes(load, producers, env, carried_init)
    if res is None or _narrow_async_copy(res, env, num_warps) or (width is not None and width < 4):
        return 0
    size = numel(res, env)
    if not size or (not res.shape and element_bytes(res.dtype) < 4):
        return 0
    return int(size * element_bytes(res.dtype))


def place_dots(live: Liveness, env: Mapping[str, Any], spec: GpuSpec, num_warps: int) -> list[DotPlacement]:
    producers = _producer_map(live)
    carried = carried_inits(live)
    all_loops = loop_ops(live)
    raw_loops = {s.op.id: s.loops for s in live.steps if not s.is_end}
    hoisted_loops = {s.op.id: _hoisted(s.op, s.loops, live, producers) for s in live.steps if not s.is_end}
    out: list[DotPlacement] = []
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind != OpKind.DOT:
            continue
        dot = op.dot_attrs()
        m, n, k = (as_int(x.evaluate(env)) for x in (dot.M, dot.N, dot.K))
        loops = step.loops
        in_loop = loops[-1] if loops else None
        # wgmma needs a warpgroup (4 warps) and 64-row tiles; otherwise Triton falls back to mma.sync.
        async_mma = (spec.mma.async_mma and num_warps >= 4 and (m or 0) >= 64
                     and not _fma_dot(op, env))
        if mma_family(spec.tensor_core, num_warps) != spec.tensor_core:
            async_mma = False
        # tcgen05's pipeliner stages every load feeding the MMA, moving or not (Triton 3.9, sm_100, the same
        # 128×128×64 operands every trip at 4 warps, num_stages 3: 3 × 32,768 + 16 B; sm_80/sm_90: 32,768 B)
        step_loops = raw_loops if spec.mma.stages_every_operand_load and async_mma else hoisted_loops
        pipelined: list[Value] = []
        nbytes = staged = 0
        staged_loads: list[tuple[int, int]] = []
        tma = False
        views: list[Value] = []
        for operand in op.operands[:2]:
            load = _source_load(operand, producers)
            if load is not None and (in_loop is None or in_loop not in step_loops.get(load.id, ())):
                # Loaded once (e.g. attention's Q tile before the KV loop): the MMA still reads it from
                # shared memory, in one buffer. Measured: attention smem = pipeline + BLOCK_M·HEAD_DIM·2 B.
                size = numel(load.result, env) if load.result is not None else None
                if size is not None and load.result is not None:
                    staged += int(size * element_bytes(load.result.dtype))
                    staged_loads.append((load.id, int(size * element_bytes(load.result.dtype))))
        computed = feeding = scratch = invariant_copy = 0
        in_registers: list[Value] = []
        element_loaded: list[Value] = []
        if in_loop is not None:
            # computed operands (computed_operands.py): staged, converted or read from their pipelined loads
            costs = _computed_costs(op, in_loop, live, producers, env, step_loops, async_mma, spec, num_warps)
            for cost in costs:
                if cost is None:
                    continue
                if cost.invariant:
                    invariant_copy += cost.staged
                else:
                    computed += cost.staged
                scratch += cost.scratch
                feeding += sum(_pipelined_bytes(load, producers, carried, env, num_warps) for load in cost.feeding)
            a_operand = op.operands[0]
            if costs[0] is None and _source_load(a_operand, producers) is None:
                # A computed in the loop from loaded tiles (mamba's dout · exp(dA)): the MMA takes A from
                # registers, so its feeding loads are pipelined (num_stages − 1 buffers). Measured (Triton
                # 3.9, mamba-ssm _chunk_scan_bwd_dstates_kernel 64×64×64 s3): sm_80 2 × 8,192 (dout) +
                # 2 × 8,192 (B) = 32,768 B; sm_90 2 × 8,192 + 3 × 8,192 = 40,960 B. Row statistics that scale
                # it are pipelined too (2 × 256 B for a [64] fp32 row at s3: transposed_source's probe). A
                # transposed operand keeps its 2-D loads in registers and is staged once (transposed_source).
                loads = _feeding_loads(a_operand, producers, in_loop, step_loops)
                through = transposed_source(a_operand, producers,
                                            lambda o: in_loop in step_loops.get(o.id, ())) if loads else None
                for load in loads:
                    res = load.result
                    # a load under 4 B per thread is no cp.async: it stays a register load (mamba's dA_cs_k,
                    # fp16 at a run-time stride: 40,960 B on sm_90 is dout's 2 × 8,192 + B's 3 × 8,192 only)
                    if res is None or _narrow_async_copy(res, env, num_warps) \
                            or _scalar_loaded(load, producers, env, carried, all_loops):
                        continue
                    if through is not None and len(res.shape) == len(a_operand.shape) \
                            and not (async_mma and spec.mma.stages_every_operand_load):
                        continue
                    lsize = numel(res, env)
                    feeding += int(lsize * element_bytes(res.dtype)) if lsize else 0
                if through is not None:
                    size = numel(a_operand, env)
                    computed += int(size * element_bytes(a_operand.dtype)) if size else 0
            for operand in op.operands[1:2] if costs[1] is None else ():
                if _source_load(operand, producers) is None:
                    # Measured (Triton 3.9, w4a16 matmul, all targets): the raw int32 weights, scales and
                    # zero points are pipelined into num_stages − 1 buffers and the dequantised operand is
                    # written to one more buffer for the MMA.
                    loads = _feeding_loads(operand, producers, in_loop, step_loops)
                    if loads:
                        size = numel(operand, env)
                        computed += int(size * element_bytes(operand.dtype)) if size else 0
                        for load in loads:
                            narrow = _scalar_loaded(load, producers, env, carried, all_loops)
                            if load.result is not None and (_narrow_async_copy(load.result, env, num_warps) or narrow):
                                continue
                            lsize = numel(load.result, env) if load.result is not None else None
                            if lsize and load.result is not None:
                                feeding += int(lsize * element_bytes(load.result.dtype))
            for index, operand in enumerate(op.operands[:2]):
                load = _source_load(operand, producers)
                scalar = load is not None and _scalar_loaded(load, producers, env, loops=all_loops)
                # an N-contiguous 8-bit B on wgmma: a plain load each trip, written once transposed
                unstaged = index == 1 and load is not None and async_mma \
                    and _mn_major_8bit_b(operand, load, producers, env, carried, spec)
                if load is not None and ((index == 1 and _register_loaded_b(operand, load, producers, spec))
                                         or scalar or unstaged):
                    if in_loop not in step_loops.get(load.id, ()):
                        # the same tile every trip: loaded once and already counted in `staged`. Measured
                        # (Triton 3.9, fuzz case: unit-stride-free A and B read at fixed addresses in a dot
                        # loop, 32/64×128×64 fp16, 8 warps): 20,480 / 24,576 B on sm_80 and sm_90, one copy
                        continue
                    size = numel(operand, env)
                    computed += int(size * element_bytes(operand.dtype)) if size else 0
                    if load.result is not None and in_loop in step_loops.get(load.id, ()):
                        in_registers.append(load.result)
                        if scalar or unstaged:
                            element_loaded.append(load.result)
                    continue
                if load is not None and in_loop in step_loops.get(load.id, ()):
                    src = load.result
                    assert src is not None
                    pipelined.append(src)
                    views.extend(_views_between(operand, src, producers))
                    tma = tma or bool(load.operands and load.operands[0].dtype.startswith("desc<"))
                    size = numel(src, env)
                    if size is not None:
                        nbytes += int(size * element_bytes(src.dtype))
        tmem = spec.mma.tmem_accumulator and async_mma
        out.append(DotPlacement(op, m, n, k, in_loop, async_mma, tuple(pipelined), nbytes, tmem, staged, tma, tuple(views), computed,
                                feeding, tuple(in_registers), _fma_dot(op, env), tuple(element_loaded),
                                tuple(staged_loads), scratch, invariant_copy))
    return out
