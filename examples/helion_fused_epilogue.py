"""Helion matmul with a fused epilogue: bias add, GELU and a residual, written back in fp16."""
from __future__ import annotations

import helion
import helion.language as hl
import torch

CONFIGS = [
    helion.Config(block_sizes=[64, 128, 64], num_warps=4, num_stages=4),
    helion.Config(block_sizes=[128, 128, 64], num_warps=8, num_stages=3),
]


@helion.kernel(configs=CONFIGS, static_shapes=True)
def helion_matmul_bias_gelu(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor,
                            residual: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = w.size()
    out = torch.empty([m, n], dtype=torch.float16, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, x[tile_m, tile_k], w[tile_k, tile_n])
        acc = acc + bias[tile_n].to(torch.float32)
        acc = torch.nn.functional.gelu(acc)
        out[tile_m, tile_n] = (acc + residual[tile_m, tile_n].to(torch.float32)).to(torch.float16)
    return out
