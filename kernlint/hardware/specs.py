"""GPU specification table: one record per target, every number with its source.

Sources (abbreviations used in the comments below):
  [CUDA-CC]   CUDA C++ Programming Guide, "Compute Capabilities" → "Technical Specifications per Compute
              Capability" table (threads/warps/blocks per SM, registers, shared memory per SM and per block).
  [CUDA-ALLOC] CUDA Occupancy Calculator / Programming Guide "Occupancy": registers are allocated per warp in
              units of 256, and every block reserves 1 KiB of shared memory for the system (sm_80 and newer).
  [TRITON-OOR] Triton's load-time check `OutOfResources: shared memory, Required: N, Hardware limit: L`;
              L is cudaDevAttrMaxSharedMemoryPerBlockOptin, measured on an H200 as 232,448 B
              (docs/design.md, "Ground truth"), 166,912 B on A100.
  [DS-*]      the vendor's product data sheet (SM counts, memory): H100 SXM5, H200 SXM, B200, A100 SXM4,
              L40S, GeForce RTX 4090, GeForce RTX 5090.
  [PTX-TCGEN05] PTX ISA, "Tensor Memory": 128 lanes x 512 columns of 32-bit cells per CTA pair/SM on sm_100a;
              Triton raises `OutOfResources: tensor memory` above 512 columns.
  [WP-*]      the architecture whitepaper's product table (boost clock, L2, tensor-core peaks):
              NVIDIA A100 Tensor Core GPU Architecture; NVIDIA H100 Tensor Core GPU Architecture (H100 SXM5:
              1.98 GHz boost, 1.83 GHz for tensor-core work, 50 MB L2); NVIDIA Ada GPU Architecture (AD102,
              RTX 4090); NVIDIA RTX Blackwell GPU Architecture (RTX 5090). GeForce parts run FP16 tensor-core
              math with FP32 accumulation (what `tl.dot` does) at half their FP16-accumulate rate.
  [TPU]       TechPowerUp GPU Database (clocks NVIDIA's data sheet leaves out).
  [PTX-ISA]   PTX ISA: stmatrix (sm_90+), ldmatrix (sm_75+), cp.async.bulk.tensor / TMA (sm_90+).
  [T39]       measured with Triton 3.9 (ptxas 12.9 on sm_80, 13.x on sm_90/sm_100); the measurement is named in
              the docstring of the analysis module that reads the field.
  [UNPUBLISHED] NVIDIA publishes no number: the value the time model used before this table held it; replace
              it with a published or measured one.
Tensor-core peaks are dense (the data sheets' "with sparsity" figures halved).

Per-target compiler and hardware behaviour lives here too, never as `capability` or family comparisons in
the analyses: the boolean fields below (`has_tma`, `stmatrix`, `delays_sunk_loads`, ...) say what a target
does, and `GpuSpec.mma` (an `MmaFamily` of MMA_FAMILIES) what its tensor-core family's lowering does.

The time model (kernlint/recommend/model.py) reads `dram_gbps`, `boost_clock_ghz`, `l2_mb` and
`tensor_tflops`; the occupancy and shared-memory analyses read the rest.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PipelineRule = Literal["async_all_stages", "cp_async_stages_minus_one"]


@dataclass(frozen=True, slots=True)
class TensorTflops:
    """Dense tensor-core peak in TFLOP/s (no 2:4 sparsity), by operand type, FP32 accumulation."""

    fp16: float                   # fp16 and bf16 operands
    tf32: float
    fp8: float                    # 0.0: no FP8 tensor cores


@dataclass(frozen=True, slots=True)
class MmaFamily:
    """What Triton's lowering of `tl.dot` does on one tensor-core family (the value of GpuSpec.tensor_core)."""

    name: str                     # "mma_sync", "wgmma", "tcgen05"
    async_mma: bool               # warpgroup MMA reading shared-memory operands asynchronously (wgmma, tcgen05):
                                  # dots of >= 4 warps and >= 64 rows use it; mma.sync reads registers
    max_warps: int                # above this num_warps the dots fall back to mma.sync (tcgen05: 8) [T39]
    tmem_accumulator: bool        # the accumulator lives in tensor memory, read back through registers [PTX-TCGEN05]
    stages_every_operand_load: bool   # the pipeliner stages every load feeding the MMA, moving or not, and waits
                                  # on each MMA's completion mbarrier (tcgen05) [T39, analysis/placement.py]
    holds_accumulated_loads: bool     # ptxas keeps every load of two or more in-loop accumulations in flight
                                  # (sm_100) [T39, analysis/register_streams.py]
    swizzle_aligns_staged: bool   # a staged 128-B-row operand read by dots of two loops is aligned to the
                                  # 1,024-B swizzle atom (tcgen05) [T39, analysis/smem_swizzle.py]
    reshaped_operand_in_registers: bool  # a reshaped pointer-load operand is loaded into registers and staged
                                  # once (the cp.async pipeliner of mma.sync) [T39, analysis/operand_loads.py]
    int8_operand_k_major_only: bool  # an 8-bit B operand that is N-contiguous is not pipelined (wgmma reads
                                  # 8-bit operands K-major only; tcgen05 either order) [T39, analysis/operand_loads.py]
    transposed_a_copied_at_use: bool  # an async dot's transposed A operand is copied at the dot, not at its
                                  # source (wgmma) [T39, analysis/smem_straight.py]


