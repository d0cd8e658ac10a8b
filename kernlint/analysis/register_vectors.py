"""In-loop accumulations of short loaded rows: ptxas keeps about two 16-byte vectors of each load in flight.

`register_streams.window_accumulated_loads` caps what an in-loop accumulation (`acc += x * x`, `acc += x * w`)
holds of its loads at a window of 32 registers, measured where every load is 16 or more vectors a thread. When a
load is only a few vectors a thread, ptxas does not issue them together either: it loads one vector, widens it,
folds it into the accumulator, and issues the next while the previous one is being folded. nvdisasm -plr of the
sm_100 and sm_90 cubins (Triton 3.9, ptxas 13.4), tests/truth/short_accumulated_loads.py at 32 bf16 elements a
thread (BLOCK 8192, 8 warps; four LDG.E.128 per load and iteration):

- `centred_squares` (`acc += (x - shift)²`): peak 45 live registers = the 32-word accumulator + 13, each LDG
  followed by its PRMT/IMAD widening and FADD2/FFMA2 before the next; 48 registers allocated on sm_80/90/100
  (47 on sm_80), kernlint said 67 / 60 / 62 with the whole loaded tile live;
- `weighted_sum` (`acc += x * w`): one x and one w vector at a time, peak 55 / 57 live; 64 / 60 / 60 registers,
  kernlint 86 / 76 / 78. At 32 warps (BLOCK 32768, a 64-register budget) 58 / 60 / 58 registers and no spill,
  where kernlint predicted 64 + 88 / 48 / 56 B spilled;
- examples/rmsnorm.py's sum of squares (BLOCK 32768, 32 warps, sm_100): the second vector's LDG is issued while
  the first is being widened, peak 46 live = 32 + 14; 54 registers allocated, kernlint said 65 (over the budget).

With 8 or more vectors a load the window rule stands (64 bf16 a thread: centred_squares 114 / 95 registers on
sm_100 / sm_90, loads issued two by two). So a load of at most ONE_BY_ONE_MAX vectors costs IN_FLIGHT of them,
and so does everything of the accumulation's chain computed from it (the widened x).

Development suite (Triton 3.9 truth), before -> after (a100 / b200 / h100): register median 8.3 / 7.4 / 6.0 ->
7.9 / 7.3 / 5.9 %, within 20 % 76.9 / 86.2 / 85.6 -> 77.4 / 86.2 / 85.9 %, spill F1 0.854 / 0.875 / 0.910 ->
0.859 / 0.894 / 0.922: the 32-warp rmsnorm and layernorm false spills (demand 65-76 against 64; ptxas 50-64
without spilling) are gone on b200 and h100, and rmsnorm's on a100 (its layernorm stays at 67).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kernlint.analysis.axis_info import load_vector_bytes
from kernlint.analysis.liveness import Liveness, derived, producers
from kernlint.analysis.operand_loads import numel
from kernlint.analysis.register_streams import accumulated_loads
from kernlint.hardware.specs import MMA_FAMILIES
from kernlint.ir.nodes import Op, OpKind, element_bytes
from kernlint.ir.cache_keys import Analysis

VECTOR_BYTES = 16      # one LDG.E.128
IN_FLIGHT = 2          # vectors of a load ptxas holds at a time when it streams them one by one
ONE_BY_ONE_MAX = 4     # vectors a thread per load up to which it does (measured at 4; at 8 it issues in pairs)


def load_vectors(live: Liveness, load: Op, env: Mapping[str, Any], threads: int) -> int | None:
    """16-byte vectors a thread that `load` moves, or None when it does not move whole 16-byte vectors (an
    element-by-element load, register_access.py, or a narrower access) or its size is unknown."""
    value = load.result
    if value is None or not value.shape or load_vector_bytes(load, producers(live), env) != VECTOR_BYTES:
        return None
    size = numel(value, env)
    if size is None:
        return None
    per_thread = max(1, math.ceil(size / threads))
    return max(1, math.ceil(per_thread * element_bytes(value.dtype) / VECTOR_BYTES))


def stream_short_accumulated_loads(live: Liveness, costs: dict[int, float], env: Mapping[str, Any], threads: int,
                                   tensor_core: str) -> None:
    """Scale the values of each in-loop accumulation whose loads are all at most ONE_BY_ONE_MAX vectors a thread
    (and more than IN_FLIGHT) to IN_FLIGHT vectors of the widest load (in place)."""
    loads = {s.op.result.id: s.op for s in live.steps if not s.is_end and s.op.kind == OpKind.LOAD and s.op.result}
    for group, accumulators in derived(live, Analysis.ACCUMULATED_LOADS.key(), lambda: accumulated_loads(live)):
        if MMA_FAMILIES[tensor_core].holds_accumulated_loads and accumulators > 1:
            continue   # sm_100 holds every load of two or more accumulations (register_streams.py)
        widths = [load_vectors(live, loads[v], env, threads) for v in group if v in loads]
        if not widths or None in widths:
            continue
        vectors = max(w for w in widths if w is not None)
        if IN_FLIGHT < vectors <= ONE_BY_ONE_MAX:
            for vid in group:
                costs[vid] = costs.get(vid, 0.0) * IN_FLIGHT / vectors
