"""Reduction/scan scratch (kernlint/analysis/smem_reduce.py) against Triton 3.9 compiles.

Layouts were read from the TTGIR of those compiles (#blocked attributes); byte counts are
`metadata.shared` of single-buffer kernels (recorded in benchmarks/truth/suite-triton-3.9.json or
compiled for this test, as noted per case).
"""
from __future__ import annotations

from conftest import ROOT

from kernlint.analysis.smem_reduce import (
    Layout,
    blocked_layout,
    reduce_scratch_bytes,
    reshaped_layout,
    scan_scratch_bytes,
)
from kernlint.pipeline.api import Settings, lint_paths


def _triple(layout: Layout) -> tuple[list[int], list[int], list[int]]:
    """(sizePerThread, threadsPerWarp, warpsPerCTA) of a layout, as TTGIR prints them."""
    def per_dim(kinds: tuple[str, ...]) -> list[int]:
        return [1 << sum(1 for k in bits if k in kinds) for bits in layout.bits]
    return per_dim(("reg",)), per_dim(("lane",)), per_dim(("warp",))


def test_blocked_layout_matches_ttgir() -> None:
    # welford_row_stats_kernel, bf16 loads (8 per 16-B access)
    assert _triple(blocked_layout([8, 256], 8, 4)) == ([1, 8], [1, 32], [4, 1])
    assert _triple(blocked_layout([64, 512], 8, 2)) == ([1, 8], [1, 32], [1, 2])
    # layernorm_bwd_dx_fused_kernel [1024] fp16, 4 warps
    assert _triple(blocked_layout([1024], 8, 4)) == ([8], [32], [4])


def test_reshape_keeps_elements_in_their_threads() -> None:
    # Fp8GroupQuantizer: [2048] with 8 per thread, 8 warps, reshaped to [16, 128] (TTGIR #blocked)
    flat = blocked_layout([2048], 8, 8)
    assert _triple(reshaped_layout(flat, [16, 128])) == ([1, 8], [2, 16], [8, 1])


def test_reduce_scratch() -> None:
    # tuple reduce of three fp32 accumulators over axis 1 (welford): partials of the warps along the row
    assert reduce_scratch_bytes(blocked_layout([1, 1024], 8, 4), 1, [32, 32, 32]) == 4 * 12        # truth 48
    assert reduce_scratch_bytes(blocked_layout([4, 512], 8, 4), 1, [32, 32, 32]) == 4 * 2 * 12     # truth 96
    # 64 rows × 2 warps = 128 partials, but 16 rows per thread: the swizzled conversion moves them in
    # 4 rounds of 32 (reps), 32 × 12 B — compiled Triton 3.9 sm_90, BLOCK_M=64 BLOCK_N=512 2 warps: 384
    assert reduce_scratch_bytes(blocked_layout([64, 512], 8, 2), 1, [32, 32, 32]) == 384
    # one warp along the row: shuffles only
    assert reduce_scratch_bytes(blocked_layout([8, 256], 8, 4), 1, [32, 32, 32]) == 0
    # column sums of fp32 [16, 256], 4 warps as [2, 2]: 2 warp partials × 256 columns × 4 B (truth 2,048)
    assert reduce_scratch_bytes(blocked_layout([16, 256], 4, 4), 0, [32]) == 2048


def test_scan_scratch() -> None:
    # linear_recurrence_kernel: (a, b) fp32 pair scanned over axis 0 (recorded truth)
    assert scan_scratch_bytes([64, 32], blocked_layout([64, 32], 8, 4), 0, 8, 4) == 2048
    assert scan_scratch_bytes([256, 128], blocked_layout([256, 128], 8, 4), 0, 8, 4) == 131072
    assert scan_scratch_bytes([16, 16], blocked_layout([16, 16], 8, 1), 0, 8, 1) == 0


