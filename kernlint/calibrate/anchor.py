"""One compile corrects the model: fit a kernel's unexplained register and shared-memory terms from one
measured config (the *anchor*) and apply them to the static estimates of its other configs (same kernel,
same target), without compiling those.

Pure numbers in, numbers out (no Triton, no rich), so the CLI (``calibrate --anchor``), the JSON API and
``benchmarks/accuracy.py`` share one implementation.

Registers — why multiplicative, damped by the num_warps distance
    Measured on the recorded truth (anchor = the first non-failing, non-spilling record of each
    (kernel, args, target) group; error = median |anchored − ptxas| / ptxas on the group's other records
    that fit in shared memory; model of 2026-12, truth of benchmarks/truth/):

    ======================================  ======  ========  =============  ===============
    correction                              static  additive  ratio          ratio, damped
    ======================================  ======  ========  =============  ===============
    3.9, all 17 kernels (529 pairs)         0.123   0.131     0.143          0.116
    3.6, all (150 pairs)                    0.115   0.087     0.079          0.081
    3.9, reference kernels (113 pairs)      0.109   0.090     0.084          0.100
    3.6, reference kernels (113 pairs)      0.128   0.089     0.089          0.101
    ======================================  ======  ========  =============  ===============

    After the register model's refit (separate accumulator scale, in flight when this was written) the
    static column improved and anchoring gains less: 3.9 all 0.122 → 0.125 (ratio damped) / 0.140
    (additive) / 0.157 (ratio); 3.6 all 0.098 → 0.085 / 0.105 / 0.068; share within 20 % still rises
    (3.9 0.63 → 0.67, 3.6 0.74 → 0.79). On the version the constants were fitted on, what is left is
    per-config noise; the anchor pays off where the toolchain differs from the fit (another Triton).

    A ratio beats an offset wherever the anchor carries a real bias (Triton 3.6, whose compiler the
    constants were not fitted to; wgmma accumulators): the missing registers are per tile element, so
    they grow with the tile. Undamped, both make things *worse* on 3.9 because part of the anchor's
    error is layout noise of that one config: a 1-warp anchor (rope, rmsnorm, vector add: ptxas spends
    its registers on addresses, not tiles) says nothing about the 8-warp configs. The error transfers
    fully between configs with the anchor's num_warps (same layouts: 0.123 → 0.109 on 3.9 when applied
    only there) and less the further num_warps is, so the ratio is applied with exponent
    ``1 / (1 + |log2(warps / anchor_warps)|)`` (same warps: full ratio; ×2: √ratio; ×4: ratio^⅓). That is
    the only variant that is never worse than static on the four sets above, and it also raises the share
    within 20 % (3.9: 0.64 → 0.66; 3.6: 0.78 → 0.81).

Shared memory — offset when the pipeline matches, ratio when it does not
    Same num_stages → the anchor's offset (truth − estimate) is the unmodelled buffer (a layout
    conversion, a barrier), which does not depend on the tile: add it. Different num_stages → the
    unmodelled part is mostly a pipelined operand buffer that scales with the stages, so scale by the
    anchor's ratio. On 3.9 (all kernels) exact 0.833 → 0.851, within 2 % 0.878 → 0.887, OutOfResources
    agreement 0.995 → 1.000 (offset everywhere: exact 0.862 but OutOfResources unchanged, because the
    configs that cross the limit are the deeper pipelines). Triton 3.6: already exact, unchanged.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kernlint.analysis.estimate import KernelEstimate


@dataclass(frozen=True)
class Static:
    """The model's numbers for one config (what anchoring corrects)."""
    demand: int          # registers the live set asks for (may exceed budget)
    allocated: int       # min(demand, budget), or ptxas's collapsed count (analysis/spill_collapse.py)
    budget: int          # registers a thread may use at this num_warps / maxnreg
    smem: int            # bytes of shared memory per CTA
    num_warps: int
    num_stages: int
    smem_limit: int = 0  # the target's opt-in shared memory per CTA (0: unknown)

    @classmethod
    def from_estimate(cls, e: KernelEstimate) -> Static | None:
        if not e.estimated or e.registers is None or e.smem is None:
            return None
        return cls(e.registers.demand, e.registers.allocated, e.registers.budget, e.smem.total,
                   e.config.num_warps, e.config.num_stages, e.target.smem_per_cta_optin)


