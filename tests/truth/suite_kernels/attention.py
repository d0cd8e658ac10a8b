"""Attention: causal forward split into an off-diagonal and a diagonal loop, and the backward pass
(dK/dV per KV block, dQ per Q block) in the flash-attention-2 style. Q/K/V/dO share one stride layout."""
import triton
import triton.language as tl

LN2 = tl.constexpr(0.6931471824645996)
RCP_LN2 = tl.constexpr(1.4426950408889634)


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, K, V, stride_tok, stride_d, start_m, qk_scale,
                    offs_m, offs_n, offs_d,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    if STAGE == 1:  # blocks strictly left of the diagonal: no mask
        lo, hi = 0, start_m * BLOCK_M
    else:  # the diagonal block(s)
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    kT_ptrs = K + offs_d[:, None] * stride_d + (lo + offs_n)[None, :] * stride_tok
    v_ptrs = V + (lo + offs_n)[:, None] * stride_tok + offs_d[None, :] * stride_d
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        kT = tl.load(kT_ptrs)
        qk = tl.dot(q, kT)
        if STAGE == 2:
            causal = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(causal, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs)
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
        kT_ptrs += BLOCK_N * stride_tok
        v_ptrs += BLOCK_N * stride_tok
    return acc, l_i, m_i


@triton.jit
def attn_fwd_causal_kernel(
    Q, K, V, sm_scale, M, Out,
    stride_z, stride_h, stride_tok, stride_d,
    H, N_CTX,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    qkv_offset = off_z.to(tl.int64) * stride_z + off_h.to(tl.int64) * stride_h
    Q += qkv_offset
    K += qkv_offset
    V += qkv_offset
    Out += qkv_offset
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * RCP_LN2
    q = tl.load(Q + offs_m[:, None] * stride_tok + offs_d[None, :] * stride_d)
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K, V, stride_tok, stride_d, start_m, qk_scale,
                                    offs_m, offs_n, offs_d, BLOCK_M, BLOCK_N, 1)
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K, V, stride_tok, stride_d, start_m, qk_scale,
                                    offs_m, offs_n, offs_d, BLOCK_M, BLOCK_N, 2)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    tl.store(Out + offs_m[:, None] * stride_tok + offs_d[None, :] * stride_d, acc.to(Out.type.element_ty))


@triton.jit
def attn_bwd_dkdv_kernel(
    Q, K, V, DO, DK, DV, M, D, sm_scale,
    stride_z, stride_h, stride_tok, stride_d,
    H, N_CTX,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
):
    """One KV block per program; walks the Q blocks. M holds log2-sum-exp per row (from the forward),
    D = rowsum(O * dO) (from the preprocess kernel). Q is assumed pre-scaled by sm_scale * log2(e)."""
    pid = tl.program_id(0)
    bhid = tl.program_id(1)
    off_chz = (bhid * N_CTX).to(tl.int64)
    adj = (stride_h * (bhid % H) + stride_z * (bhid // H)).to(tl.int64)
    Q += adj
    K += adj
    V += adj
    DO += adj
    DK += adj
    DV += adj
    M += off_chz
    D += off_chz
    start_n = pid * BLOCK_N
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    k = tl.load(K + offs_n[:, None] * stride_tok + offs_d[None, :] * stride_d)
    v = tl.load(V + offs_n[:, None] * stride_tok + offs_d[None, :] * stride_d)
    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    if CAUSAL:
        start_m = start_n
    else:
        start_m = 0
    offs_m = start_m + tl.arange(0, BLOCK_M)
    qT_ptrs = Q + offs_m[None, :] * stride_tok + offs_d[:, None] * stride_d
    do_ptrs = DO + offs_m[:, None] * stride_tok + offs_d[None, :] * stride_d
    curr_m = start_m
    num_steps = (N_CTX - start_m) // BLOCK_M
    for _ in range(num_steps):
        qT = tl.load(qT_ptrs)
        offs_m = curr_m + tl.arange(0, BLOCK_M)
        m = tl.load(M + offs_m)
        qkT = tl.dot(k, qT)
        pT = tl.math.exp2(qkT - m[None, :])
        if CAUSAL:
            pT = tl.where(offs_m[None, :] >= offs_n[:, None], pT, 0.0)
        do = tl.load(do_ptrs)
        dv += tl.dot(pT.to(tl.float16), do)
        Di = tl.load(D + offs_m)
        dpT = tl.dot(v, tl.trans(do)).to(tl.float32)
        dsT = pT * (dpT - Di[None, :])
        dk += tl.dot(dsT.to(tl.float16), tl.trans(qT))
        curr_m += BLOCK_M
        qT_ptrs += BLOCK_M * stride_tok
        do_ptrs += BLOCK_M * stride_tok
    dk *= sm_scale
    tl.store(DV + offs_n[:, None] * stride_tok + offs_d[None, :] * stride_d, dv.to(tl.float16))
    tl.store(DK + offs_n[:, None] * stride_tok + offs_d[None, :] * stride_d, dk.to(tl.float16))


@triton.jit
def attn_bwd_dq_kernel(
    Q, K, V, DO, DQ, M, D,
    stride_z, stride_h, stride_tok, stride_d,
    H, N_CTX,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
):
    """One Q block per program; walks the KV blocks (three dots per step)."""
    pid = tl.program_id(0)
    bhid = tl.program_id(1)
    off_chz = (bhid * N_CTX).to(tl.int64)
    adj = (stride_h * (bhid % H) + stride_z * (bhid // H)).to(tl.int64)
    Q += adj
    K += adj
    V += adj
    DO += adj
    DQ += adj
    M += off_chz
    D += off_chz
    start_m = pid * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + offs_m[:, None] * stride_tok + offs_d[None, :] * stride_d)
    do = tl.load(DO + offs_m[:, None] * stride_tok + offs_d[None, :] * stride_d)
    m = tl.load(M + offs_m)[:, None]
    Di = tl.load(D + offs_m)
    dq = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    if CAUSAL:
        end_n = start_m + BLOCK_M
    else:
        end_n = N_CTX
    offs_n0 = tl.arange(0, BLOCK_N)
    kT_ptrs = K + offs_n0[None, :] * stride_tok + offs_d[:, None] * stride_d
    vT_ptrs = V + offs_n0[None, :] * stride_tok + offs_d[:, None] * stride_d
    for start_n in range(0, end_n, BLOCK_N):
        kT = tl.load(kT_ptrs)
        vT = tl.load(vT_ptrs)
        qk = tl.dot(q, kT)
        p = tl.math.exp2(qk - m)
        if CAUSAL:
            offs_n = start_n + offs_n0
            p = tl.where(offs_m[:, None] >= offs_n[None, :], p, 0.0)
        dp = tl.dot(do, vT).to(tl.float32)
        ds = p * (dp - Di[:, None])
        dq += tl.dot(ds.to(tl.float16), tl.trans(kT))
        kT_ptrs += BLOCK_N * stride_tok
        vT_ptrs += BLOCK_N * stride_tok
    dq *= LN2
    tl.store(DQ + offs_m[:, None] * stride_tok + offs_d[None, :] * stride_d, dq.to(tl.float16))