def test_scan_reduce_kernels_end_to_end() -> None:
    configs = ({"BLOCK_M": 4, "BLOCK_N": 512, "num_warps": 4, "num_stages": 2},
               {"BLOCK_M": 8, "BLOCK_N": 256, "num_warps": 4, "num_stages": 3},
               {"BLOCK_T": 64, "BLOCK_D": 32, "num_warps": 4, "num_stages": 2})
    args = {"x_ptr": "*bf16", "mean_ptr": "*fp32", "rstd_ptr": "*fp32", "a_ptr": "*fp16", "b_ptr": "*fp16",
            "h_ptr": "*fp16", "h0_ptr": "*fp32", "stride_d": "1"}
    path = str(ROOT / "tests/truth/suite_kernels/scan_reduce.py")
    result = lint_paths([path], Settings(targets=("h100",), cli_configs=configs, arg_types=args))
    shared = {}
    for kernel in result.files[0].kernels:
        for e in kernel.estimates:
            if e.config.origin == "cli":
                shared[(kernel.jit.name, tuple(sorted(e.config.constexprs.items())))] = e.smem.total
    # recorded truth (suite-triton-3.9.json): 96 B tuple-reduce scratch; 32 B = the [8] fp32 mean
    # converted from the sliced layout to the store's layout; 2,048 B scan scratch
    assert shared[("welford_row_stats_kernel", (("BLOCK_M", 4), ("BLOCK_N", 512)))] == 96
    assert shared[("welford_row_stats_kernel", (("BLOCK_M", 8), ("BLOCK_N", 256)))] == 32
    assert shared[("linear_recurrence_kernel", (("BLOCK_D", 32), ("BLOCK_T", 64)))] == 2048


PROBES = '''
import triton
import triton.language as tl


@triton.jit
def argmax_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr, tl.argmax(x, 0))


@triton.jit
def colmax_kernel(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + tl.arange(0, BN), tl.max(x, 0))


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.cumsum(x, 0))


@triton.jit
def max_with_index_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    m, i = tl.max(x, axis=0, return_indices=True)
    tl.store(out_ptr, m)
    tl.store(out_ptr + 1, i)
'''

# (kernel, element type, config, metadata.shared) — compiled with Triton 3.9 for sm_90
PROBE_TRUTH = [
    ("argmax_kernel", "fp16", {"BLOCK": 2048, "num_warps": 4}, 24),   # 4 warps × (2 B value + 4 B index)
    ("argmax_kernel", "fp32", {"BLOCK": 256, "num_warps": 8}, 64),    # 1 per thread: 8 warps × 8 B
    ("colmax_kernel", "fp16", {"BM": 64, "BN": 64, "num_warps": 8}, 1024),  # 8 warp partials × 64 × 2 B
    ("colmax_kernel", "fp32", {"BM": 32, "BN": 1024, "num_warps": 4}, 0),   # warps along the columns
    ("cumsum_kernel", "fp32", {"BLOCK": 1024, "num_warps": 4}, 32),   # 4 warps × 4 B × 2 blocks
    ("cumsum_kernel", "fp16", {"BLOCK": 256, "num_warps": 8}, 16),    # 8 warps × 2 B
    # tl.max(..., return_indices=True) is argmax's reduction: the value, unpromoted, and its i32 index
    ("max_with_index_kernel", "fp16", {"BLOCK": 1024, "num_warps": 4}, 24),  # 4 warps × (2 + 4) B
    ("max_with_index_kernel", "fp16", {"BLOCK": 64, "num_warps": 4}, 12),    # 2 warps hold 64 × (2 + 4) B
    ("max_with_index_kernel", "fp16", {"BLOCK": 4096, "num_warps": 8}, 48),  # 8 warps × (2 + 4) B
]


