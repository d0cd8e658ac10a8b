"""Register copies that Triton's full unrolling of `tl.static_range` loops puts in flight at once."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernlint.analysis.liveness import Liveness, producers as producers_of
from kernlint.ir.nodes import Op
from kernlint.ir.symbolic import as_int


def static_trip_count(op: Op, env: Mapping[str, Any]) -> int | None:
    """Iterations of a `tl.static_range(stop)` / `(start, stop[, step])` loop with constant bounds."""
    bounds = [as_int(b.evaluate(env)) if b is not None else None for b in op.attrs.get("bounds", ())]
    if not bounds or any(b is None for b in bounds):
        return None
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (bounds[0], bounds[1], bounds[2] if len(bounds) > 2 else 1)
    if not step:
        return None
    return max(0, -(-(stop - start) // step))


def unrolled_loads(live: Liveness, env: Mapping[str, Any]) -> dict[int, int]:
    """Loaded tiles of a `tl.static_range` body whose addresses and masks do not depend on the loop-carried
    values, mapped to the loop's trip count. Triton unrolls static_range in the frontend (code_generator.py,
    visit_For: static_range bodies are emitted once per iteration), so the body becomes straight-line code in
    which these loads are independent of the accumulation, and ptxas issues all of them before the first
    use to hide memory latency: one register copy per iteration is live at the peak. Measured (Triton 3.9,
    causal_conv1d_fwd, KERNEL_WIDTH 4 bf16 x-tiles accumulated into fp32, 32 elements per thread): 80-122
    registers, about the four loaded tiles (64) plus the accumulator (32), not one tile (16)."""
    out: dict[int, int] = {}
    producers = producers_of(live)
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind != "for" or op.attrs.get("loop") != "static_range":
            continue
        trips = static_trip_count(op, env)
        if trips is None or trips < 2:
            continue
        carried = {c.arg.id for c in op.attrs.get("carried", ())}
        body = op.regions[0].ops if op.regions else ()
        # A store or atomic in the body may alias the next iteration's loads (pointers carry no aliasing
        # facts), so the loads stay behind it and one iteration's tiles are live at a time (examples/rope.py,
        # in-place rotation over static_range head blocks: measured 32-44 registers, one iteration's tiles).
        if any(inner.kind in ("store", "atomic") for inner in walk_ops(body)):
            continue
        for inner in body:
            if inner.kind == "load" and inner.result is not None and not _depends_on(inner, carried, producers):
                out[inner.result.id] = trips
    return out


def walk_ops(ops: tuple[Op, ...] | list[Op]) -> list[Op]:
    """`ops` and every op nested in their regions, in program order."""
    out: list[Op] = []
    for op in ops:
        out.append(op)
        for region in op.regions:
            out.extend(walk_ops(region.ops))
    return out


def _depends_on(op: Op, targets: set[int], producers: Mapping[int, Op]) -> bool:
    seen: set[int] = set()
    stack = [v for v in op.operands]
    while stack:
        v = stack.pop()
        if v.id in targets:
            return True
        if v.id in seen:
            continue
        seen.add(v.id)
        producer = producers.get(v.id)
        if producer is not None and producer.kind != "for":
            stack.extend(producer.operands)
    return False
