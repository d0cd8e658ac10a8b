"""Batched bf16 matmul C[b] = A[b] @ B[b]: a 3D launch grid (tile_m, tile_n, batch)."""
import torch
import triton
import triton.language as tl

BMM_CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=4, num_stages=3),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64}, num_warps=4, num_stages=3),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64}, num_warps=4, num_stages=4),
    # a "tiny K" config someone added for skinny batched products; tl.dot needs K >= 16
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 8}, num_warps=4, num_stages=3),  # expect: KL302
]


@triton.jit
def _bmm_program(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bk, stride_bn,
    stride_cb, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_b = tl.program_id(2).to(tl.int64)

    offs_m = ((pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M).to(tl.int64)
    offs_n = ((pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N).to(tl.int64)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + pid_b * stride_ab + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + pid_b * stride_bb + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            k_remaining = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=offs_k[None, :] < k_remaining, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < k_remaining, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    offs_cm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + pid_b * stride_cb + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, acc.to(tl.bfloat16), mask=mask)


@triton.autotune(configs=BMM_CONFIGS, key=["M", "N", "K"])
@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def bmm_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bk, stride_bn,
    stride_cb, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr,
):
    _bmm_program(a_ptr, b_ptr, c_ptr, M, N, K,
                 stride_ab, stride_am, stride_ak, stride_bb, stride_bk, stride_bn,
                 stride_cb, stride_cm, stride_cn,
                 BLOCK_M, BLOCK_N, BLOCK_K, EVEN_K)


@triton.jit
def bmm_fixed_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bk, stride_bn,
    stride_cb, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr,
):
    """Same program without autotuning: used for very large batches, where tuning time hurts."""
    _bmm_program(a_ptr, b_ptr, c_ptr, M, N, K,
                 stride_ab, stride_am, stride_ak, stride_bb, stride_bk, stride_bn,
                 stride_cb, stride_cm, stride_cn,
                 BLOCK_M, BLOCK_N, BLOCK_K, EVEN_K)


def bmm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.ndim == 3 and b.ndim == 3 and a.shape[0] == b.shape[0] and a.shape[2] == b.shape[1]
    batch, M, K = a.shape
    _, _, N = b.shape
    c = torch.empty((batch, M, N), device=a.device, dtype=torch.bfloat16)
    if M >= 4096 and N >= 4096:
        # large path: big tiles and a deep pipeline (4 x (256*64 + 64*256) x 2 B = 262,144 B of smem)
        grid = (triton.cdiv(M, 256), triton.cdiv(N, 256), batch)
        bmm_fixed_kernel[grid](  # expect: KL101
            a, b, c, M, N, K,
            a.stride(0), a.stride(1), a.stride(2),
            b.stride(0), b.stride(1), b.stride(2),
            c.stride(0), c.stride(1), c.stride(2),
            BLOCK_M=256, BLOCK_N=256, BLOCK_K=64, EVEN_K=(K % 64 == 0),
            num_warps=8, num_stages=4,
        )
        return c
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]), batch)
    bmm_kernel[grid](
        a, b, c, M, N, K,
        a.stride(0), a.stride(1), a.stride(2),
        b.stride(0), b.stride(1), b.stride(2),
        c.stride(0), c.stride(1), c.stride(2),
    )
    return c
