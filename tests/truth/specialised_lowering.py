"""Fixtures for tests/lowering/test_specialised_lowering.py (truth compiled with Triton 3.9, see the test)."""
import triton
import triton.language as tl


@triton.jit
def merged_bound_kernel(q_ptr, k_ptr, o_ptr, lens_ptr, stride, MAX_K: tl.constexpr, VARLEN: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    # the loop bound is a constexpr in one branch and a loaded length in the other
    if VARLEN:
        n = tl.load(lens_ptr)
    else:
        n = MAX_K
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    q = tl.load(q_ptr + offs_m[:, None] * stride + offs_d[None, :])
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    k_ptrs = k_ptr + offs_d[:, None] * stride + offs_n[None, :]
    for start in range(0, n, BLOCK_N):
        k = tl.load(k_ptrs)
        acc += tl.dot(q, k)
        k_ptrs += BLOCK_N
    tl.store(o_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :], acc)


@triton.jit
def two_dot_kernel(q_ptr, k_ptr, v_ptr, o_ptr, stride, N_CTX: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    q = tl.load(q_ptr + offs_m[:, None] * stride + offs_d[None, :])
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    k_ptrs = k_ptr + offs_d[:, None] + offs_n[None, :] * stride
    v_ptrs = v_ptr + offs_n[:, None] * stride + offs_d[None, :]
    for start in range(0, N_CTX, BLOCK_N):
        k = tl.load(k_ptrs)
        s = tl.dot(q, k)
        p = tl.exp(s)
        v = tl.load(v_ptrs)
        acc += tl.dot(p.to(tl.float16), v)
        k_ptrs += BLOCK_N * stride
        v_ptrs += BLOCK_N * stride
    tl.store(o_ptr + offs_m[:, None] * BLOCK_D + offs_d[None, :], acc)


@triton.jit
def scaled_a_kernel(x_ptr, s_ptr, b_ptr, o_ptr, K, stride_x, stride_s, stride_b, HAS_SCALE: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_x + offs_k[None, :]
    s_ptrs = s_ptr + offs_k * stride_s
    b_ptrs = b_ptr + offs_k[:, None] * stride_b + offs_n[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs).to(tl.float32)
        s = tl.load(s_ptrs).to(tl.float32)
        if HAS_SCALE:
            a = (x * tl.exp(s)[None, :]).to(tl.float16)
        else:
            a = x.to(tl.float16)
        b = tl.load(b_ptrs)
        acc += tl.dot(a, b)
        x_ptrs += BLOCK_K
        s_ptrs += BLOCK_K * stride_s
        b_ptrs += BLOCK_K * stride_b
    tl.store(o_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :], acc)