MMA_FAMILIES: dict[str, MmaFamily] = {
    "mma_sync": MmaFamily("mma_sync", async_mma=False, max_warps=32, tmem_accumulator=False,
                          stages_every_operand_load=False, holds_accumulated_loads=False, swizzle_aligns_staged=False,
                          reshaped_operand_in_registers=True, int8_operand_k_major_only=False,
                          transposed_a_copied_at_use=False),
    "wgmma": MmaFamily("wgmma", async_mma=True, max_warps=32, tmem_accumulator=False,
                       stages_every_operand_load=False, holds_accumulated_loads=False, swizzle_aligns_staged=False,
                       reshaped_operand_in_registers=False, int8_operand_k_major_only=True,
                       transposed_a_copied_at_use=True),
    "tcgen05": MmaFamily("tcgen05", async_mma=True, max_warps=8, tmem_accumulator=True,
                         stages_every_operand_load=True, holds_accumulated_loads=True, swizzle_aligns_staged=True,
                         reshaped_operand_in_registers=False, int8_operand_k_major_only=False,
                         transposed_a_copied_at_use=False),
}


@dataclass(frozen=True, slots=True)
class GpuSpec:
    key: str                      # canonical target key used on the command line ("h100")
    name: str                     # marketing name for messages
    arch: str                     # "sm_90"
    capability: int               # Triton's GPUTarget capability (90)
    sms: int                      # streaming multiprocessors [DS-*]
    regs_per_sm: int              # 32-bit registers per SM [CUDA-CC]
    max_regs_per_thread: int      # [CUDA-CC]
    reg_alloc_unit_per_warp: int  # registers are handed out per warp in this granule [CUDA-ALLOC]
    max_threads_per_sm: int       # [CUDA-CC]
    max_ctas_per_sm: int          # [CUDA-CC]
    smem_per_sm: int              # bytes of shared memory per SM usable by CTAs [CUDA-CC]
    smem_per_cta_optin: int       # bytes; the limit Triton compares `metadata.shared` with [TRITON-OOR]
    smem_reserved_per_cta: int    # bytes the driver reserves per CTA [CUDA-ALLOC]
    tmem_columns: int             # tensor-memory columns per CTA (0: no tensor memory) [PTX-TCGEN05]
    pipeline_rule: PipelineRule   # how Triton's software pipeliner sizes dot-operand buffers (see analysis.smem)
    tensor_core: str              # the MMA flavour Triton emits for tl.dot: "mma_sync", "wgmma", "tcgen05"
    memory: str                   # for explain output only [DS-*]
    dram_gbps: float              # DRAM bandwidth, GB/s [DS-*]
    boost_clock_ghz: float        # SM boost clock [WP-*] or [DS-*]
    l2_mb: float                  # L2 capacity, MB [WP-*] or [DS-*]
    tensor_tflops: TensorTflops   # [DS-*] or [WP-*]
    # Per-target behaviour the analyses read (each record says why it holds there):
    has_tma: bool                 # tensor descriptors stay TMA tensormaps (sm_90+) [PTX-ISA]; else pointer tiles
    stmatrix: bool                # layout conversions may write shared memory with stmatrix (sm_90+) [PTX-ISA]
    ldmatrix: bool                # ... and read it with ldmatrix (sm_75+) [PTX-ISA]
    hoists_unrolled_tiles: bool   # ptxas issues every tl.static_range iteration's full tiles at once [T39]
    streams_2d_reductions: bool   # ptxas streams a 2-D reduction's loads through a window [T39]
    delays_sunk_loads: bool       # ptxas delays a looped sunk group's loads to fit the budget [T39]
    serialises_philox: bool       # ptxas runs independent Philox chains one after another to reach full
                                  # occupancy [T39]
    smem_carveout_steps_kb: tuple[int, ...]   # (second-largest, largest) shared-memory carve-out steps where a
                                  # CTA above the second measured slower (time model); () where not measured

    @property
    def mma(self) -> MmaFamily:
        """What the lowering of tl.dot does on this target's tensor-core family."""
        return MMA_FAMILIES[self.tensor_core]

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // 32

    def full_occupancy_registers(self, threads_per_cta: int) -> int:
        """The most registers a thread may hold while the SM still runs its most threads of this CTA size
        (the thread limit, or the CTA limit for small CTAs), in the allocation granule: 32 for 128 threads
        on sm_90 (65,536 / 2,048), 64 for 32 threads (32 CTAs × 32 threads)."""
        resident = min(self.max_threads_per_sm, self.max_ctas_per_sm * threads_per_cta)
        granule = max(1, self.reg_alloc_unit_per_warp // 32)
        per_thread = min(self.max_regs_per_thread, self.regs_per_sm // max(1, resident))
        return per_thread - per_thread % granule

    def same_occupancy_registers(self, threads_per_cta: int, registers: int) -> int:
        """The most registers a thread may hold while the SM keeps as many CTAs of this size resident as it
        does at `registers` (registers are handed out per warp in `reg_alloc_unit_per_warp` granules): 40 for
        33-40 registers at 128 threads on sm_90 (12 CTAs), 48 for 41-48 (10 CTAs)."""
        warps = max(1, threads_per_cta // 32)
        unit = self.reg_alloc_unit_per_warp
        per_warp = -(-max(1, registers) * 32 // unit) * unit
        ctas = min(self.max_ctas_per_sm, self.max_threads_per_sm // max(1, threads_per_cta),
                   self.regs_per_sm // (per_warp * warps))
        if ctas < 1:
            return self.max_regs_per_thread
        granule = max(1, unit // 32)
        most = self.regs_per_sm // (ctas * warps * 32)
        return min(self.max_regs_per_thread, most - most % granule)


def _sm90(key: str, name: str, memory: str, dram_gbps: float) -> GpuSpec:
    return GpuSpec(
        key=key, name=name, arch="sm_90", capability=90,
        sms=132,                     # [DS-H100 SXM5], [DS-H200]: same GH100 die configuration
        regs_per_sm=65536, max_regs_per_thread=255, reg_alloc_unit_per_warp=256,
        max_threads_per_sm=2048, max_ctas_per_sm=32,
        smem_per_sm=233472,          # 228 KiB [CUDA-CC, cc 9.0]
        smem_per_cta_optin=232448,   # 227 KiB [CUDA-CC, cc 9.0]; measured on H200 [TRITON-OOR]
        smem_reserved_per_cta=1024,
        tmem_columns=0,
        pipeline_rule="async_all_stages",  # TMA/wgmma pipelines keep num_stages buffers (triton_truth.md)
        tensor_core="wgmma",
        memory=memory,
        dram_gbps=dram_gbps,
        boost_clock_ghz=1.98,        # [WP-H100]; the H200 is the same GH100 SXM configuration
        l2_mb=50,                    # [WP-H100]
        tensor_tflops=TensorTflops(fp16=989.4, tf32=494.7, fp8=1978.9),   # [DS-H100 SXM5], [DS-H200]
        has_tma=True, stmatrix=True, ldmatrix=True,   # sm_90 [PTX-ISA]
        hoists_unrolled_tiles=True,  # [T39]: all taps' loads in flight (analysis/register_unroll.py)
        streams_2d_reductions=True,  # [T39] (analysis/register_streams.py, sink_loads)
        delays_sunk_loads=False,     # [T39]: ptxas 13 on sm_90 spills instead (analysis/register_delayed.py)
        serialises_philox=True,      # [T39]: tl.rand kernels at 2-8 warps (analysis/spill_collapse.py)
        smem_carveout_steps_kb=(196, 228),   # cc 9.0 carve-out steps [CUDA-CC]; penalty measured on H200
    )


SPECS: dict[str, GpuSpec] = {
    "h100": _sm90("h100", "H100 SXM", "80 GB HBM3, 3.35 TB/s", dram_gbps=3350),   # [DS-H100 SXM5]
    "h200": _sm90("h200", "H200 SXM", "141 GB HBM3e, 4.8 TB/s", dram_gbps=4800),  # [DS-H200]
    "b200": GpuSpec(
        key="b200", name="B200", arch="sm_100", capability=100,
        sms=148,                     # [DS-B200]
        regs_per_sm=65536, max_regs_per_thread=255, reg_alloc_unit_per_warp=256,
        max_threads_per_sm=2048, max_ctas_per_sm=32,
        smem_per_sm=233472,          # 228 KiB [CUDA-CC, cc 10.0]
        smem_per_cta_optin=232448,   # 227 KiB [CUDA-CC, cc 10.0]
        smem_reserved_per_cta=1024,
        tmem_columns=512,            # [PTX-TCGEN05]
        pipeline_rule="async_all_stages",
        tensor_core="tcgen05",
        memory="180 GB HBM3e, 8 TB/s",
        dram_gbps=8000,              # [DS-B200]
        boost_clock_ghz=1.9,         # [UNPUBLISHED]
        l2_mb=126,                   # [UNPUBLISHED]
        tensor_tflops=TensorTflops(fp16=2250, tf32=1100, fp8=4500),   # [DS-B200] (HGX B200, per GPU)
        has_tma=True, stmatrix=True, ldmatrix=True,   # sm_100 [PTX-ISA]
        hoists_unrolled_tiles=True,  # [T39] (analysis/register_unroll.py)
        streams_2d_reductions=False,  # [T39]: sm_100 holds a 2-D reduction's tiles (analysis/register_streams.py)
        delays_sunk_loads=True,      # [T39] (analysis/register_delayed.py)
        serialises_philox=True,      # [T39] (analysis/spill_collapse.py)
        smem_carveout_steps_kb=(),   # carve-out penalty not measured on sm_100
    ),
    "a100": GpuSpec(
        key="a100", name="A100 SXM", arch="sm_80", capability=80,
        sms=108,                     # [DS-A100]
        regs_per_sm=65536, max_regs_per_thread=255, reg_alloc_unit_per_warp=256,
        max_threads_per_sm=2048, max_ctas_per_sm=32,
        smem_per_sm=167936,          # 164 KiB [CUDA-CC, cc 8.0]
        smem_per_cta_optin=166912,   # 163 KiB [CUDA-CC, cc 8.0], [TRITON-OOR]
        smem_reserved_per_cta=1024,
        tmem_columns=0,
        pipeline_rule="cp_async_stages_minus_one",  # sm_80 allocates num_stages-1 buffers (triton_truth.md)
        tensor_core="mma_sync",
        memory="80 GB HBM2e, 2.0 TB/s",
        dram_gbps=2039,              # [DS-A100], 80 GB SXM4
        boost_clock_ghz=1.41,        # [WP-A100]
        l2_mb=40,                    # [WP-A100]
        tensor_tflops=TensorTflops(fp16=312, tf32=156, fp8=0.0),   # [DS-A100]
        has_tma=False, stmatrix=False, ldmatrix=True,   # sm_80: no TMA, no stmatrix [PTX-ISA]
        hoists_unrolled_tiles=False,  # [T39]: only the small operands in flight (analysis/register_unroll.py)
        streams_2d_reductions=True,  # [T39] (analysis/register_streams.py)
        delays_sunk_loads=True,      # [T39]: ptxas 12.9 (analysis/register_delayed.py)
        serialises_philox=False,     # [T39]: ptxas 12.9 keeps the chains (analysis/spill_collapse.py)
        smem_carveout_steps_kb=(),   # carve-out penalty not measured on sm_80
    ),
    "l40s": GpuSpec(
        key="l40s", name="L40S", arch="sm_89", capability=89,
        sms=142,                     # [DS-L40S]
        regs_per_sm=65536, max_regs_per_thread=255, reg_alloc_unit_per_warp=256,
        max_threads_per_sm=1536, max_ctas_per_sm=24,   # [CUDA-CC, cc 8.9]
        smem_per_sm=102400,          # 100 KiB [CUDA-CC, cc 8.9]
        smem_per_cta_optin=101376,   # 99 KiB [CUDA-CC, cc 8.9]
        smem_reserved_per_cta=1024,
        tmem_columns=0,
        pipeline_rule="cp_async_stages_minus_one",
        tensor_core="mma_sync",
        memory="48 GB GDDR6, 864 GB/s",
        dram_gbps=864,               # [DS-L40S]
        boost_clock_ghz=2.52,        # [TPU]
        l2_mb=96,                    # [WP-Ada]: AD102's L2
        tensor_tflops=TensorTflops(fp16=362.05, tf32=183, fp8=733),   # [DS-L40S]
        has_tma=False, stmatrix=False, ldmatrix=True,   # sm_89 as sm_80 [PTX-ISA]
        hoists_unrolled_tiles=False,  # sm_80's ptxas behaviour assumed (no sm_89 truth)
        streams_2d_reductions=True,
        delays_sunk_loads=False,     # measured on sm_80 / sm_100 only
        serialises_philox=False,     # as sm_80
        smem_carveout_steps_kb=(),
    ),
    "rtx4090": GpuSpec(
        key="rtx4090", name="GeForce RTX 4090", arch="sm_89", capability=89,
        sms=128,                     # [DS-RTX 4090]
        regs_per_sm=65536, max_regs_per_thread=255, reg_alloc_unit_per_warp=256,
        max_threads_per_sm=1536, max_ctas_per_sm=24,   # [CUDA-CC, cc 8.9]
        smem_per_sm=102400, smem_per_cta_optin=101376, smem_reserved_per_cta=1024,
        tmem_columns=0,
        pipeline_rule="cp_async_stages_minus_one",
        tensor_core="mma_sync",
        memory="24 GB GDDR6X, 1.0 TB/s",
        dram_gbps=1008,              # [WP-Ada]
        boost_clock_ghz=2.52,        # [WP-Ada]
        l2_mb=72,                    # [WP-Ada]
        tensor_tflops=TensorTflops(fp16=165.2, tf32=82.6, fp8=330.3),   # [WP-Ada], FP32 accumulation
        has_tma=False, stmatrix=False, ldmatrix=True,   # sm_89 as sm_80 [PTX-ISA]
        hoists_unrolled_tiles=False,  # sm_80's ptxas behaviour assumed (no sm_89 truth)
        streams_2d_reductions=True,
        delays_sunk_loads=False,     # measured on sm_80 / sm_100 only
        serialises_philox=False,     # as sm_80
        smem_carveout_steps_kb=(),
    ),
    "rtx5090": GpuSpec(
        key="rtx5090", name="GeForce RTX 5090", arch="sm_120", capability=120,
        sms=170,                     # [DS-RTX 5090]
        regs_per_sm=65536, max_regs_per_thread=255, reg_alloc_unit_per_warp=256,
        max_threads_per_sm=1536, max_ctas_per_sm=32,   # [CUDA-CC, cc 12.0]
        smem_per_sm=102400, smem_per_cta_optin=101376, smem_reserved_per_cta=1024,  # [CUDA-CC, cc 12.0]
        tmem_columns=0,              # consumer Blackwell has no tensor memory; Triton emits mma.sync there
        pipeline_rule="cp_async_stages_minus_one",
        tensor_core="mma_sync",
        memory="32 GB GDDR7, 1.8 TB/s",
        dram_gbps=1792,              # [WP-RTX Blackwell]
        boost_clock_ghz=2.407,       # [WP-RTX Blackwell]
        l2_mb=96,                    # [WP-RTX Blackwell]
        tensor_tflops=TensorTflops(fp16=209.5, tf32=104.8, fp8=419),   # [WP-RTX Blackwell], FP32 accumulation
        has_tma=True, stmatrix=True, ldmatrix=True,   # sm_120 [PTX-ISA]
        hoists_unrolled_tiles=True,  # sm_90+ ptxas behaviour assumed (no sm_120 truth)
        streams_2d_reductions=False,  # as sm_100 (no sm_120 truth)
        delays_sunk_loads=False,     # measured on sm_80 / sm_100 only
        serialises_philox=True,      # as sm_90 / sm_100 (no sm_120 truth)
        smem_carveout_steps_kb=(),
    ),
}

# Aliases accepted by --target: architecture names map to the most common part of that architecture.
_ALIASES: dict[str, str] = {
    "sm_90": "h100", "sm90": "h100", "sm_90a": "h100", "hopper": "h100", "h100-sxm": "h100",
    "sm_100": "b200", "sm100": "b200", "sm_100a": "b200", "blackwell": "b200",
    "sm_80": "a100", "sm80": "a100", "ampere": "a100",
    "sm_89": "l40s", "sm89": "l40s", "ada": "l40s", "4090": "rtx4090",
    "sm_120": "rtx5090", "sm120": "rtx5090", "5090": "rtx5090",
}


class UnknownTarget(ValueError):
    pass


def resolve_target(name: str) -> GpuSpec:
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in SPECS:
        known = ", ".join(sorted(SPECS))
        raise UnknownTarget(f"unknown target {name!r} (known: {known}; also sm_80, sm_89, sm_90, sm_100, sm_120)")
    return SPECS[key]


def resolve_targets(names: list[str] | tuple[str, ...]) -> tuple[GpuSpec, ...]:
    """Resolve comma-separated and repeated --target values, keeping order and dropping duplicates."""
    seen: dict[str, GpuSpec] = {}
    for raw in names:
        for part in raw.split(","):
            if part.strip():
                spec = resolve_target(part)
                seen.setdefault(spec.key, spec)
    return tuple(seen.values())
