"""Probe kernels for registers of one-trip loops and of `if`s the constexprs decide (tests/analysis/test_register_one_trip.py).

attn_loop_kernel: attention whose KV loop runs N_CTX // BLOCK_N times; attn_guarded_kernel: the same loop under
`if n_full_blocks > 0:` computed from constexprs through an `if IS_VARLEN` (flash-attn AMD attn_fwd's shape).
Compiled with Triton 3.9.0 (ptxas 12.9.86 / 13.4.59) by `kernlint calibrate`; the numbers are in the test.
"""
import triton
import triton.language as tl


@triton.jit
def attn_loop_kernel(Q, K, V, O, stride_m, stride_n, N_CTX: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr):
    """Attention whose KV loop has N_CTX // BLOCK_N trips (one when N_CTX == BLOCK_N)."""
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_m[:, None] * stride_m + offs_d[None, :])
    k_ptrs = K + offs_d[:, None] + offs_n[None, :] * stride_n
    v_ptrs = V + offs_n[:, None] * stride_n + offs_d[None, :]
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    for start in range(0, N_CTX, BLOCK_N):
        k = tl.load(k_ptrs)
        s = tl.dot(q, k)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs)
        acc += tl.dot(p.to(tl.float16), v)
        m_i = m_new
        k_ptrs += BLOCK_N * stride_n
        v_ptrs += BLOCK_N * stride_n
    acc = acc / l_i[:, None]
    tl.store(O + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(tl.float16))


@triton.jit
def attn_guarded_kernel(Q, K, V, O, L, stride_m, stride_n, N_CTX: tl.constexpr, IS_VARLEN: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr):
    """The same loop under an `if` that the constexprs decide (flash-attn AMD's `if n_full_blocks > 0:`)."""
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_m[:, None] * stride_m + offs_d[None, :])
    k_ptrs = K + offs_d[:, None] + offs_n[None, :] * stride_n
    v_ptrs = V + offs_n[:, None] * stride_n + offs_d[None, :]
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    if IS_VARLEN:
        seqlen = tl.load(L + tl.program_id(1))
    else:
        seqlen = N_CTX
    n_blocks = tl.cdiv(seqlen, BLOCK_N)
    extra = 0
    if seqlen < BLOCK_N:
        extra = BLOCK_N - seqlen
    elif seqlen % BLOCK_N:
        extra = seqlen % BLOCK_N
    if n_blocks - min(extra != 0, n_blocks) > 0:
        for start in range(0, n_blocks * BLOCK_N, BLOCK_N):
            k = tl.load(k_ptrs)
            s = tl.dot(q, k)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp(s - m_new[:, None])
            alpha = tl.exp(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None]
            v = tl.load(v_ptrs)
            acc += tl.dot(p.to(tl.float16), v)
            m_i = m_new
            k_ptrs += BLOCK_N * stride_n
            v_ptrs += BLOCK_N * stride_n
    acc = acc / l_i[:, None]
    tl.store(O + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(tl.float16))
