"""Shared memory of straight-line dots, including the dots of loops folded away (one trip), on one timeline.

A loop whose constexpr bounds give one trip is removed by MLIR's canonicaliser before anything is scheduled,
so its dots and the dots after it are one straight-line block: each loaded operand's shared copy lives from
its load to the last dot reading it, and copies of different dots overlap only where their ranges do.

Triton's combine pass (lib/Dialect/Triton/Transforms/Combine.td, CombineDotAddF[Rev]Pattern) rewrites
`add(dot(a, b, 0), d)` — a dot with a zero accumulator whose result has one use, an add — into `dot(a, b, d)`
created at the add: the MMA moves down to the add, and the copies of a and b live until there. fla's
`b_dk = tl.dot(b_v, b_dh, b_dk)` in a one-trip loop followed by `b_dk += tl.dot(tl.trans(b_ds), b_q) * scale`
after it keeps b_v and b_dh alive next to b_q, b_k and the copy of trans(b_ds): 5 tiles. Measured (Triton 3.9,
fla chunk_bwd_kernel_dqkwg 64×64 tiles, 4 warps, TTGIR: the b_v·b_dh dot is the kernel's last): sm_80 40,960 B,
sm_90 32,768, sm_100 40,968; two straight-line 64×64 dots x = a·b, y = c·d: `x + 2y` 32,768 B on every target,
`2x + y` 16,384 (tests/analysis/test_smem_straight_line_fold.py).

A computed operand that is transposed is copied to shared memory once (placement.transposed_source): on mma.sync
and tcgen05 where the transposed value is produced (ReorderInstructions moves the transposition up to its
definition), on wgmma, whose A operand comes from registers, at its dot. A computed B operand is copied at its
dot. On sm_100 each MMA waits on one 8-B mbarrier.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kernlint.analysis.dot_buffers import MMA_WAIT_BARRIER_BYTES, _operand_source
from kernlint.analysis.liveness import Liveness, producers as producers_of, readers as readers_of, step_positions
from kernlint.analysis.placement import DotPlacement, numel, transposed_source
from kernlint.analysis.smem_convert import Conversion
from kernlint.hardware.specs import GpuSpec
from kernlint.ir.nodes import Op, OpKind, element_bytes



def effective_loops(live: Liveness, folded: set[int]) -> dict[int, int | None]:
    """Op id → the innermost enclosing loop that is not folded away (None: straight-line code)."""
    out: dict[int, int | None] = {}
    for step in live.steps:
        if step.is_end:
            continue
        inner = [loop for loop in step.loops if loop not in folded]
        out[step.op.id] = inner[-1] if inner else None
    return out


def _zero_accumulator(d: DotPlacement, producers: Mapping[int, Op], carried_init: Mapping[int, Any],
                      folded: set[int]) -> bool:
    if len(d.op.operands) < 3:
        return True
    acc = d.op.operands[2]
    init = carried_init.get(acc.id)
    if init is not None and init[1] in folded:  # the loop is folded away: the block argument is its init
        acc = init[0]
    op = producers.get(acc.id)
    return op is not None and op.kind == OpKind.FULL and op.full_attrs().zeros


def fold_positions(live: Liveness, dots: Sequence[DotPlacement], folded: set[int]) -> dict[int, int]:
    """Dot op id → the step of the add Triton's combine pattern re-creates it at (see the module note)."""
    producers = producers_of(live)
    readers = readers_of(live)
    step_of = step_positions(live)
    carried_init = {c.arg.id: (c.init, s.op.id) for s in live.steps if s.op.kind == OpKind.FOR and not s.is_end
                    for c in s.op.carried}
    out: dict[int, int] = {}
    for d in dots:
        if d.op.result is None or not _zero_accumulator(d, producers, carried_init, folded):
            continue
        users = readers.get(d.op.result.id, [])
        if len(users) != 1:
            continue
        add = users[0]
        if add.kind == OpKind.ELEMENTWISE and add.fn == "+" and len(add.operands) == 2 \
                and add.id in step_of and step_of[add.id] > step_of[d.op.id]:
            out[d.op.id] = step_of[add.id]
    return out


