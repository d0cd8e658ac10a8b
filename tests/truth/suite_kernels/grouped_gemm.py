"""Grouped GEMM over a list of problems (pointer arrays, persistent tile loop) and a batched matmul on
tensor descriptors (TMA on sm_90+)."""
import triton
import triton.language as tl


@triton.jit
def grouped_matmul_kernel(
    group_a_ptrs, group_b_ptrs, group_c_ptrs,
    group_gemm_sizes, g_lds,
    group_size,
    NUM_SM: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_size):
        gm = tl.load(group_gemm_sizes + g * 3)
        gn = tl.load(group_gemm_sizes + g * 3 + 1)
        gk = tl.load(group_gemm_sizes + g * 3 + 2)
        num_m_tiles = tl.cdiv(gm, BLOCK_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_N)
        num_tiles = num_m_tiles * num_n_tiles
        while tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles:
            lda = tl.load(g_lds + g * 3)
            ldb = tl.load(g_lds + g * 3 + 1)
            ldc = tl.load(g_lds + g * 3 + 2)
            a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(group_b_ptrs + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float16))
            tile_idx_in_gemm = tile_idx - last_problem_end
            tile_m_idx = tile_idx_in_gemm // num_n_tiles
            tile_n_idx = tile_idx_in_gemm % num_n_tiles
            offs_am = tile_m_idx * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_bn = tile_n_idx * BLOCK_N + tl.arange(0, BLOCK_N)
            offs_k = tl.arange(0, BLOCK_K)
            a_ptrs = a_ptr + offs_am[:, None] * lda + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_bn[None, :]
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(gk, BLOCK_K)):
                tl.multiple_of(a_ptrs, [16, 16])
                tl.multiple_of(b_ptrs, [16, 16])
                a = tl.load(a_ptrs)
                b = tl.load(b_ptrs)
                acc += tl.dot(a, b)
                a_ptrs += BLOCK_K
                b_ptrs += BLOCK_K * ldb
            c = acc.to(tl.float16)
            offs_cm = tile_m_idx * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_cn = tile_n_idx * BLOCK_N + tl.arange(0, BLOCK_N)
            c_ptrs = c_ptr + ldc * offs_cm[:, None] + offs_cn[None, :]
            tl.store(c_ptrs, c)
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


@triton.jit
def bmm_descriptor_kernel(
    a_ptr, b_ptr, c_ptr,
    B, M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """C[b] = A[b] @ B[b] for contiguous [B, M, K] x [B, K, N] -> [B, M, N] bf16, on device-side tensor
    descriptors (the Triton >= 3.4 replacement of make_block_ptr)."""
    pid = tl.program_id(0)
    pid_b = tl.program_id(1)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[B, M, K], strides=[M * K, K, 1],
                                       block_shape=[1, BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[B, K, N], strides=[K * N, N, 1],
                                       block_shape=[1, BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[B, M, N], strides=[M * N, N, 1],
                                       block_shape=[1, BLOCK_M, BLOCK_N])
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_b, off_m, k * BLOCK_K]).reshape(BLOCK_M, BLOCK_K)
        b = b_desc.load([pid_b, k * BLOCK_K, off_n]).reshape(BLOCK_K, BLOCK_N)
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_b, off_m, off_n], acc.to(tl.bfloat16).reshape(1, BLOCK_M, BLOCK_N))
