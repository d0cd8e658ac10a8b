"""Small scratch buffers (reductions, layout conversions) whose size follows from how Triton lays out a tile,
first missed on public kernels (benchmarks/truth/public-triton-3.9.json) and checked here on small probes
compiled with Triton 3.9 (`metadata.shared`, the same on sm_80, sm_90 and sm_100 unless noted):

* a clamped index (`tl.minimum(offs, n - 1)`, `tl.maximum(offs - 3, 0)`, liger-kernel's neighborhood attention
  backward) has contiguity 1 (AxisInfo's min/max rule), so the tile is not vectorised: [64, 64] fp16 at
  4 warps is laid out sizePerThread [1, 1], threadsPerWarp [1, 32], warpsPerCTA [2, 2] and its row sum
  crosses 2 warps (256 B); unclamped, the rows stay in one warp and only the store conversion remains (128 B).
"""
from __future__ import annotations

import pytest

from kernlint.api import Settings, lint_paths

PROBES = '''
import triton
import triton.language as tl


@triton.jit
def clamp_rowsum(x_ptr, y_ptr, n_cols, stride_row, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.minimum(tl.arange(0, BN), n_cols - 1)
    x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :])
    tl.store(y_ptr + rows, tl.sum(x, axis=1))


@triton.jit
def plain_rowsum(x_ptr, y_ptr, n_cols, stride_row, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :])
    tl.store(y_ptr + rows, tl.sum(x, axis=1))


@triton.jit
def clampmax_rowsum(x_ptr, y_ptr, n_cols, stride_row, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.maximum(tl.arange(0, BN) - 3, 0)
    x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :])
    tl.store(y_ptr + rows, tl.sum(x, axis=1))
'''

ROWSUM = {"x_ptr": "*fp16", "y_ptr": "*fp32", "n_cols": "i32", "stride_row": "i32"}
ARGS = {"clamp_rowsum": ROWSUM, "plain_rowsum": ROWSUM, "clampmax_rowsum": ROWSUM}

# (kernel, config, Triton 3.9 metadata.shared on sm_80/90/100)
TRUTH = [
    # clamped: [2, 2] warps, 64 rows × 2 warp partials → 256 B of reduction scratch
    ("clamp_rowsum", {"BM": 64, "BN": 64, "num_warps": 4}, 256),
    ("clamp_rowsum", {"BM": 128, "BN": 128, "num_warps": 8}, 256),
    ("clampmax_rowsum", {"BM": 64, "BN": 64, "num_warps": 4}, 256),
    ("clampmax_rowsum", {"BM": 128, "BN": 128, "num_warps": 8}, 256),
    # unclamped: 8 per thread, rows inside one warp; 64 fp32 row sums converted to the store's layout
    ("plain_rowsum", {"BM": 64, "BN": 64, "num_warps": 4}, 128),
    ("plain_rowsum", {"BM": 128, "BN": 128, "num_warps": 8}, 256),
]


def _shared(tmp_path, name: str, config: dict, args: dict) -> dict:  # type: ignore[no-untyped-def]
    path = tmp_path / "probes.py"
    path.write_text(PROBES)
    result = lint_paths([str(path)], Settings(targets=("a100", "h100", "b200"),
                                              cli_configs=({**config, "num_stages": 1},), arg_types=args))
    [kernel] = [k for k in result.files[0].kernels if k.jit.name == name]
    return {e.target.key: e.smem.total for e in kernel.estimates if e.config.origin == "cli"}


@pytest.mark.parametrize("name,config,truth", TRUTH)
def test_scratch_against_compiles(tmp_path, name: str, config: dict,  # type: ignore[no-untyped-def]
                                  truth: int) -> None:
    assert _shared(tmp_path, name, config, ARGS[name]) == {"a100": truth, "h100": truth, "b200": truth}