def region_buffers(live: Liveness, dots: Sequence[DotPlacement], region: Sequence[DotPlacement],
                   conversions: Sequence[Conversion], effective: Mapping[int, int | None], folded: set[int],
                   env: Mapping[str, Any], spec: GpuSpec,
                   staged: Sequence[tuple[int, int, int]] = ()) -> list[tuple[str, int, str, int]]:
    """(label, bytes, detail, line) of the straight-line region's peak: copies, conversions, the staged A
    tiles of smem_staged_a (`staged`: first step, last step, bytes) and a barrier."""
    producers = producers_of(live)
    step_of = step_positions(live)
    moved = fold_positions(live, region, folded)
    stores = [step_of[s.op.id] for s in live.steps if not s.is_end and s.op.kind == OpKind.STORE
              and effective.get(s.op.id) is None]

    def in_region(op: Op) -> bool:
        return effective.get(op.id, 0) is None

    tiles: dict[int, tuple[Op, int, list[int], list[bool]]] = {}   # load id → (load, bytes, uses, async)
    events: list[tuple[int, int, int]] = []
    for d in region:
        at = moved.get(d.op.id, step_of[d.op.id])
        for index, operand in enumerate(d.op.operands[:2]):
            load, _ = _operand_source(operand, producers)
            if load is not None and load.result is not None and in_region(load):
                size = numel(load.result, env)
                entry = tiles.setdefault(load.id, (load, int(size * element_bytes(load.result.dtype)) if size else 0,
                                                   [], []))
                entry[2].append(at)
                entry[3].append(d.async_mma)
                continue
            if load is not None:
                continue
            size = numel(operand, env)
            nbytes = int(size * element_bytes(operand.dtype)) if size else 0
            through = transposed_source(operand, producers, in_region)
            if through is not None:
                source = producers.get(through.id)
                early = not (d.async_mma and spec.mma.transposed_a_copied_at_use and index == 0)
                start = step_of.get(source.id, at) if early and source is not None else at
                events.append((min(start, at), at, nbytes))
            elif index == 1:
                events.append((at, at, nbytes))
    for load, nbytes, uses, users_async in tiles.values():
        start, first, last = step_of[load.id], min(uses), max(uses)
        if not any(users_async) and any(start < s < first for s in stores):
            start = first  # mma.sync: the copy is not made above a store (dot_buffers._unpipelined_peak)
        events.append((start, max(start, last), nbytes))
    events.extend((c.step, c.step, c.bytes) for c in conversions)
    events.extend(staged)
    points = sorted({e[0] for e in events} | {e[1] for e in events})
    peak = max((sum(b for a, z, b in events if a <= p <= z) for p in points), default=0)
    line = min(d.op.line for d in region)
    out = [("straight-line dot operand copies", peak, "peak of the copies and conversions of straight-line dots "
            "(one-trip loops folded)" + (f"; {len(moved)} dot(s) moved to the add they feed" if moved else ""), line)]
    if spec.mma.stages_every_operand_load and any(d.async_mma for d in region):
        out.append(("mbarriers", MMA_WAIT_BARRIER_BYTES, "one MMA completion barrier at a time", line))
    return out


def straight_line_region(live: Liveness, dots: Sequence[DotPlacement], loop_ops: Mapping[int, Op],
                         env: Mapping[str, Any]) -> tuple[list[DotPlacement], set[int | None], dict[int, int | None],
                                                           set[int]]:
    """(region dots, the group keys they replace, effective loops, folded loops) when two or more dots are
    straight-line code once one-trip loops are folded; no dots otherwise (a single straight-line dot keeps the
    per-group rules: smem._reuse_after_straight_line_dots)."""
    from kernlint.analysis.loop_trips import static_trips

    folded = {lid for lid, op in loop_ops.items() if static_trips(op, env) in (0, 1)}
    effective = effective_loops(live, folded)
    region = [d for d in dots if effective.get(d.op.id, 0) is None]
    keys: set[int | None] = {None} | {lid for lid in folded if effective.get(lid, 0) is None}
    if len(region) < 2:
        return [], set(), effective, folded
    return region, keys, effective, folded
