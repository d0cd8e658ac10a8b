"""Fused attention forward (flash-attention style): online softmax, two tl.dot per KV block."""
import torch
import triton
import triton.language as tl

RCP_LN2 = tl.constexpr(1.4426950408889634)  # 1 / ln(2): exp(x) == exp2(x * RCP_LN2)

ATTN_CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=2),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=4, num_stages=2),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 32}, num_warps=4, num_stages=3),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=3),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_warps=4, num_stages=4),
]


@triton.jit
def _attn_inner(
    acc, l_i, m_i, q,
    k_ptrs, v_ptrs,
    stride_kn, stride_vn,
    start_m, qk_scale, N_CTX,
    offs_m, offs_n,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
):
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
    else:
        hi = N_CTX
    for start_n in range(0, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        kv_mask = (start_n + offs_n)[:, None] < N_CTX
        k = tl.load(k_ptrs, mask=kv_mask, other=0.0)
        qk = tl.dot(q, tl.trans(k))
        valid = (start_n + offs_n)[None, :] < N_CTX
        if CAUSAL:
            valid = valid & (offs_m[:, None] >= (start_n + offs_n[None, :]))
        qk = tl.where(valid, qk * qk_scale, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs, mask=kv_mask, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
        k_ptrs += BLOCK_N * stride_kn
        v_ptrs += BLOCK_N * stride_vn
    return acc, l_i, m_i


@triton.autotune(configs=ATTN_CONFIGS, key=["N_CTX", "HEAD_DIM", "CAUSAL"])
@triton.jit
def attn_fwd_kernel(
    Q, K, V, sm_scale, M, Out,
    stride_qz, stride_qh, stride_qm, stride_qk,
    stride_kz, stride_kh, stride_kn, stride_kk,
    stride_vz, stride_vh, stride_vn, stride_vk,
    stride_oz, stride_oh, stride_om, stride_ok,
    H, N_CTX,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr,
):
    tl.static_assert(BLOCK_M % BLOCK_N == 0)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = (off_hz // H).to(tl.int64)
    off_h = (off_hz % H).to(tl.int64)
    q_offset = off_z * stride_qz + off_h * stride_qh
    k_offset = off_z * stride_kz + off_h * stride_kh
    v_offset = off_z * stride_vz + off_h * stride_vh
    o_offset = off_z * stride_oz + off_h * stride_oh

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    rows = offs_m.to(tl.int64)
    q_ptrs = Q + q_offset + rows[:, None] * stride_qm + offs_d[None, :] * stride_qk
    k_ptrs = K + k_offset + offs_n[:, None] * stride_kn + offs_d[None, :] * stride_kk
    v_ptrs = V + v_offset + offs_n[:, None] * stride_vn + offs_d[None, :] * stride_vk

    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * RCP_LN2
    q = tl.load(q_ptrs, mask=offs_m[:, None] < N_CTX, other=0.0)

    acc, l_i, m_i = _attn_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn,
                                start_m, qk_scale, N_CTX, offs_m, offs_n,
                                BLOCK_M, BLOCK_N, CAUSAL)

    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    m_ptrs = M + off_hz.to(tl.int64) * N_CTX + offs_m
    tl.store(m_ptrs, m_i, mask=offs_m < N_CTX)
    o_ptrs = Out + o_offset + rows[:, None] * stride_om + offs_d[None, :] * stride_ok
    tl.store(o_ptrs, acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < N_CTX)


def attention_forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, sm_scale: float):
    # q, k, v: [batch, heads, seq, head_dim], fp16 or bf16
    HEAD_DIM = q.shape[-1]
    assert HEAD_DIM in {16, 32, 64, 128} and k.shape[-1] == HEAD_DIM and v.shape[-1] == HEAD_DIM
    o = torch.empty_like(q)
    Z, H, N_CTX = q.shape[0], q.shape[1], q.shape[2]
    lse = torch.empty((Z, H, N_CTX), device=q.device, dtype=torch.float32)
    grid = lambda META: (triton.cdiv(N_CTX, META["BLOCK_M"]), Z * H, 1)
    attn_fwd_kernel[grid](
        q, k, v, sm_scale, lse, o,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        o.stride(0), o.stride(1), o.stride(2), o.stride(3),
        H, N_CTX,
        HEAD_DIM=HEAD_DIM,
        CAUSAL=causal,
    )
    return o, lse
