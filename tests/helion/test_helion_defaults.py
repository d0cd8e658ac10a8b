"""Helion kernels written like Helion's examples (no asserts tying sizes together): their reduction dimensions,
and Helion's default config (`autotune_effort="none"`) as kernlint models it, against Helion itself where
helion and torch import (in a subprocess: the lint path never imports them)."""
from __future__ import annotations

import os
import sys

import pytest

from kernlint.recommend.helion import load_kernel

# an interpreter with helion and torch: this one unless KERNLINT_HELION_PYTHON names another
HELION_PYTHON = os.environ.get("KERNLINT_HELION_PYTHON", sys.executable)

KERNELS = '''import helion
import helion.language as hl
import torch


@helion.kernel(autotune_effort="none")
def matmul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    k2, n = y.size()
    out = torch.empty([m, n], dtype=torch.promote_types(x.dtype, y.dtype), device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, x[tile_m, tile_k], y[tile_k, tile_n])
        out[tile_m, tile_n] = acc
    return out


@helion.kernel(autotune_effort="none")
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    inv_rms = torch.empty([m], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        x_tile = x[tile_m, :].to(torch.float32)
        mean_x_squared = torch.mean(x_tile * x_tile, dim=-1)
        inv_rms_tile = torch.rsqrt(mean_x_squared + eps)
        normalized = x_tile * inv_rms_tile[:, None]
        out[tile_m, :] = (normalized * weight[:].to(torch.float32)).to(out.dtype)
        inv_rms[tile_m] = inv_rms_tile.to(out.dtype)
    return out


@helion.kernel(autotune_effort="none")
def softmax(x: torch.Tensor) -> torch.Tensor:
    n, _m = x.size()
    out = torch.empty_like(x)
    for tile_n in hl.tile(n):
        out[tile_n, :] = torch.nn.functional.softmax(x[tile_n, :], dim=1)
    return out


@helion.kernel(autotune_effort="none")
def softmax_sizes_read_late(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_n in hl.tile(x.size(0)):
        values = x[tile_n, :]
        amax = torch.amax(values, dim=1, keepdim=True)
        exp = torch.exp(values - amax)
        out[tile_n, :] = exp / torch.sum(exp, dim=1, keepdim=True)
    return out


@helion.kernel(autotune_effort="none")
def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile([m, n]):
        out[tile_m, tile_n] = x[tile_m, tile_n] + y[tile_m, tile_n]
    return out


@helion.kernel(autotune_effort="none")
def add_1d(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    (n,) = x.size()
    out = torch.empty_like(x)
    for tile in hl.tile(n):
        out[tile] = x[tile] + y[tile]
    return out
'''


@pytest.fixture(scope="module")
def kernels_path(tmp_path_factory) -> str:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("helion_defaults") / "helion_idioms.py"
    path.write_text(KERNELS)
    return str(path)


def test_sizes_of_outputs_and_weights_join_the_one_reduction_dimension(kernels_path) -> None:  # type: ignore[no-untyped-def]
    """`weight[:]` beside `x[tile, :]`, and `empty_like(x)` allocated before `x.size(1)` is read, are one
    reduction dimension, as Helion makes them (one `reduction_loops` entry): before, rms_norm had two (`n` and
    `weight.size(0)`) and softmax_sizes_read_late two (`x.size(1)` and the output's size)."""
    rms = load_kernel(kernels_path, "rms_norm")
    assert [r.extent_text for r in rms.ir.rdims] == ["n"]
    late = load_kernel(kernels_path, "softmax_sizes_read_late")
    assert [r.extent_text for r in late.ir.rdims] == ["x.size(1)"]
    soft = load_kernel(kernels_path, "softmax")
    assert [r.extent_text for r in soft.ir.rdims] == ["_m"]
