"""ptxas's "register collapse": far over its budget, ptxas moves whole tiles to local memory and compiles for
full occupancy instead of keeping the budget.

What ptxas does (measured, Triton 3.9: ptxas 12.9 for sm_80/86/89, 13.4 for sm_90/100/120, default -O3):
  * a kernel whose live tiles exceed the budget a little is allocated the budget (255, or 65536 / threads)
    with a few hundred bytes of spill stores; past a cliff it is allocated the register count of *full
    occupancy* instead -- 65536 registers / 2048 threads = 32 on sm_80/90/100, 65536 / 1536 = 42 -> 40 (the
    8-register granule) on sm_86/89/120, 64 for 1-warp CTAs on sm_80/90 (the 32-CTA limit: 1024 threads)
    and 80 on sm_89 (24 CTAs: 768 threads); the cliff is higher there, as collapsing buys less occupancy
    (1 warp, sm_90: 6×64 words keep 255, 8×64 -> 64; sm_89: 8×64 keep 255, 8×128 -> 80)
    -- with kilobytes of spills and a stack frame holding the tiles
    themselves (vector_add BLOCK 65536, 4 warps, sm_90: 32 registers, 8,456-byte frame = four 2 KiB tiles of
    512 fp32 per thread; the SASS stores every loaded vector to local memory right after its LDG). The
    collapse is a decision of ptxas's optimiser: the same PTX at -O1 or -Ofc=min gets 255 registers and
    3.3 KB of spills; --regAllocOptLevel, -regUsageLevel and -maxrregcount do not change it.
  * the cliff, on a synthetic straight-line kernel that loads K tiles of E fp32 per thread, block-sums them
    and stores every tile scaled by the sum (all K·E words live at once; benchmarks/probe_register_collapse.py),
    4 warps (budget 255):
      sm_90/100: 4×64, 5×64, 9×32 words -> 255 + 108-424 B spills; 10×32, 6×64, 4×128, 2×256, 1×512 -> 32
      sm_80:     4×64 -> 255 + 64 B;   9×32, 5×64, 6×64 ... 1×512 -> 32
    and at 16 warps (budget 128): 4×32, 5×32 -> 128 + 64-420 B; 6×32, 8×32 -> 32 (sm_80 and sm_90): the
    cliff scales with the budget. In kernlint's demand / budget those kernels collapse from 1.25-1.30
    (sm_90/100) and 1.16-1.30 (sm_80) upward; one tile or many makes no difference, nor does a runtime
    `for` loop around the body (the same kernel in a loop: 5×64 already collapses on sm_90, 4×64 on sm_80).
  * kernels with a `tl.dot` do not follow it: an MMA accumulator is read and written by every mma of the
    K loop, and a wgmma's accumulator must stay in registers while the async group is in flight. Recorded
    truth (benchmarks/truth/triton-3.9.json, suite-triton-3.9.json, triton-3.6.json), dot kernels above
    their budget: sm_90 0 of 37 collapsed, sm_100 3 of 35, sm_80 13 of 55 -- so they keep the budget.
    The exception is mma.sync at 16 warps (sm_80, and sm_100 where 16-warp dots fall back to mma.sync,
    placement.mma_family; budget 128): in the five Triton 3.9 truth files every such compile at demand /
    budget >= 1.59 collapsed to 32 (bmm_fixed 256×256×32, bmm_descriptor and grouped_matmul 256×256×64:
    6 of 6, 3.4-9.2 KB spilled) and none at <= 1.08 (matmul, split-K, bmm, attention forward: 0 of 12,
    128 registers + 0-636 B). At 1-8 warps the outcome is mixed (sm_80: 10 of 45 above budget collapsed, at
    ratios 1.01-3.55, and 7 of 19 from 1.5 up, while 1.72-3.38 kept 255), so there the budget stays the
    prediction. The 16-warp threshold is the dot-free probe's cliff at 16 warps (MMA_SYNC_16W_COLLAPSE_RATIO).

The threshold: real kernels stream part of what the model counts (ptxas reorders element-wise chains and
unrolled static_range bodies; causal_conv1d 256×128, 8 warps: demand/budget 1.5-1.75, ptxas 255 with
136-196 B spills), so the model's ratio overstates their pressure. Dot-free kernels of the three truth files
above their budget (ptxas at most half the budget) collapsed in 3 of 89 records at 1.0-1.5, 6 of 16 at
1.5-1.75, 11 of 16 at 1.75-2 and 31 of 44 from 2 up: COLLAPSE_RATIO = 1.75 is where a collapse becomes the
likelier outcome.

Only `allocated` (and the spill bytes derived from it) changes: the spill decision stays demand > budget.
"""
from __future__ import annotations

from dataclasses import replace

from kernlint.analysis.placement import DotPlacement, mma_family
from kernlint.analysis.register_types import PHILOX_STATE_WORDS, RegisterEstimate
from kernlint.hardware.specs import GpuSpec

