"""Rotary position embedding (NeoX layout: rotate the two halves of each head), applied in place."""
import torch
import triton
import triton.language as tl


@triton.jit
def rope_kernel(
    q_ptr, k_ptr, cos_ptr, sin_ptr, pos_ptr,
    stride_qt, stride_qh, stride_kt, stride_kh, stride_cos,
    N_Q_HEADS: tl.constexpr, N_KV_HEADS: tl.constexpr,
    HEAD_DIM: tl.constexpr, BLOCK_H: tl.constexpr,
):
    tok = tl.program_id(0).to(tl.int64)
    HALF: tl.constexpr = HEAD_DIM // 2
    offs_d = tl.arange(0, HALF)
    pos = tl.load(pos_ptr + tok).to(tl.int64)
    cos = tl.load(cos_ptr + pos * stride_cos + offs_d).to(tl.float32)[None, :]
    sin = tl.load(sin_ptr + pos * stride_cos + offs_d).to(tl.float32)[None, :]
    offs_h = tl.arange(0, BLOCK_H)

    for h0 in tl.static_range(0, N_Q_HEADS, BLOCK_H):
        heads = h0 + offs_h
        hmask = (heads < N_Q_HEADS)[:, None]
        first = q_ptr + tok * stride_qt + heads[:, None] * stride_qh + offs_d[None, :]
        x1 = tl.load(first, mask=hmask, other=0.0).to(tl.float32)
        x2 = tl.load(first + HALF, mask=hmask, other=0.0).to(tl.float32)
        tl.store(first, (x1 * cos - x2 * sin).to(q_ptr.dtype.element_ty), mask=hmask)
        tl.store(first + HALF, (x2 * cos + x1 * sin).to(q_ptr.dtype.element_ty), mask=hmask)

    for h0 in tl.static_range(0, N_KV_HEADS, BLOCK_H):
        heads = h0 + offs_h
        hmask = (heads < N_KV_HEADS)[:, None]
        first = k_ptr + tok * stride_kt + heads[:, None] * stride_kh + offs_d[None, :]
        x1 = tl.load(first, mask=hmask, other=0.0).to(tl.float32)
        x2 = tl.load(first + HALF, mask=hmask, other=0.0).to(tl.float32)
        tl.store(first, (x1 * cos - x2 * sin).to(k_ptr.dtype.element_ty), mask=hmask)
        tl.store(first + HALF, (x2 * cos + x1 * sin).to(k_ptr.dtype.element_ty), mask=hmask)


@triton.jit
def rope_partial_kernel(x_ptr, cos_ptr, sin_ptr, stride_xt, stride_xh, stride_cos, n_heads):
    """Partial rotary embedding for a model with rotary_dim = 96 (the first 96 of each head's dims)."""
    pid = tl.program_id(0)
    tok = (pid // n_heads).to(tl.int64)
    head = (pid % n_heads).to(tl.int64)
    offs_d = tl.arange(0, 48)  # expect: KL301
    cos = tl.load(cos_ptr + tok * stride_cos + offs_d).to(tl.float32)
    sin = tl.load(sin_ptr + tok * stride_cos + offs_d).to(tl.float32)
    first = x_ptr + tok * stride_xt + head * stride_xh + offs_d
    x1 = tl.load(first).to(tl.float32)
    x2 = tl.load(first + 48).to(tl.float32)
    tl.store(first, (x1 * cos - x2 * sin).to(x_ptr.dtype.element_ty))
    tl.store(first + 48, (x2 * cos + x1 * sin).to(x_ptr.dtype.element_ty))


def apply_rope(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, positions: torch.Tensor):
    # q: [tokens, n_q_heads, head_dim], k: [tokens, n_kv_heads, head_dim], cos/sin: [max_pos, head_dim // 2]
    n_tokens, n_q_heads, head_dim = q.shape
    n_kv_heads = k.shape[1]
    assert head_dim & (head_dim - 1) == 0 and q.stride(2) == 1 and k.stride(2) == 1
    rope_kernel[(n_tokens,)](
        q, k, cos, sin, positions,
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), cos.stride(0),
        N_Q_HEADS=n_q_heads, N_KV_HEADS=n_kv_heads, HEAD_DIM=head_dim, BLOCK_H=8,
        num_warps=4,
    )
    return q, k


def apply_partial_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
    # x: [tokens, heads, head_dim] with rotary_dim = 96; cos/sin: [tokens, 48]
    n_tokens, n_heads, _ = x.shape
    rope_partial_kernel[(n_tokens * n_heads,)](x, cos, sin, x.stride(0), x.stride(1), cos.stride(0), n_heads)
    return x
