"""Helion attention forward (online softmax over key tiles), after pytorch/helion examples/attention.py."""
from __future__ import annotations

import math

import helion
import helion.language as hl
import torch


@helion.kernel(config=helion.Config(block_sizes=[1, 128, 64], num_warps=8, num_stages=3))
def helion_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    b, m, d = q.size()
    n = k.size(1)
    assert n == v.size(1)
    head_dim = hl.specialize(d)
    assert head_dim == k.size(-1) == v.size(-1)
    out = torch.empty_like(q)
    qk_scale = 1.0 / math.sqrt(head_dim) * 1.44269504
    for tile_b, tile_m in hl.tile([b, m]):
        m_i = hl.full([tile_b, tile_m], float("-inf"), dtype=torch.float32)
        l_i = hl.zeros([tile_b, tile_m], dtype=torch.float32)
        acc = hl.zeros([tile_b, tile_m, head_dim], dtype=torch.float32)
        q_tile = q[tile_b, tile_m, :]
        for tile_n in hl.tile(n):
            k_tile = k[tile_b, tile_n, :]
            qk = torch.bmm(q_tile, k_tile.transpose(1, 2)).to(torch.float32)
            m_ij = torch.maximum(m_i, torch.amax(qk, -1) * qk_scale)
            p = torch.exp2(qk * qk_scale - m_ij[:, :, None])
            alpha = torch.exp2(m_i - m_ij)
            l_i = l_i * alpha + torch.sum(p, -1)
            acc = acc * alpha[:, :, None]
            acc = torch.baddbmm(acc, p.to(v.dtype), v[tile_b, tile_n, :])
            m_i = m_ij
        out[tile_b, tile_m, :] = (acc / l_i[:, :, None]).to(out.dtype)
    return out