# demand / budget from which a dot-free kernel is predicted to collapse (see the module docstring)
COLLAPSE_RATIO = 1.75
# ... and a 16-warp kernel whose dots run on mma.sync: the probe's cliff at 16 warps (6×32 words collapse,
# 5×32 keep 128: 1.25-1.30 in kernlint's demand / budget); the recorded dot compiles leave 1.08-1.59 open
MMA_SYNC_16W_COLLAPSE_RATIO = 1.3
REGISTER_GRANULE = 8  # ptxas allocates registers per thread in multiples of 8 below 255


def full_occupancy_registers(spec: GpuSpec, num_warps: int) -> int:
    """Registers per thread that let the most threads be resident: max_threads_per_sm, or fewer when the CTA
    limit binds first. 32 on sm_80/90/100 (2048 threads), 40 on sm_86/89/120 (1536); with 1 warp per CTA
    only 32 CTAs x 32 threads fit an sm_80/90 SM, so 64 -- all three measured as the collapsed allocation
    (benchmarks/probe_register_collapse.py: 8×64 words, 1 warp, sm_80 and sm_90 -> 64 registers)."""
    threads = min(spec.max_threads_per_sm, spec.max_ctas_per_sm * 32 * num_warps)
    per_thread = min(spec.max_regs_per_thread, spec.regs_per_sm // threads)
    return per_thread - per_thread % REGISTER_GRANULE


def collapses(regs: RegisterEstimate, dots: list[DotPlacement], maxnreg: int | None, family: str,
              num_warps: int) -> bool:
    # A maxnreg launch option becomes a PTX .maxnreg directive, which ptxas keeps as a hard target: the
    # synthetic kernel at 6×64 words, 4 warps, sm_90 -> 128 registers under maxnreg=128, 255 under 255.
    if maxnreg is not None or regs.budget <= 0:
        return False
    if not dots:
        return regs.demand >= COLLAPSE_RATIO * regs.budget
    tensor_core = any(not d.fma for d in dots)
    return (tensor_core and family == "mma_sync" and num_warps >= 16
            and regs.demand >= MMA_SYNC_16W_COLLAPSE_RATIO * regs.budget)


def apply_spill_collapse(regs: RegisterEstimate, dots: list[DotPlacement], spec: GpuSpec,
                         num_warps: int, maxnreg: int | None = None) -> RegisterEstimate:
    """The register estimate with ptxas's collapsed allocation where the rule predicts one."""
    target = full_occupancy_registers(spec, num_warps)
    if not collapses(regs, dots, maxnreg, mma_family(spec.tensor_core, num_warps), num_warps) \
            or target >= regs.budget:
        return regs
    # every tile word above the full-occupancy registers goes through local memory
    return replace(regs, allocated=target, spill_bytes=(regs.demand - target) * 4)


# Philox serialisation: `tl.rand` runs ten rounds on four counter words per element, and the elements are
# independent chains. With 1 warp a thread keeps every chain in flight (registers.py: 8 elements -> 48
# registers); with >= 2 warps ptxas 13.x (sm_90 / sm_100) runs the chains one after another when that reaches
# full occupancy. Measured (Triton 3.9, a kernel storing tl.rand(seed, offs), 2 / 4 / 8 warps): 8 elements per
# thread -> 32 registers on sm_90 and sm_100 (48-49 with 1 warp; sm_80's ptxas 12.9 keeps 40), 4 -> 28-29; at
# 16 per thread (model demand 2.2x the full-occupancy count) 56-64 on sm_90, not 32. The suite's
# residual_dropout_kernel (fp16 x and residual + tl.rand, 8 elements per thread at 2 / 4 / 8 warps) compiles
# to 32 on sm_90 and sm_100 where the chains in flight ask 46-50. The limit lies between the largest demand
# measured serialised (50 / 32 = 1.56) and the smallest measured kept (16 per thread, 2 warps, sm_90: 70 / 32 =
# 2.19); sm_100 serialises some of the latter too (2-4 warps -> 32, 8 warps -> 63), which the rule misses.
PHILOX_SERIAL_LIMIT = 1.85   # demand / full-occupancy registers up to which the chains are serialised


def apply_philox_serialisation(regs: RegisterEstimate, spec: GpuSpec, num_warps: int,
                               maxnreg: int | None = None) -> RegisterEstimate:
    """The register estimate with the Philox chains run one at a time where that reaches full occupancy."""
    target = full_occupancy_registers(spec, num_warps)
    if (not regs.serial_regs or maxnreg is not None or not spec.serialises_philox or num_warps < 2
            or not target < regs.demand <= PHILOX_SERIAL_LIMIT * target):
        return regs
    if regs.demand - regs.serial_regs + PHILOX_STATE_WORDS > target:
        return regs   # the rest of the live set does not fit either
    return replace(regs, demand=target, allocated=min(target, regs.budget), pressure=target / regs.budget,
                   spill_bytes=0)
