"""Trip counts of loops whose bounds are compile-time values.

Triton folds a loop of one trip into straight-line code before anything is pipelined or allocated (its TTGIR
has no `scf.for`), so the shared-memory model (smem_loops.py, smem_straight.py) and the liveness sweep
(liveness.py) both ask for it.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernlint.ir.nodes import Op
from kernlint.ir.symbolic import as_int


def static_trips(loop: Op, env: Mapping[str, Any]) -> int | None:
    """Iterations of a `range`-style loop whose bounds are all compile-time values, else None."""
    bounds = loop.for_attrs().bounds
    if not bounds or any(b is None for b in bounds) or len(bounds) > 3:
        return None
    vals = [as_int(b.evaluate(env)) for b in bounds if b is not None]
    if any(v is None for v in vals):
        return None
    start, stop, step = (0, vals[0], 1) if len(vals) == 1 else (vals[0], vals[1], vals[2] if len(vals) == 3 else 1)
    if not step:
        return None
    return max(0, -(-(stop - start) // step))  # type: ignore[operator]
