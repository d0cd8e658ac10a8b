"""The accumulator's epilogue conversion (#mma → the store's #blocked) and the flattened persistent loop that
keeps the operand buffers allocated around it. Expected numbers are Triton 3.9 compiles of
examples/persistent_matmul.py (benchmarks/truth/triton-3.9.json: `metadata.shared`; TTGIR #mma warpsPerCTA)."""
from __future__ import annotations

import pytest

from conftest import ROOT
from kernlint.analysis.linear_layout import blocked, mma_accumulator, mma_warps, needs_shared_memory, scratch_elements
from kernlint.hardware.specs import SPECS
from kernlint.pipeline.api import Settings, lint_paths

ARGS = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "stride_ak": "1", "stride_bn": "1", "stride_cn": "1"}


@pytest.mark.parametrize("shape, warps, truth", [
    ((128, 64), 4, (2, 2)), ((128, 64), 8, (4, 2)), ((128, 128), 4, (2, 2)), ((128, 128), 8, (2, 4)),
    ((64, 128), 4, (1, 4)), ((64, 64), 4, (2, 2)),
    ((16, 16), 4, (2, 2)), ((32, 16), 8, (4, 2)),   # M keeps doubling past its 16-row slabs
])
def test_mma_sync_warps_per_cta_match_ttgir(shape: tuple[int, int], warps: int, truth: tuple[int, int]) -> None:
    assert mma_warps(shape, warps, wgmma=False) == truth


def test_wgmma_warps_go_along_m_in_warp_groups() -> None:
    # warp groups of 4 along M; 8 warps on 128 rows: two groups stacked (each group covers 64 rows)
    assert mma_warps((128, 64), 8, wgmma=True) == (8, 1)
    assert mma_warps((64, 128), 8, wgmma=True) == (4, 2)


def test_accumulator_layout_covers_the_tile_once() -> None:
    # every hardware bit maps to a distinct power of two: 128 × 64 = 2^13 positions, all reachable
    lay = mma_accumulator((128, 64), 8, wgmma=True)
    bases = [lay.flat(b) for b in lay.reg + lay.lane + lay.warp]
    assert sorted(bases) == [1 << i for i in range(13)]


@pytest.mark.parametrize("target, warps, wgmma, truth_bytes", [
    # 128 × 64 bf16 tile stored 8 elements per thread: 8 warps stack along M in the MMA layout and along
    # rows in the blocked one, no register bit in common → the whole tile (128 × 64 × 2 B)
    ("h100", 8, True, 16384),
    # 4 warps cover 64 rows: the second half repeats in registers on both sides → half the tile
    ("h100", 4, True, 8192),
])
def test_epilogue_scratch_halves_when_both_layouts_repeat_over_m(target: str, warps: int, wgmma: bool,
                                                                   truth_bytes: int) -> None:
    src = mma_accumulator((128, 64), warps, wgmma)
    dst = blocked((128, 64), (1, 8), (1, 0), warps)
    assert needs_shared_memory(src, dst)
    assert scratch_elements(src, dst, 16, SPECS[target].stmatrix, SPECS[target].ldmatrix) * 2 == truth_bytes


@pytest.mark.parametrize("target, bm, bn, warps, stages, truth_shared", [
    ("h100", 128, 64, 8, 3, 65536),    # 3 × 16 KiB A buffers + 16 KiB epilogue scratch
    ("h100", 128, 64, 4, 3, 57344),    # 3 × 16 KiB + the 8 KiB staged-B slot the 8 KiB scratch reuses
    ("h100", 128, 128, 8, 4, 98304),   # 4 × 16 KiB + 32 KiB
    ("a100", 128, 64, 4, 3, 49152),    # mma.sync [2, 2]: 2 × 16 KiB + 16 KiB
    ("a100", 128, 128, 8, 3, 65536),
    ("h100", 64, 128, 4, 3, 40960),    # scratch ≤ the staged 16 KiB B: unchanged
])
def test_persistent_matmul_smem_matches_truth(target: str, bm: int, bn: int, warps: int, stages: int,
                                              truth_shared: int) -> None:
    config = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": 64, "NUM_SMS": 132, "num_warps": warps, "num_stages": stages}
    result = lint_paths([str(ROOT / "examples/persistent_matmul.py"), str(ROOT / "examples/kernel_utils.py")],
                        Settings(targets=(target,), cli_configs=(config,), arg_types=ARGS))
    kernel = next(k for f in result.files for k in f.kernels if k.jit.name == "persistent_matmul_kernel")
    estimate = next(e for e in kernel.estimates if e.config.origin == "cli")
    assert estimate.smem.total == truth_shared


@pytest.mark.parametrize("flatten, expected", [
    # fused nest: 3 × 16 KiB A buffers + the 16 KiB epilogue scratch (the truth above)
    (True, 65536),
    # not fused: the operand buffers are freed before the epilogue, whose 16 KiB scratch stands alone;
    # the peak is the loop's 3 × 16 KiB + the 8 KiB staged B = 57,344 (Triton 3.9, sm_90, the same kernel
    # with flatten=False: metadata.shared 57,344)
    (False, 57344),
])
def test_flatten_given_as_a_constexpr_is_evaluated_per_config(tmp_path, flatten: bool, expected: int) -> None:  # type: ignore[no-untyped-def]
    src = (ROOT / "examples/persistent_matmul.py").read_text()
    src = src.replace("flatten=True", "flatten=FLATTEN").replace("NUM_SMS: tl.constexpr,", "NUM_SMS: tl.constexpr, FLATTEN: tl.constexpr,")
    assert "flatten=FLATTEN" in src and "FLATTEN: tl.constexpr" in src
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "kernel_utils.py").write_text((ROOT / "examples/kernel_utils.py").read_text())
    path = tmp_path / "examples" / "persistent_flat.py"
    path.write_text(src)
    config = {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64, "NUM_SMS": 132, "FLATTEN": flatten, "num_warps": 8,
              "num_stages": 3}
    result = lint_paths([str(path), str(tmp_path / "examples" / "kernel_utils.py")],
                        Settings(targets=("h100",), cli_configs=(config,), arg_types=ARGS))
    kernel = next(k for f in result.files for k in f.kernels if k.jit.name == "persistent_matmul_kernel")
    estimate = next(e for e in kernel.estimates if e.config.origin == "cli")
    assert estimate.smem.total == expected
