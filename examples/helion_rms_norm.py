"""Helion RMSNorm: a whole row in registers (persistent reduction) vs a looped reduction."""
from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(config=helion.Config(block_sizes=[1], reduction_loops=[None], num_warps=8))  # expect: KL501
def helion_rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    m, n = x.size()
    assert weight.size(0) == n
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].to(torch.float32)
        inv = torch.rsqrt(torch.mean(row * row, dim=-1, keepdim=True) + eps)
        out[tile_m, :] = (row * inv * weight[:].to(torch.float32)).to(out.dtype)
    return out


@helion.kernel(config=helion.Config(block_sizes=[2], reduction_loops=[2048], num_warps=4))
def helion_rms_norm_looped(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    m, n = x.size()
    assert weight.size(0) == n
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].to(torch.float32)
        inv = torch.rsqrt(torch.mean(row * row, dim=-1, keepdim=True) + eps)
        out[tile_m, :] = (row * inv * weight[:].to(torch.float32)).to(out.dtype)
    return out
