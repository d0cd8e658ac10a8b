"""A dot product scaled before it is accumulated is a whole tile (kernlint/analysis/register_streams.py,
scaled_products).

Expected register counts are ptxas truth from probe compiles (Triton 3.9.0 with the ptxas of its bundle,
2026-11-30, sm_90, num_stages 3) of the kernel below, which is in no recorded truth file. `acc += tl.dot(a, b)`
is folded into the MMA's accumulator by Triton; `acc += tl.dot(a, b) * s[:, None]` (block-scaled fp8 GEMMs)
materialises the fresh product next to the accumulator: ptxas needs one more product tile of registers.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from kernlint.pipeline.api import Settings, lint_paths

KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def mm_scaled(a_ptr, b_ptr, s_ptr, c_ptr, K, SCALED: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
              BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + om[:, None] * K + (k + ok)[None, :])
        b = tl.load(b_ptr + (k + ok)[:, None] * BN + on[None, :])
        if SCALED:
            s = tl.load(s_ptr + k // BK + om)
            acc += tl.dot(a, b) * s[:, None]
        else:
            acc += tl.dot(a, b)
    tl.store(c_ptr + om[:, None] * BN + on[None, :], acc.to(tl.float16))
'''
ARGS = {"a_ptr": "*fp16", "b_ptr": "*fp16", "s_ptr": "*fp32", "c_ptr": "*fp16", "K": "i32"}

# (BM, BN, BK, num_warps, ptxas scaled, ptxas plain) on sm_90
PROBES = [(64, 64, 64, 4, 90, 62), (128, 128, 64, 8, 164, 100), (128, 64, 32, 4, 163, 96), (64, 128, 64, 4, 159, 96)]


def _estimate(path: Path, cfg: dict) -> int:
    res = lint_paths([str(path)], Settings(targets=("h100",), cli_configs=(cfg,), arg_types=ARGS))
    return next(e.registers.allocated for f in res.files for k in f.kernels for e in k.estimates
                if e.config.origin == "cli")


@pytest.mark.parametrize("bm,bn,bk,warps,scaled_ptxas,plain_ptxas", PROBES)
def test_scaled_product_is_held_next_to_the_accumulator(tmp_path: Path, bm: int, bn: int, bk: int, warps: int,
                                                        scaled_ptxas: int, plain_ptxas: int) -> None:
    path = tmp_path / "mm_scaled.py"
    path.write_text(KERNEL)
    base = {"BM": bm, "BN": bn, "BK": bk, "num_warps": warps, "num_stages": 3}
    scaled = _estimate(path, {**base, "SCALED": True})
    plain = _estimate(path, {**base, "SCALED": False})
    product_words = bm * bn // (32 * warps)            # the fresh fp32 product, one word per element per thread
    assert scaled_ptxas - plain_ptxas >= 0.8 * product_words   # what ptxas shows
    assert scaled - plain >= 0.8 * product_words               # and kernlint now counts
    assert abs(scaled - scaled_ptxas) / scaled_ptxas <= 0.1, (base, scaled, scaled_ptxas)
