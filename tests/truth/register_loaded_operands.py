"""Fixtures for tests/analysis/test_register_loaded_operands.py (truth compiled with Triton 3.9, see the test)."""
import triton
import triton.language as tl


@triton.jit
def odd_rows_kernel(a_ptr, b_ptr, c_ptr, K, stride_b, ROW: tl.constexpr, BOTH: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # rows ROW elements apart: with ROW odd every row starts at an odd element (divisibility 1)
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * ROW + offs_k[None, :]
    if BOTH:
        b_ptrs = b_ptr + offs_k[:, None] * ROW + offs_n[None, :]
        b_step = BLOCK_K * ROW
    else:
        b_ptrs = b_ptr + offs_k[:, None] * stride_b + offs_n[None, :]
        b_step = BLOCK_K * stride_b
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K
        b_ptrs += b_step
    tl.store(c_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :], acc)


@triton.jit
def clamped_b_kernel(a_ptr, b_ptr, c_ptr, K, N, stride_a, stride_b,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # B's columns clamped with tl.where: contiguity 1, one element per load instruction (B's addresses are
    # computed in the loop, not carried: kernlint takes a carried pointer's contiguity as full)
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_bn = tl.where(offs_n < N, offs_n, 0)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_a + offs_k[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptr + (k + offs_k)[:, None] * stride_b + offs_bn[None, :])
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K
    tl.store(c_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :], acc)


@triton.jit
def overlapping_k_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N_CTX, stride, SKN: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    # attention whose Kᵀ tile is read at k_ptr + n * SKN + d: with SKN = 1 both dims are contiguous but
    # rows start at every element, so K is a register load; V is pipelined
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    q = tl.load(q_ptr + offs_m[:, None] * stride + offs_d[None, :])
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    for start in range(0, N_CTX, BLOCK_N):
        cur = start + offs_n
        k = tl.load(k_ptr + cur[None, :] * SKN + offs_d[:, None])
        s = tl.dot(q, k)
        p = tl.exp(s)
        v = tl.load(v_ptr + cur[:, None] * stride + offs_d[None, :])
        acc += tl.dot(p.to(tl.float16), v)
    tl.store(o_ptr + offs_m[:, None] * BLOCK_D + offs_d[None, :], acc)


@triton.jit
def hinted_base_kernel(table, b_ptr, c_ptr, K, stride_a, stride_b, HINT: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # A's base address is loaded (divisibility 1); `tl.multiple_of` on the carried pointer in the loop
    # restores 16-element alignment (grouped GEMM)
    a_ptr = tl.load(table).to(tl.pointer_type(tl.float16))
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_a + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_b + offs_n[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        if HINT:
            tl.multiple_of(a_ptrs, [16, 16])
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_b
    tl.store(c_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :], acc)