def test_probe_kernels_against_compiles(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "probes.py"
    path.write_text(PROBES)
    for name, dtype, config, truth in PROBE_TRUTH:
        args = {"x_ptr": f"*{dtype}", "out_ptr": "*i32" if name == "argmax_kernel" else f"*{dtype}"}
        result = lint_paths([str(path)], Settings(targets=("h100",), cli_configs=({**config, "num_stages": 1},),
                                                   arg_types=args))
        [kernel] = [k for k in result.files[0].kernels if k.jit.name == name]
        [estimate] = [e for e in kernel.estimates if e.config.origin == "cli"]
        assert estimate.smem.total == truth, (name, dtype, config)


STRIDED = '''
import triton
import triton.language as tl


@triton.jit
def colmin_kernel(x_ptr, out_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x = tl.load(x_ptr + offs_m[:, None] * stride_m + offs_n[None, :] * stride_n, mask=mask, other=0.0)
    tl.store(out_ptr + offs_n, tl.min(tl.sqrt(tl.abs(x.to(tl.float32))), axis=0), mask=offs_n < N)
'''


def test_runtime_inner_stride_loads_one_element_per_thread(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A load whose column offsets are multiplied by a runtime stride is not contiguous: Coalesce gives it
    sizePerThread [1, 1], threadsPerWarp [1, 32], so all 8 warps lie along the rows and the column-min
    combines 8 warp partials × 32 columns × 4 B = 1,024 B at every BLOCK_M. With a unit stride the load is
    vectorised (8 fp16 per thread from BLOCK_M = 64 on), fewer warps are left along the rows and the scratch
    halves. Truth: `kernlint calibrate` of this kernel (Triton 3.9; sm_80, sm_90 and sm_100 agree):
    runtime stride 1,024 B at BLOCK_M 32 / 64 / 128; unit stride 1,024 / 512 / 512 B. Before the vector
    width followed the pointer's contiguity, kernlint said 512 B for the runtime stride from 64 on (found
    by benchmarks/fuzz.py: shared memory fell as BLOCK_M grew)."""
    path = tmp_path / "strided.py"
    path.write_text(STRIDED)

    def shared(block_m: int, inner_stride: str) -> int:
        config = {"BLOCK_M": block_m, "BLOCK_N": 32, "num_warps": 8, "num_stages": 3}
        args = {"x_ptr": "*fp16", "out_ptr": "*fp16", "stride_n": inner_stride}
        result = lint_paths([str(path)], Settings(targets=("h100", "b200"), cli_configs=(config,),
                                                   arg_types=args))
        totals = {e.smem.total for k in result.files[0].kernels for e in k.estimates if e.config.origin == "cli"}
        assert len(totals) == 1, totals
        return totals.pop()

    assert [shared(bm, "i32") for bm in (32, 64, 128)] == [1024, 1024, 1024]
    assert [shared(bm, "1") for bm in (32, 64, 128)] == [1024, 512, 512]



COLUMN_MIN = '''
import triton
import triton.language as tl


@triton.jit
def column_min_kernel(w_ptr, out_ptr, N, K, stride_n, stride_k, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_n = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    t = tl.load(w_ptr + offs_k[:, None] * stride_k + offs_n[None, :] * stride_n,
                mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
    tl.store(out_ptr + offs_n, tl.min(t, axis=0), mask=offs_n < N)
'''


def test_a_tile_contiguous_along_dim_0_is_laid_out_dim_0_first(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """With stride_k = 1 the [BLOCK_K, BLOCK_N] tile advances along dim 0, so Coalesce orders it dim 0 first:
    TTGIR (Triton 3.9, 8 warps) sizePerThread [8, 1], threadsPerWarp [4, 8], warpsPerCTA [1, 8], order [0, 1].
    The min over axis 0 then stays inside each warp (shuffles, no scratch); what is left is the conversion of
    the [128] fp16 result to the store's layout: 128 × 2 B = 256 B. Truth: Triton 3.9 compiles of this kernel,
    BLOCK_K 32, BLOCK_N 128, 4 and 8 warps: 256 B on sm_80, sm_90 and sm_100. With the row-major layout kernlint
    assumed before, the warps lay along dim 0 and the min combined them (1,024 B at 4 warps; found by
    benchmarks/fuzz_truth.py, seed 6)."""
    path = tmp_path / "column_min.py"
    path.write_text(COLUMN_MIN)
    configs = tuple({"BLOCK_N": 128, "BLOCK_K": 32, "num_warps": w, "num_stages": 3} for w in (4, 8))
    result = lint_paths([str(path)], Settings(targets=("a100", "h100", "b200"), cli_configs=configs,
                                               arg_types={"*": "*fp16", "stride_k": "1"}))
    got = {(e.target.key, e.config.num_warps): e.smem.total for k in result.files[0].kernels
           for e in k.estimates if e.config.origin == "cli"}
    assert got == {(t, w): 128 * 2 for t in ("a100", "h100", "b200") for w in (4, 8)}


ROWSUM = '''
import triton
import triton.language as tl


@triton.jit
def rowsum_kernel(x_ptr, out_ptr, M, K, stride_m, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(x_ptr + offs_m[:, None] * stride_m + (k + offs_k)[None, :], mask=offs_m[:, None] < M)
        acc += tl.sum(x.to(tl.float32), axis=1)
    tl.store(out_ptr + offs_m, acc, mask=offs_m < M)
'''


def test_reduced_store_converts_the_stored_type(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """tl.store casts an fp32 row sum to the pointer's type and Triton converts the narrower tensor to the
    store's layout: BLOCK_M × pointee bytes. Truth (`kernlint calibrate` of this kernel, Triton 3.9, sm_90
    and sm_100, and sm_80 where it has the type): fp8 64 / 128 B, fp16 128 / 256 B, fp32 256 / 512 B at
    BLOCK_M = 64 (2 warps) / 128 (4 warps). Found by compiling fuzz-generated kernels (an fp8 store: 64 B
    where kernlint said 256)."""
    path = tmp_path / "rowsum.py"
    path.write_text(ROWSUM)
    configs = ({"BLOCK_M": 64, "BLOCK_K": 128, "num_warps": 2, "num_stages": 1},
               {"BLOCK_M": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 1})
    for pointee, nbytes in (("fp8e4nv", 1), ("fp16", 2), ("fp32", 4)):
        result = lint_paths([str(path)], Settings(targets=("h100", "b200"), cli_configs=configs,
                                                   arg_types={"x_ptr": "*fp16", "out_ptr": f"*{pointee}"}))
        got = sorted({(e.config.constexprs["BLOCK_M"], e.smem.total) for k in result.files[0].kernels
                      for e in k.estimates if e.config.origin == "cli"})
        assert got == [(64, 64 * nbytes), (128, 128 * nbytes)], (pointee, got)


def test_reduced_store_conversion_side_of_the_cast(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Which side of tl.store's cast Triton converts: the narrower one between floats, the value before a
    float-to-int cast. Truth (`kernlint calibrate`, Triton 3.9, sm_80/90/100): the row sum cast to bf16 and
    stored as fp32 converts 2 B an element (128 / 256 B at BLOCK_M 64 / 128); stored as i8, also 2 B (a
    fuzz-generated kernel: 128 B at BLOCK_M 64)."""
    path = tmp_path / "rowsum_bf16.py"
    path.write_text(ROWSUM.replace("offs_m, acc,", "offs_m, acc.to(tl.bfloat16),"))
    configs = ({"BLOCK_M": 64, "BLOCK_K": 128, "num_warps": 2, "num_stages": 1},
               {"BLOCK_M": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 1})
    for pointee in ("fp32", "i8"):
        result = lint_paths([str(path)], Settings(targets=("a100", "h100", "b200"), cli_configs=configs,
                                                   arg_types={"x_ptr": "*fp16", "out_ptr": f"*{pointee}"}))
        got = sorted({(e.config.constexprs["BLOCK_M"], e.smem.total) for k in result.files[0].kernels
                      for e in k.estimates if e.config.origin == "cli"})
        assert got == [(64, 128), (128, 256)], (pointee, got)
