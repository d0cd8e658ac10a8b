"""CTAs per SM and the limiting resource, the way Nsight Compute's occupancy section names them.

Formula (CUDA occupancy calculator; matched cuOccupancyMaxActiveBlocksPerMultiprocessor on an H200 in
22/22 cases; docs/design.md): registers are allocated per warp in 256-register units,
each CTA also reserves 1 KiB of shared memory, and the thread and CTA caps apply.
"""
from __future__ import annotations

from dataclasses import dataclass

from kernlint.hardware.specs import GpuSpec


@dataclass(frozen=True, slots=True)
class Occupancy:
    ctas_per_sm: int
    warps_per_sm: int
    occupancy: float              # active warps / max warps per SM
    limiter: str                  # "registers", "shared memory", "warps", "blocks", or "does not fit"
    by_limit: dict[str, int]      # CTAs/SM allowed by each resource


def compute_occupancy(spec: GpuSpec, num_warps: int, regs_per_thread: int, smem_bytes: int) -> Occupancy:
    regs = max(1, regs_per_thread)
    regs_per_warp = -(-regs * 32 // spec.reg_alloc_unit_per_warp) * spec.reg_alloc_unit_per_warp
    by_regs = (spec.regs_per_sm // regs_per_warp) // num_warps if regs_per_warp else spec.max_ctas_per_sm
    if smem_bytes > spec.smem_per_cta_optin:
        by_smem = 0
    else:
        by_smem = spec.smem_per_sm // (smem_bytes + spec.smem_reserved_per_cta)
    by_warps = spec.max_warps_per_sm // num_warps
    limits = {"registers": by_regs, "shared memory": by_smem, "warps": by_warps,
              "blocks": spec.max_ctas_per_sm}
    ctas = min(limits.values())
    # Name the limiter like Nsight Compute: the resource with the lowest block limit, ties → registers
    # before shared memory before warps (the order Nsight lists "Block Limit" rows).
    limiter = min(limits, key=lambda k: (limits[k], list(limits).index(k)))
    if ctas == 0:
        limiter = "does not fit"
    warps = ctas * num_warps
    return Occupancy(ctas, warps, warps / spec.max_warps_per_sm, limiter, limits)
