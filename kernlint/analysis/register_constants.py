"""A loop of one trip whose variable enters as a splat (`acc = tl.zeros(...)`) holds no tile for it.

Triton folds a one-trip `scf.for` into straight-line code (liveness.Liveness.folded), so the loop's block
argument is the splat itself and Triton's canonicaliser folds it into its readers: attention's
`acc = acc * alpha[:, None]` on a zero accumulator becomes `arith.mulf %acc, %cst : tensor<128x1xf32>` (TTGIR,
Triton 3.9, sm_90, a one-trip KV loop at 128×128×128, 8 warps) and the accumulator first exists whole as the
second dot's input. In a loop of several trips the argument carries the previous iteration's tile and is held
(register_elementwise.held_across_iterations). Measured (tests/truth/one_trip_registers.py, Triton 3.9, sm_90):
the one-trip probe allocates 80 / 127 / 126 registers at 64×64×64 w4 / 128×128×128 w8 / 128×64×64 w4, where
holding the zero accumulator beside the scores asked 91-115 / 168-215 / 160-199.
A `full` outside such a loop keeps its cost: the register model's constants were fitted with it (charging
every splat nothing moved the probe to 59 / 105 / 97 and the public set's medians the wrong way).
"""
from __future__ import annotations

from kernlint.analysis.liveness import Liveness, carried_inits, derived, producers
from kernlint.ir.nodes import OpKind
from kernlint.ir.cache_keys import Analysis


def constant_tiles(live: Liveness) -> set[int]:
    """Ids of the block arguments of one-trip loops that enter as a splat (directly, through a decided `if`
    or through an enclosing one-trip loop's argument)."""
    def compute() -> set[int]:
        prod = producers(live)
        inits = carried_inits(live)
        folded_args = [c.arg.id for s in live.steps if s.op.kind == OpKind.FOR and not s.is_end and s.op.id in live.folded
                       for c in s.op.carried]
        out: set[int] = set()

        def splat(vid: int, depth: int = 0) -> bool:
            if depth > 16:
                return False
            if vid in live.taken:
                return splat(live.taken[vid].id, depth + 1)
            if vid in inits and vid in folded_args:
                return splat(inits[vid].id, depth + 1)
            op = prod.get(vid)
            return op is not None and op.kind == OpKind.FULL

        for arg in folded_args:
            if live.values.get(arg) is not None and live.values[arg].shape and splat(arg):
                out.add(arg)
        return out
    return derived(live, Analysis.CONSTANT_TILES.key(), compute)
