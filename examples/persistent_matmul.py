"""Persistent bf16 matmul: launch one program per SM and loop over output tiles."""
import itertools

import torch
import triton
import triton.language as tl
from triton.language import dot

from examples.kernel_utils import grouped_pid

GROUP_SIZE: tl.constexpr = tl.constexpr(8)

PERSISTENT_CONFIGS = [
    # 128×128, 4 warps, 4 stages spills on sm_90 (ptxas: 255 registers + 52 B spilled; the clamped B tile
    # is loaded through registers, see placement._scalar_loaded)
    triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, num_warps=w, num_stages=s)  # expect: KL201
    for bm, bn, bk, w, s in itertools.product([64, 128], [64, 128], [64], [4, 8], [3, 4])
]


@triton.autotune(configs=PERSISTENT_CONFIGS, key=["M", "N", "K"])
@triton.jit
def persistent_matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    NUM_SMS: tl.constexpr,
):
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    offs_k_for_mask = tl.arange(0, BLOCK_K)

    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = grouped_pid(tile_id, num_pid_m, num_pid_n, GROUP_SIZE)
        offs_am = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_bn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        # clamp out-of-range rows/cols to 0 (the store below is masked) and widen to 64 bits
        offs_am = tl.where(offs_am < M, offs_am, 0).to(tl.int64)
        offs_bn = tl.where(offs_bn < N, offs_bn, 0).to(tl.int64)

        accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_K + tl.arange(0, BLOCK_K)
            a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
            b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
            a = tl.load(a_ptrs, mask=offs_k_for_mask[None, :] < K - ki * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k_for_mask[:, None] < K - ki * BLOCK_K, other=0.0)
            accumulator = dot(a, b, accumulator)

        offs_cm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        tl.store(c_ptrs, accumulator.to(tl.bfloat16), mask=c_mask)


def persistent_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.shape[1] == b.shape[0] and a.dtype == b.dtype == torch.bfloat16
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.bfloat16)
    num_sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    grid = lambda META: (min(num_sms, triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"])),)
    persistent_matmul_kernel[grid](
        a, b, c, M, N, K,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        c.stride(0), c.stride(1),
        NUM_SMS=num_sms,
    )
    return c