@dataclass(frozen=True)
class Measured:
    """What Triton and ptxas said for the anchor config."""
    regs: int
    spilled: bool
    shared: int

    @classmethod
    def from_truth(cls, truth: dict[str, Any]) -> Measured | None:
        """From a compile record (triton_compile.RESULT_FIELDS / benchmarks/truth records)."""
        if truth.get("error") or truth.get("regs") is None or truth.get("shared") is None:
            return None
        return cls(int(truth["regs"]), bool(truth.get("spill_store")), int(truth["shared"]))


@dataclass(frozen=True)
class Corrected:
    regs: int            # anchored allocated registers, clamped to [0, budget]
    demand: float        # anchored demand (what the spill decision compares with the budget)
    budget: int
    spills: bool
    smem: int
    reg_weight: float    # exponent the anchor's ratio was applied with (0: not corrected)
    smem_rule: str       # "offset", "ratio" or "none"
    smem_limit: int | None = None

    @property
    def smem_over(self) -> bool:
        return self.smem_limit is not None and self.smem > self.smem_limit


@dataclass(frozen=True)
class Anchor:
    static: Static
    truth: Measured

    @property
    def usable_for_registers(self) -> bool:
        # A spilled anchor reports the budget, not what the kernel needs: nothing to fit.
        return not self.truth.spilled and self.truth.regs > 0 and self.static.demand > 0 and not self.oor

    @property
    def oor(self) -> bool:
        return bool(self.static.smem_limit and self.truth.shared > self.static.smem_limit)

    @property
    def reg_ratio(self) -> float:
        return self.truth.regs / self.static.demand if self.usable_for_registers else 1.0

    @property
    def smem_offset(self) -> int:
        return self.truth.shared - self.static.smem

    def reg_weight(self, other: Static) -> float:
        if not self.usable_for_registers:
            return 0.0
        return 1.0 / (1.0 + abs(math.log2(max(1, other.num_warps) / max(1, self.static.num_warps))))

    def correct(self, other: Static) -> Corrected:
        w = self.reg_weight(other)
        demand = other.demand * self.reg_ratio ** w
        regs = max(0, min(other.budget, round(demand)))
        if other.allocated < min(other.demand, other.budget):
            # the static model predicts ptxas's collapse to full occupancy (analysis/spill_collapse.py): the
            # anchor's ratio scales the demand, not that count
            regs = other.allocated
        if self.smem_offset == 0:
            smem, rule = other.smem, "none"
        elif other.num_stages == self.static.num_stages:
            smem, rule = max(0, other.smem + self.smem_offset), "offset"
        elif self.static.smem > 0:
            smem, rule = round(other.smem * self.truth.shared / self.static.smem), "ratio"
        else:  # the model saw no buffer at all in the anchor: nothing to scale
            smem, rule = other.smem, "none"
        return Corrected(regs, demand, other.budget, demand > other.budget, smem, w, rule,
                         other.smem_limit or None)


def fit(static: Static, truth: Measured) -> Anchor:
    return Anchor(static, truth)


def pick_anchor(candidates: Iterable[tuple[Static | None, Measured | None]]) -> int | None:
    """Index of the first usable anchor: compiled, fits in shared memory, did not spill (the registers of a
    spilled config are the budget, not the kernel's need). None when there is none."""
    for i, (s, t) in enumerate(candidates):
        if s is not None and t is not None and Anchor(s, t).usable_for_registers:
            return i
    return None


def median_abs_error(pairs: Sequence[tuple[int, int]]) -> float | None:
    """Median of |estimate − truth| / truth over (estimate, truth) pairs with truth > 0."""
    errs = sorted(abs(e - t) / t for e, t in pairs if t)
    if not errs:
        return None
    mid = len(errs) // 2
    return errs[mid] if len(errs) % 2 else (errs[mid - 1] + errs[mid]) / 2
