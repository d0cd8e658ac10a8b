"""The register estimate's result types and the Philox state size (kept apart so that spill_collapse.py, whose
rules registers.py runs as passes, can read them without importing registers.py)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LiveTile:
    name: str
    shape: str
    dtype: str
    registers: float
    line: int


@dataclass(frozen=True, slots=True)
class RegisterEstimate:
    demand: int                   # registers the live set asks for (may exceed the budget)
    allocated: int                # what ptxas would allocate: min(demand, budget) (see spill_collapse.py)
    budget: int                   # min(255, 65536 / threads), or maxnreg
    pressure: float               # demand / budget
    spill_bytes: int              # estimated bytes spilled per thread (0 when demand ≤ budget)
    peak_line: int
    peak_tiles: tuple[LiveTile, ...]  # largest contributors at the peak
    complete: bool
    data_regs: float = 0.0        # unscaled data-tile registers at the peak (for fitting the model)
    index_regs: float = 0.0       # address/offset/mask/scalar registers at the peak
    acc_regs: float = 0.0         # unscaled dot-accumulator registers at the peak
    serial_regs: float = 0.0      # registers of independent per-element chains at the peak (Philox rounds)


# Philox4x32 (triton/language/random.py, philox_impl): every element's four 32-bit counter words c0..c3 are
# updated together in each of the ten unrolled rounds, so while `tl.rand` is generated a thread holds four
# words per element (the seed's key pair is a shared scalar). Measured (Triton 3.9, sm_90, a kernel that only
# stores tl.rand(seed, offsets), 1 warp): 1/2/4/8/32 elements per thread -> 14/20/30/48/145 registers.
PHILOX_STATE_WORDS = 4
