"""Shared-memory buffers of loops with several dots (attention forward/backward), counted per loaded tile.

A loop with two or more `tl.dot`s (flash attention: q·kᵀ then p·v; backward: up to four dots) shares its
loaded tiles between dots: the K tile of the dQ kernel feeds q·kᵀ and, transposed, ds·k. Triton allocates
one multi-buffered allocation per pipelined *load* (triton lib/Dialect/TritonGPU/Transforms/Pipeliner/
LowerLoops.cpp, lowerLoads: `createAlloc(forOp, loadOp, ..., stageDiff)`), and a `tl.trans` of it is a
`memdesc_trans` view of the same buffer. So buffers are counted once per load, with a depth that depends on
how far apart its uses are scheduled:

* mma.sync (sm_80, and the sm_90/sm_100 fallback for < 4 warps or < 64 rows): num_stages − 1 buffers;
* wgmma (sm_90): num_stages (LowerLoops.cpp, loadRequiresAdditionalBuffer: one more buffer for a wgmma
  operand), however many dots read it;
* tcgen05 (sm_100): every MMA of such a loop is issued asynchronously and waited one stage later
  (AssignLatencies.cpp, AssignMMALatencies: self latency 1), and an MMA that consumes another MMA's result
  is scheduled one stage after it. A buffer lives from its first use to the wait of its last MMA
  (LowerLoops.cpp, getDefUseStageDiff takes the furthest wait_barrier user), so a tile gets
  num_stages + (depth of its last MMA − depth of its first use) buffers, depth counting MMA hops within
  one iteration. Measured (Triton 3.9, sm_100): dQ kernel K tile (q·kᵀ at depth 0, ds·k at depth 1)
  6 buffers at num_stages 5, V tile 5; dK/dV kernel Qᵀ and dO tiles 6 at num_stages 5; forward K and V 3
  at num_stages 3. Each MMA has its own 2-entry mbarrier (16 B): 3 × 16 B in the dQ loop, 4 × 16 B in dK/dV.

Loads that reach a dot operand only through arithmetic (the row statistics m and D of the backward pass) are
pipelined too (AssignLatencies.cpp, loadOpsToIndirectionLevel walks back from every dot operand, through
other dots, to every load at distance 0): num_stages − 1 buffers on every target (measured: 4 × BLOCK_M × 4 B
each for m and D at num_stages 5, sm_80/90/100).

On mma.sync a tile whose unit-stride axis is its first axis (loaded as Kᵀ / Qᵀ, K-contiguous) and that feeds
dots both as loaded and transposed is not pipelined: it stays in registers, gets one shared copy for the
direct use and goes through a layout-conversion scratch for the transposed use. Measured (Triton 3.9,
sm_80): dQ kernel Kᵀ [128, BLOCK_N] → 1 × tile + 512 B × max(4, num_warps) of conversion scratch
(2,048 B at 1/2/4 warps, 4,096 at 8, 8,192 at 16), while the row-major dO tile of the dK/dV kernel,
used the same two ways, is pipelined normally.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernlint.analysis.liveness import Liveness, carried_inits, loop_ops, step_positions
from kernlint.analysis.async_copy import async_copy_bytes
from kernlint.analysis.axis_info import Contiguity
from kernlint.analysis.computed_operands import LOOP_INVARIANT_COMPUTED, Chain, analyse, operand_cost
from kernlint.analysis.placement import DotPlacement, _producer_map, numel, transposed_source
from kernlint.hardware.specs import GpuSpec
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes
from kernlint.ir.symbolic import as_int
from kernlint.ir.walk import walk_upstream

MMA_BARRIER_BYTES = 16          # one 2 × 8-B mbarrier per tcgen05 MMA of the loop (measured, see above)
MMA_WAIT_BARRIER_BYTES = 8      # the 8-B mbarrier an unpipelined tcgen05 MMA is waited on
TRANSPOSE_SCRATCH_PER_WARP = 512  # conversion scratch of a register-resident transposed operand (measured)
_LAYOUT_OPS = (OpKind.TRANS, OpKind.VIEW, OpKind.CAST, OpKind.RESHAPE)


@dataclass
class _Tile:
    load: Op
    nbytes: int
    direct: bool = False        # used as a dot operand as loaded
    transposed: bool = False    # used through tl.trans
    depths: list[int] = field(default_factory=list)   # depths of the dots reading it
    async_users: list[bool] = field(default_factory=list)
    first_use: int = -1         # step index of the first dot reading it


def multi_dot_loops(dots: list[DotPlacement]) -> set[int]:
    """Innermost loops holding two or more dots: their operand buffers are counted here, per tile."""
    count: dict[int, int] = {}
    for d in dots:
        if d.in_loop is not None:
            count[d.in_loop] = count.get(d.in_loop, 0) + 1
    return {loop for loop, n in count.items() if n >= 2}


def _operand_source(value: Value, producers: Mapping[int, Op]) -> tuple[Op | None, bool]:
    """The load behind a dot operand through layout-only ops, and whether a `trans` lies on the way."""
    transposed = False
    op = producers.get(value.id)
    for _ in range(6):
        if op is not None and op.kind == OpKind.IF:  # merged from two branches (EVEN_K masked/unmasked loads)
            then_value = next((a for phi, a, _ in op.merges if phi.id == value.id), None)
            if then_value is None:
                break
            value = then_value
            op = producers.get(value.id)
            continue
        if op is None or op.kind not in _LAYOUT_OPS or not op.operands:
            break
        if op.kind == OpKind.CAST and op.result is not None and op.result.dtype != op.operands[0].dtype:
            break   # a converted load is a computed operand (computed_operands.py)
        transposed ^= op.kind == OpKind.TRANS
        value = op.operands[0]
        op = producers.get(value.id)
    return (op if op is not None and op.kind == OpKind.LOAD else None), transposed


def _upstream(value: Value, producers: Mapping[int, Op], in_loop: set[int]) -> list[Op]:
    """Ops of this loop iteration that a value is computed from (accumulator inputs of dots excluded)."""
    found: list[Op] = []

    def visit(op: Op, v: Value) -> Iterable[Value]:
        if op.id not in in_loop:
            return ()
        found.append(op)
        if op.kind == OpKind.LOAD:
            return ()
        if op.kind == OpKind.IF:
            return [x for phi, then_value, else_value in op.merges if phi.id == v.id
                    for x in (then_value, else_value) if x is not None]
        return op.operands[:2] if op.kind == OpKind.DOT else op.operands

    walk_upstream(value, producers, visit, bound=512)
    return found


def _unit_stride_axis(load: Op, producers: Mapping[int, Op], carried_init: Mapping[int, Value],
                      env: Mapping[str, Any]) -> int | None:
    """Axis along which a 2-D pointer tile advances by one element (axis_info's contiguity), else None."""
    if not load.operands:
        return None
    ptr = load.operands[0]
    info = Contiguity(producers, env).info(carried_init.get(ptr.id, ptr))
    if info is None:
        return None
    axes = [i for i, c in enumerate(info[0]) if c > 1]
    return axes[0] if len(axes) == 1 else None


def _register_resident(tile: _Tile, producers: Mapping[int, Op], carried_init: Mapping[int, Value],
                       env: Mapping[str, Any]) -> bool:
    """mma.sync: a K-contiguous tile read both as loaded and transposed stays in registers (see above)."""
    return (not all(tile.async_users) and tile.direct and tile.transposed and tile.load.result is not None
            and len(tile.load.result.shape) == 2
            and _unit_stride_axis(tile.load, producers, carried_init, env) == 0)


def _unpipelined_peak(tiles: Mapping[int, _Tile], producers: Mapping[int, Op], carried_init: Mapping[int, Value],
                      env: Mapping[str, Any], num_warps: int, step_of: Mapping[int, int],
                      scratch: Sequence[tuple[int, int]] = (), stores: Sequence[int] = ()) -> tuple[str, int, str, int]:
    """num_stages = 1: no multi-buffering; each tile's shared copy lives from its load to its first dot, and
    copies whose ranges overlap add up. Measured (Triton 3.9, sm_80/90/100, 1 warp): dQ kernel 16×16 blocks
    Kᵀ copy + Vᵀ copy live together (8,192 B), the Kᵀ transpose scratch (2,048 B) reuses Vᵀ's place later;
    forward K and V copies never overlap (one 2,048-B place).

    `scratch` (step, bytes): the loop's layout conversions, live at their own step only, so a store's
    conversion after the dots reuses the copies' place. On mma.sync a copy is made right after its load
    (ReorderInstructions), but not across a `tl.store` (`stores`: their steps): then at its dot. Measured
    (Triton 3.9, a one-trip loop, two 64×64 fp16 dots a·b and c·d, 4 warps; tests/analysis/test_smem_folded_loops.py):
    acc1 stored after both dots 32,768 B on sm_80/90 (4 copies, the 8,192-B conversion reusing them), stored
    between the dots 16,384 on sm_80 (c and d copied at their dot) and 32,768 on sm_90."""
    events: list[tuple[int, int, int]] = []   # (start, end, bytes)
    for tile in tiles.values():
        start = step_of[tile.load.id]
        end = max(start, tile.first_use)
        if not any(tile.async_users) and any(start < s < end for s in stores):
            start = end
        events.append((start, end, tile.nbytes))
        if _register_resident(tile, producers, carried_init, env):
            events.append((start, start, TRANSPOSE_SCRATCH_PER_WARP * max(4, num_warps)))
    events.extend((step, step, nbytes) for step, nbytes in scratch)
    points = sorted({e[0] for e in events} | {e[1] for e in events})
    peak = max((sum(b for a, z, b in events if a <= p <= z) for p in points), default=0)
    line = min((t.load.line for t in tiles.values()), default=0)
    return ("unpipelined dot operand copies", peak, "peak of overlapping single copies (num_stages=1)"
            + (" and conversion scratch" if scratch else ""), line)


def _chained_a_staging(loop_dots: list[DotPlacement], producers: Mapping[int, Op], in_loop: set[int],
                       env: Mapping[str, Any], num_warps: int) -> tuple[str, int, str, int] | None:
    """mma.sync A operand computed from another dot's result (attention's P, dS), staged through shared memory.

    For chained dots Triton lays the MMA warps along the longer side of the dot's result (AccelerateMatmul.cpp,
    warpsPerTileV2: [num_warps, 1] when M ≥ N, else [1, num_warps]); with warps along N the accumulator→A
    operand conversion crosses warps and goes through one shared copy of the A tile. Measured (Triton 3.9,
    sm_80, HEAD_DIM 128): forward p·v at BLOCK_M 64 (+64×BLOCK_N×2 B), 32 with 2 warps; none at BLOCK_M ≥ 128;
    one warp needs no exchange. Copies of different dots share one place (dK/dV: pT and dsT at one offset)."""
    if num_warps < 2:
        return None
    best: tuple[str, int, str, int] | None = None
    for d in loop_dots:
        if d.async_mma or d.m is None or d.n is None or d.k is None:
            continue
        operand = d.op.operands[0]
        if _operand_source(operand, producers)[0] is not None:
            continue
        upstream_dots = [u for u in _upstream(operand, producers, in_loop) if u.kind == OpKind.DOT]
        if not upstream_dots:
            continue
        shapes = [(d.m, d.n)] + [(as_int(u.dot_attrs().M.evaluate(env)), as_int(u.dot_attrs().N.evaluate(env)))
                                 for u in upstream_dots]
        if not any(m is not None and n is not None and m < n for m, n in shapes):
            continue
        nbytes = int(d.m * d.k * element_bytes(operand.dtype))
        if best is None or nbytes > best[1]:
            best = ("chained dot operand copy", nbytes, f"1 × {d.m}×{d.k} A tile (mma.sync, warps along N)",
                    d.op.line)
    return best


def loop_dot_buffers(live: Liveness, dots: list[DotPlacement], loop_id: int, env: Mapping[str, Any],
                     spec: GpuSpec, num_warps: int, stages: int,
                     scratch: Sequence[tuple[int, int]] = ()) -> list[tuple[str, int, str, int]]:
    """(label, bytes, detail, line) of the shared buffers one multi-dot loop keeps alive; `scratch` (step,
    bytes) are the loop's conversions, timed against the copies when the loop is not pipelined."""
    producers = _producer_map(live)
    in_loop = {s.op.id for s in live.steps if not s.is_end and loop_id in s.loops}
    carried_init = carried_inits(live)
    loop_dots = [d for d in dots if d.in_loop == loop_id]
    step_of = step_positions(live)
    loop_dots.sort(key=lambda d: step_of[d.op.id])
    depth: dict[int, int] = {}
    for d in loop_dots:
        ups = [op for operand in d.op.operands[:2] for op in _upstream(operand, producers, in_loop)]
        depth[d.op.id] = max((depth[u.id] + 1 for u in ups if u.kind == OpKind.DOT and u.id in depth), default=0)
    tiles: dict[int, _Tile] = {}
    staged: dict[int, tuple[int, int]] = {}
    for d in loop_dots:
        for operand in d.op.operands[:2]:
            load, transposed = _operand_source(operand, producers)
            if load is None or load.result is None:
                continue
            size = numel(load.result, env)
            nbytes = int(size * element_bytes(load.result.dtype)) if size else 0
            if load.id not in in_loop:  # loop-invariant operand (attention's Q, the backward's K and V)
                staged[load.id] = (nbytes, d.op.line)
                continue
            tile = tiles.setdefault(load.id, _Tile(load, nbytes))
            tile.transposed |= transposed
            tile.direct |= not transposed
            tile.depths.append(depth[d.op.id])
            tile.async_users.append(d.async_mma)
            if tile.first_use < 0:
                tile.first_use = step_of[d.op.id]
    out: list[tuple[str, int, str, int]] = []
    for nbytes, line in staged.values():
        out.append(("loop-invariant dot operand", nbytes, f"1 × {nbytes:,} B", line))
    out.extend(_computed_operands(live, loop_dots, loop_id, producers, in_loop, env, spec, num_warps,
                                  stages, one_at_a_time=stages <= 1 or not any(d.async_mma for d in loop_dots)))
    if stages <= 1:
        stores = [step_of[s.op.id] for s in live.steps if not s.is_end and s.op.kind == OpKind.STORE
                  and s.op.id in in_loop]
        out.append(_unpipelined_peak(tiles, producers, carried_init, env, num_warps, step_of, scratch, stores))
        if spec.mma.stages_every_operand_load and any(d.async_mma for d in loop_dots):
            # each MMA waits on its own 8-B mbarrier, one at a time (TTGIR: local_alloc 1xi64, init, wait, inval
            # around every tc_gen5_mma; fla chunk_bwd_kernel_dqkwg and the suite above: copies + 8 B on sm_100;
            # q·kᵀ then p·v at 64×64×64, 4 warps, num_stages 1 and flash-attn AMD attn_fwd folded: 16,392 / 65,544 B)
            out.append(("mbarriers", MMA_WAIT_BARRIER_BYTES, "one MMA completion barrier at a time",
                        loop_dots[0].op.line))
        return out
    all_tcgen05 = spec.mma.stages_every_operand_load and all(d.async_mma for d in loop_dots)
    transient: list[tuple[str, int, str, int]] = []
    for tile in tiles.values():
        line = tile.load.line
        if _narrower_than_cp_async(tile.load, producers, env, loops=loop_ops(live)):
            # under 4 B per thread (contiguity, alignment, mask: axis_divisibility.py): no cp.async, a register
            # load copied once into shared memory for the loop's MMAs. Measured (Triton 3.9, Kᵀ read at
            # k_ptr + n·1 + d, so rows start at every element; tests/analysis/test_register_loaded_operands.py): one
            # copy beside V's num_stages − 1 / num_stages / num_stages buffers on sm_80 / sm_90 / sm_100, as
            # unsloth _lh_fwd (HEAD_DIM 128, 8 warps, 3 stages): 131,072 / 163,840 / 163,872 B
            out.append(("register-loaded dot operand", tile.nbytes,
                        f"1 × {tile.nbytes:,} B (under 4 B per thread: no cp.async)", line))
            continue
        if not all(tile.async_users):
            if _register_resident(tile, producers, carried_init, env):
                scratch = TRANSPOSE_SCRATCH_PER_WARP * max(4, num_warps)
                transient.append(("dot operand kept in registers", tile.nbytes, f"1 × {tile.nbytes:,} B "
                                  "(mma.sync, K-contiguous tile also read transposed: not pipelined)", line))
                transient.append(("transpose conversion", scratch, f"{TRANSPOSE_SCRATCH_PER_WARP} B × "
                                  f"max(4, num_warps={num_warps})", line))
                continue
            buffers = max(1, stages - 1)
            kind = "mma.sync"
        elif all_tcgen05:
            buffers = stages + max(tile.depths) - min(tile.depths)
            kind = "tcgen05"
        else:
            buffers = stages
            kind = spec.tensor_core
        out.append(("dot operands", buffers * tile.nbytes,
                    f"{buffers} × {tile.nbytes:,} B ({kind}, num_stages={stages})", line))
    chained = _chained_a_staging(loop_dots, producers, in_loop, env, num_warps)
    # The register-resident copy dies at its first dot, the staged A operand is written after it: Triton's
    # allocator gives both the same place (measured, sm_80 dQ 64×32: ds copy at the Kᵀ copy's offset).
    if chained and chained[1] > sum(b for _, b, _, _ in transient):
        transient = [chained]
    out.extend(transient)
    if stages >= 2:  # loads feeding dot operands through arithmetic (row statistics)
        seen = set(tiles)
        transposed: set[int] = set()
        for d in loop_dots:
            for operand in d.op.operands[:2]:
                # a computed operand that is transposed: staged once, its 2-D loads stay in registers except
                # on tcgen05 (placement.transposed_source has the measurements; v3 there: two dots sharing Aᵀ)
                through = transposed_source(operand, producers, lambda o: o.id in in_loop) \
                    if _operand_source(operand, producers)[0] is None else None
                if through is not None and through.id not in transposed:
                    transposed.add(through.id)
                    size = numel(operand, env)
                    nbytes = int(size * element_bytes(operand.dtype)) if size else 0
                    out.append(("transposed dot operand", nbytes, f"1 × {nbytes:,} B", d.op.line))
                for op in _upstream(operand, producers, in_loop):
                    if op.kind != OpKind.LOAD or op.id in seen or op.result is None or not op.result.shape:
                        continue
                    seen.add(op.id)
                    if _narrower_than_cp_async(op, producers, env):
                        continue
                    if through is not None and len(op.result.shape) == len(operand.shape) and not all_tcgen05:
                        continue
                    size = numel(op.result, env)
                    nbytes = int(size * element_bytes(op.result.dtype)) if size else 0
                    out.append(("pipelined load feeding a dot", (stages - 1) * nbytes,
                                f"{stages - 1} × {nbytes:,} B", op.line))
    if all_tcgen05:
        out.append(("mbarriers", MMA_BARRIER_BYTES * len(loop_dots), f"{len(loop_dots)} MMAs × 16 B",
                    loop_dots[0].op.line))
    return out


def _computed_operands(live: Liveness, loop_dots: list[DotPlacement], loop_id: int, producers: Mapping[int, Op],
                       in_loop: set[int], env: Mapping[str, Any], spec: GpuSpec, num_warps: int, stages: int,
                       one_at_a_time: bool) -> list[tuple[str, int, str, int]]:
    """Staged copies and conversion scratch of the computed operands of the loop's dots (computed_operands.py);
    the loads they are computed from are counted with the other loads feeding dots below. fla wall-attention
    forward, 128×64×128 tiles, 8 warps, 3 stages (Triton 3.9): its first loop stages the loop-invariant
    q̃ (32,768 B) and the computed k̃ (16,384 B) on sm_90 and sm_100, q̃ only on sm_80; its second loop stages
    the fp32 q̃ computed from tiles loaded before the loop (65,536 B) on sm_80 and sm_90.

    A copy written before an mma.sync dot is dead once the dot has read it, so with `one_at_a_time` (no
    async MMA in the loop, or a loop that is not pipelined) only the largest dot's copies count. Measured
    (Triton 3.9, fla gdn2 chunk_gdn2_fwd_kernel_inter_solve_fused, a one-trip loop of six 16-row dots whose
    operands are masked with `tl.where`): 8,192 B at BK = 64 and 16,384 at BK = 128 on sm_80/90/100, one
    dot's [16, BK] A and [BK, 16] Bᵀ fp32 copies."""
    out: list[tuple[str, int, str, int]] = []
    seen: set[int] = set()

    def load_inside(o: Op) -> bool:
        return o.id in in_loop

    for d in loop_dots:
        chains: list[Chain | None] = []
        for operand in d.op.operands[:2]:
            chain = None
            if _operand_source(operand, producers)[0] is None and not d.fma:
                if transposed_source(operand, producers, load_inside) is None:
                    chain = analyse(operand, loop_id, live, producers, env, load_inside, num_warps)
                elif stages <= 1 and operand.id not in seen:
                    # a transposed computed tile is staged (placement.transposed_source); counted below with
                    # the pipelined loads when the loop is pipelined
                    seen.add(operand.id)
                    size = numel(operand, env)
                    nbytes = int(size * element_bytes(operand.dtype)) if size else 0
                    out.append(("transposed dot operand", nbytes, f"1 × {nbytes:,} B", d.op.line))
            chains.append(chain)
        family = spec.tensor_core if d.async_mma else "mma_sync"
        for i, chain in enumerate(chains):
            operand = d.op.operands[i]
            if chain is None or operand.id in seen:
                continue
            seen.add(operand.id)
            cost = operand_cost(operand, i, chain, chains[1 - i], family, env, num_warps)
            if cost.staged:
                label = LOOP_INVARIANT_COMPUTED if cost.invariant else "computed dot operand"
                out.append((label, cost.staged, f"1 × {cost.staged:,} B ({cost.reason})", d.op.line))
            if cost.scratch:
                out.append(("dot operand conversion", cost.scratch, f"{cost.scratch:,} B ({cost.reason})", d.op.line))
    if one_at_a_time:
        per_dot: dict[int, int] = {}
        for label, nbytes, _, line in out:
            if label != LOOP_INVARIANT_COMPUTED:
                per_dot[line] = per_dot.get(line, 0) + nbytes
        widest = max(per_dot, key=lambda line: per_dot[line], default=None)
        out = [b for b in out if b[0] == LOOP_INVARIANT_COMPUTED or b[3] == widest]
    return out


def _narrower_than_cp_async(load: Op, producers: Mapping[int, Op], env: Mapping[str, Any],
                            carried: Mapping[int, Value] | None = None, loops: Sequence[Op] = ()) -> bool:
    """cp.async copies 4, 8 or 16 bytes, so a load whose contiguous run is under 4 bytes stays a register load
    and gets no buffer (AssignLatencies.cpp, isSmallLoad; operand_loads.scalar_loaded, for operand tiles). Measured
    (Triton 3.9, sm_80/90/100, fla parallel_deltaformer_bwd_kernel_u): the fp16 row statistics loaded with
    stride H (`lse_ptr + o_kv * H`) remain `tt.load`s, while fp32 statistics (attention backward's m and D)
    are pipelined."""
    width = async_copy_bytes(load, producers, env, carried, loops)  # contiguity, alignment, mask (axis_divisibility)
    return width is not None and width < 4
