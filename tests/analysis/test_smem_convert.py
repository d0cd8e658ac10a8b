"""Layout-conversion scratch against Triton 3.9 truth (benchmarks/truth/suite-triton-3.9.json, TTGIR
`allocation.size` of the `ttg.convert_layout` ops)."""
from __future__ import annotations

import pytest

from conftest import ROOT
from kernlint.analysis.linear_layout import blocked, needs_shared_memory, scratch_elements, slice_of
from kernlint.hardware.specs import SPECS
from kernlint.pipeline.api import Settings, lint_paths


def _vec(n: int, per_thread: int, warps: int):  # type: ignore[no-untyped-def]
    return blocked((n,), (per_thread,), (0,), warps)


@pytest.mark.parametrize("n, src_vec, dst_vec, warps, bits, truth_bytes", [
    # fused add+RMSNorm+int8: bf16 loads widened to 16 by the int8 store, bf16 store keeps 8
    (2048, 16, 8, 4, 16, 4096), (8192, 16, 8, 4, 16, 4096), (4096, 16, 8, 8, 16, 8192),
    # residual dropout with the int8 keep-mask store: fp16 out store
    (16384, 16, 8, 16, 16, 16384), (4096, 16, 8, 4, 16, 4096),
    # norm backward fp32 store of values from 8-wide 16-bit loads: num_warps x 1,024 B
    (4096, 8, 4, 4, 32, 4096), (16384, 8, 4, 16, 32, 16384),
])
def test_scratch_of_store_conversions_matches_truth(n: int, src_vec: int, dst_vec: int, warps: int, bits: int,
                                                    truth_bytes: int) -> None:
    src, dst = _vec(n, src_vec, warps), _vec(n, dst_vec, warps)
    assert needs_shared_memory(src, dst)
    assert scratch_elements(src, dst, bits) * bits // 8 == truth_bytes


@pytest.mark.parametrize("target, truth_bytes", [("a100", 1024), ("h100", 512), ("b200", 512)])
def test_vector_broadcast_into_tile_matches_truth_per_target(target: str, truth_bytes: int) -> None:
    # causal conv1d, BLOCK_L = BLOCK_D = 256, 4 warps: [256] 2/thread -> slice(0) of [256, 256] 8/thread;
    # sm_90/100 can write through the stmatrix lane pattern and keep one register bit as a rep
    src = _vec(256, 2, 4)
    dst = slice_of((256, 256), (1, 8), (1, 0), 4, 0)
    assert needs_shared_memory(src, dst)
    assert scratch_elements(src, dst, 32, SPECS[target].stmatrix, SPECS[target].ldmatrix) * 4 == truth_bytes


@pytest.mark.parametrize("target, truth_bytes", [("a100", 256), ("h100", 128), ("b200", 128)])
def test_rope_cos_broadcast_one_warp_matches_truth_per_target(target: str, truth_bytes: int) -> None:
    # examples/rope.py BLOCK_H=32, 1 warp: [64] 2/thread -> slice(0) of [32, 64] 8/thread
    src = _vec(64, 2, 1)
    dst = slice_of((32, 64), (1, 8), (1, 0), 1, 0)
    assert needs_shared_memory(src, dst)
    assert scratch_elements(src, dst, 32, SPECS[target].stmatrix, SPECS[target].ldmatrix) * 4 == truth_bytes


@pytest.mark.parametrize("src, dst, truth_needs_smem", [
    # 1 warp, RoPE backward: [32] 1/thread -> slice of [8, 32] with 8/thread: 128 B of scratch
    (_vec(32, 1, 1), slice_of((8, 32), (1, 8), (1, 0), 1, 0), True),
    # 1 warp, examples/rope.py BLOCK_H=2: [64] 2/thread -> slice of [2, 64] 4/thread: shuffles, 0 B
    (_vec(64, 2, 1), slice_of((2, 64), (1, 4), (1, 0), 1, 0), False),
    # 1 warp, layernorm dW/dB: reduced [8, 64] (slice, 4/thread) -> [64] 2/thread store: shuffles, 0 B
    (slice_of((8, 64), (1, 4), (1, 0), 1, 0), _vec(64, 2, 1), False),
    # 16 warps, int8 quantizer: row absmax slice (all rows in registers) -> 1-D store layout: 64 B
    (slice_of((16, 8192), (1, 16), (1, 0), 16, 1), _vec(16, 1, 16), True),
    # same layout on both sides
    (_vec(1024, 8, 4), _vec(1024, 8, 4), False),
])
def test_when_a_conversion_goes_through_shared_memory(src, dst, truth_needs_smem: bool) -> None:  # type: ignore[no-untyped-def]
    assert needs_shared_memory(src, dst) == truth_needs_smem


POINTWISE_ARGS = {
    "x_ptr": "*bf16", "residual_ptr": "*bf16", "w_ptr": "*bf16", "q_ptr": "*i8", "scale_ptr": "*fp32",
    "residual_out_ptr": "*bf16", "stride": "i32", "n_cols": "i32", "eps": "fp32",
}


@pytest.mark.parametrize("config, truth_shared", [
    # recorded Triton 3.9 metadata.shared, all three targets agree
    ({"BLOCK_N": 1024, "num_warps": 4, "num_stages": 1}, 16),       # loads and stores all 8-wide
    ({"BLOCK_N": 2048, "num_warps": 4, "num_stages": 1}, 4096),     # 16-wide loads, 8-wide bf16 store
    ({"BLOCK_N": 8192, "num_warps": 16, "num_stages": 1}, 16384),
    ({"BLOCK_N": 256, "num_warps": 1, "num_stages": 1}, 0),
])
def test_fused_add_rmsnorm_int8_end_to_end(config: dict[str, int], truth_shared: int) -> None:
    result = lint_paths([str(ROOT / "tests/truth/suite_kernels/pointwise.py")],
                        Settings(targets=("h100",), cli_configs=(config,), arg_types=POINTWISE_ARGS))
    kernel = next(k for f in result.files for k in f.kernels if k.jit.name == "fused_add_rmsnorm_int8_kernel")
    estimate = next(e for e in kernel.estimates if e.config.origin == "cli")
    assert estimate.smem.total == truth_shared
