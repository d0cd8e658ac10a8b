"""Sunk loads that ptxas delays to fit the register file (sm_80, sm_100).

A loop body whose loads meet only in an element-wise chain ending in one store (layernorm's normalise pass,
`y = (x - mean) * rstd * w + b`: a sunk group, register_streams.sunk_loads) has no order between its loads
and the chain's arithmetic but the data dependences. When holding every tile would not fit, ptxas issues the
non-largest loads late, next to the arithmetic that reads them, and computes output elements while the rest
is still in flight; the store waits for all loads (no alias information), so the output tile and the largest
load are what it cannot avoid holding.

Measured (Triton 3.9, ptxas 13.4; tests/truth/delayed_loads.py, fp16 x and y, fp32 w and b, 4 / 8 warps at
128 elements per thread, where the three tiles alone are 128 + 128 + 64 registers): the pass alone
(`affine_only`) 244 / 146 / 148 registers on sm_80 / sm_90 / sm_100, after a mean pass (`mean_affine`)
243 / 216 / 215, examples/layernorm.py (mean and variance passes) 244 / 255 + 76-84 B spilled / 220: no spill
on sm_80 and sm_100 in any; nvdisasm -plr of the sm_100 layernorm peaks at 211 live registers with 80 of the
pass's 80 LDG.E.128 issued and 36 of its 64 FFMA2 done. sm_90 is left out: its whole layernorm spills (the
sm_90 PTX retargeted to sm_100a spills as well, while the sm_100 PTX with packed f32x2 arithmetic does not;
docs/accuracy.md, "Packed f32x2 arithmetic on sm_100"). At 16 warps (a 128-register budget) the same loops spill
on every target (affine_only 128 + 432 / 32 / 32 B, mean_affine 128 + 488 / 200 / 272 B): the rest of the pass
does not fit in 128, so the delay does not help there, which `squeezed_demand` checks.

Development suite (Triton 3.9 truth): only layernorm at 128 elements per thread and 4 / 8 warps moves (four
records on each of a100 and b200): false spills, now predicted at the budget without a spill.
"""
from __future__ import annotations

from collections.abc import Mapping

from kernlint.analysis.liveness import Liveness, derived
from kernlint.analysis.register_streams import sunk_loads
from kernlint.ir.nodes import OpKind
from kernlint.ir.cache_keys import Analysis


def delayable_loads(live: Liveness, costs: Mapping[int, float]) -> set[int]:
    """Ids of the non-largest loads of every sunk group inside a loop (the passes run on targets whose ptxas
    delays them: GpuSpec.delays_sunk_loads, sm_80 and sm_100)."""
    looped = {v.id for s in live.steps if not s.is_end and s.op.kind == OpKind.LOAD and s.loops
              for v in s.op.all_results()}
    out: set[int] = set()
    for loads in derived(live, Analysis.SUNK_LOADS.key(), lambda: sunk_loads(live)):
        if not any(v in looped for v in loads):
            continue
        biggest = max(loads, key=lambda v: costs.get(v, 0.0))   # the tile register_streams holds whole
        out.update(v for v in loads if v != biggest)
    return out


def squeezed_demand(demand: int, budget: int, undelayed: int) -> int:
    """The demand once the delayable loads are issued late: over the budget, ptxas fits the pass into it when
    everything else at every step (`undelayed`, the peak without the delayable loads) fits; otherwise it spills
    anyway and the demand stays."""
    return budget if budget < demand and undelayed <= budget else demand
