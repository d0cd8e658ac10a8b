"""mma.sync A operands computed through a `tl.where`: one shared copy of the tile each, from its definition to
the first dot that reads it.

On mma.sync (sm_80, and the sm_90/sm_100 fallback for small tiles) a computed A operand reaches the dot-operand
layout through shared memory unless Triton can move that conversion up to the load the operand is computed
from (OptimizeDotOperands.cpp, HoistLayoutConversion): then the loaded tile itself is what goes through shared
memory. A `tl.where` (arith.select) on the way blocks it (canHoistDotOpEncV2), and ReduceDataDuplication
turns the conversion into a `local_alloc` of the whole computed tile right after its definition and a
`local_load` right before its first dot; several such tiles defined before their dots are alive together.
Measured (Triton 3.9, sm_80, and sm_90/100 at 16-row tiles, 4 warps, tests/analysis/test_smem_scratch_mechanisms.py):
`a * 2`, `a * s[None, :]`, `exp2(a)`, `a * g`, `(a.to(fp32) * 2).to(fp16)` keep one shared copy of the
loaded A; `tl.where(m, a, 0)`, `a * tl.where(m, g, 0)`, `tl.where(m, g, 0) * a`, `exp2(tl.where(..)) * 2`
stage the computed tile: 16×64 fp32 A + 64×16 B = 8,192 B where 4,096 was counted. fla's
chunk_gdn2_fwd_kernel_inter_solve_fused computes two [16, BK] fp32 A tiles (q·g and b·k·g, each read by two
dots) before their dots: 2 × 16 × BK × 4 B (8,192 B at BK 64, 16,384 at BK 128).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kernlint.analysis.liveness import Liveness, derived, step_positions
from kernlint.analysis.placement import DotPlacement, _source_load, numel
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes
from kernlint.ir.walk import walk_upstream
from kernlint.ir.cache_keys import Analysis

LABEL = "staged A operand"
_THROUGH = (OpKind.ELEMENTWISE, OpKind.CAST, OpKind.VIEW, OpKind.RESHAPE, OpKind.TRANS)


def _merges(live: Liveness) -> dict[int, tuple[Value, ...]]:
    """Loop-carried values and if-merges → the values that flow into them."""
    out: dict[int, tuple[Value, ...]] = {}
    for s in live.steps:
        if s.is_end:
            continue
        if s.op.kind == OpKind.FOR:
            out.update({c.arg.id: (c.init, c.yielded) for c in s.op.carried})
        elif s.op.kind == OpKind.IF:
            out.update({phi.id: tuple(x for x in (a, b) if x is not None)
                        for phi, a, b in s.op.merges})
    return out


def _through_where(operand: Value, producers: Mapping[int, Op], merges: Mapping[int, tuple[Value, ...]]) -> bool:
    """Whether the operand is computed element-wise from loads with a `tl.where` on the way (and no dot: a
    dot's product reaches the operand layout from the MMA layout instead)."""
    found = {"where": False, "dot": False}

    def visit(op: Op, v: Value) -> Iterable[Value]:
        if op.kind == OpKind.DOT:
            found["dot"] = True
            return ()
        if op.kind not in _THROUGH:
            return ()
        if op.kind == OpKind.ELEMENTWISE and op.fn == "where":
            found["where"] = True
        return [x for x in op.operands if x.shape]

    walk_upstream(operand, producers, visit, bound=256, through=merges)
    return found["where"] and not found["dot"]


def staged_a_spans(live: Liveness, dots: list[DotPlacement], producers: Mapping[int, Op],
                   env: Mapping[str, Any]) -> list[tuple[int | None, int, int, int, int]]:
    """Each staged A tile as (loop, first step, last step, bytes, line), steps indexing live.steps: a straight-
    line region (smem_straight.py) puts them on its own timeline, where adding their peak to the region's
    over-counts tiles that are not alive at the region's peak (fla gdn2: 11,264 B against Triton's 8,192)."""
    merges = derived(live, Analysis.STAGED_A_MERGES.key(), lambda: _merges(live))
    step_of = step_positions(live)
    spans: dict[int, tuple[int | None, int, int, int, int]] = {}   # operand id → (loop, start, end, bytes, line)
    for d in dots:
        # a dot in a loop: its computed operands are placed by computed_operands.py (placement.place_dots)
        if d.async_mma or d.fma or len(d.op.operands) < 2 or d.op.id not in step_of or d.in_loop is not None:
            continue
        a = d.op.operands[0]
        if a.id in spans:
            continue   # read again by a later dot: the first local_load already took it out of shared memory
        producer = producers.get(a.id)
        if producer is None or producer.id not in step_of or _source_load(a, producers) is not None \
                or not _through_where(a, producers, merges):
            continue
        size = numel(a, env)
        if size is None:
            continue
        spans[a.id] = (d.in_loop, step_of[producer.id], step_of[d.op.id], int(size * element_bytes(a.dtype)),
                       producer.line)
    return list(spans.values())


def staged_a_operands(live: Liveness, dots: list[DotPlacement], producers: Mapping[int, Op],
                      env: Mapping[str, Any]) -> dict[int | None, tuple[int, str, int]]:
    """Loop (None: top level) → (peak bytes of the staged A tiles alive together, detail, line)."""
    spans = {i: span for i, span in enumerate(staged_a_spans(live, dots, producers, env))}
    out: dict[int | None, tuple[int, str, int]] = {}
    for loop in {s[0] for s in spans.values()}:
        group = [s for s in spans.values() if s[0] == loop]
        peak, count = 0, 0
        for point in sorted({s[1] for s in group}):
            alive = [s for s in group if s[1] <= point <= s[2]]
            if sum(s[3] for s in alive) > peak:
                peak, count = sum(s[3] for s in alive), len(alive)
        line = min(s[4] for s in group)
        out[loop] = (peak, f"{count} computed A tile(s) through tl.where, staged for mma.sync", line)
    return out
