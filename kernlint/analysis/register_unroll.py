"""Register copies that Triton's full unrolling of `tl.static_range` loops puts in flight at once."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernlint.analysis.liveness import Liveness, producers as producers_of, walk_ops
from kernlint.analysis.placement import numel
from kernlint.ir.nodes import Op, OpKind, Value
from kernlint.ir.symbolic import as_int
from kernlint.ir.walk import bounded_walk


def static_trip_count(op: Op, env: Mapping[str, Any]) -> int | None:
    """Iterations of a `tl.static_range(stop)` / `(start, stop[, step])` loop with constant bounds."""
    bounds = [as_int(b.evaluate(env)) if b is not None else None for b in op.for_attrs().bounds]
    if not bounds or any(b is None for b in bounds):
        return None
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (bounds[0], bounds[1], bounds[2] if len(bounds) > 2 else 1)
    if not step:
        return None
    return max(0, -(-(stop - start) // step))


def unrolled_loads(live: Liveness, env: Mapping[str, Any], hoist_full_tiles: bool = True) -> dict[int, int]:
    """Loaded tiles of a `tl.static_range` body whose addresses and masks do not depend on the loop-carried
    values, mapped to the number of register copies live at the peak. Triton unrolls static_range in the
    frontend (code_generator.py, visit_For: static_range bodies are emitted once per iteration), so the body
    becomes straight-line code in which these loads are independent of the accumulation, and ptxas may issue
    the loads of every iteration before the first use to hide memory latency.

    Whether it does depends on what the body loads. Measured (Triton 3.9, sm_80 / sm_90 / sm_100: the suite's
    causal_conv1d_fwd and 132 compiles of 4-tap static_range probe convolutions accumulating fp16/bf16 [L, D]
    tiles into fp32, at 32 and 64 accumulator elements per thread):
      * a body with a per-iteration operand smaller than its largest tile (the per-tap weight vector of
        `acc += x * w_i[None, :]`): on sm_90 / sm_100 all taps' loads are in flight — 96-122 / 177-199
        registers, about the four x tiles plus the accumulator; on sm_80 only the small operands are
        (`hoist_full_tiles` False): 76-80 / 137-151 registers, one x tile + the accumulator + every w_i;
      * a body of full-size tiles only (`acc += x`, `acc += x * 0.5`, `acc += x * g` with g another [L, D]
        tile): one iteration's tiles at a time on every target — 48-60 / 78-104 registers for x alone and
        62-71 / 108-136 for x and g, where counting four copies asked 107-121 / 198-227 (fla's
        causal_conv1d_fwd without weights: ptxas 48 / 81, estimated 121 / 220 that way)."""
    out: dict[int, int] = {}
    producers = producers_of(live)
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind != OpKind.FOR or op.for_attrs().loop != "static_range":
            continue
        trips = static_trip_count(op, env)
        if trips is None or trips < 2:
            continue
        carried = {c.arg.id for c in op.carried}
        body = op.regions[0].ops if op.regions else ()
        # A store or atomic in the body may alias the next iteration's loads (pointers carry no aliasing
        # facts), so the loads stay behind it and one iteration's tiles are live at a time (examples/rope.py,
        # in-place rotation over static_range head blocks: measured 32-44 registers, one iteration's tiles).
        if any(inner.kind in (OpKind.STORE, OpKind.ATOMIC) for inner in walk_ops(body)):
            continue
        # the body as this config emits it (liveness resolved the constexpr `if`s); nested loops excluded
        emitted = [s.op for s in live.steps if not s.is_end and s.loops and s.loops[-1] == op.id]
        hoisted = [inner for inner in emitted if inner.kind == OpKind.LOAD
                   and inner.result is not None and not _depends_on(inner, carried, producers)]
        sizes = {op.result.id: numel(op.result, env) for op in hoisted if op.result is not None}
        known = [n for n in sizes.values() if n is not None]
        if len(known) < 2 or min(known) == max(known):
            continue   # full-size tiles only: one iteration's tiles at a time (docstring)
        largest = max(known)
        for vid, n in sizes.items():
            if hoist_full_tiles or (n is not None and n < largest):
                out[vid] = trips
    return out


def _depends_on(op: Op, targets: set[int], producers: Mapping[int, Op]) -> bool:
    def operands(v: Value) -> tuple[Value, ...]:
        producer = producers.get(v.id)
        return producer.operands if producer is not None and producer.kind != OpKind.FOR else ()

    return any(v.id in targets for v in bounded_walk(op.operands, operands, bound=None))
