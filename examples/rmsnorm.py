"""RMSNorm forward with a looped reduction (works for rows wider than one block)."""
import torch
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["n_cols"])
def rmsnorm_fwd_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, row_stride, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    offset = row * row_stride  # expect: KL303
    x_row = x_ptr + offset
    y_row = y_ptr + offset

    sum_sq = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        sum_sq += x * x
    rstd = tl.rsqrt(tl.sum(sum_sq, axis=0) / n_cols + eps)
    tl.store(rstd_ptr + row, rstd)

    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    x2d = x.reshape(-1, x.shape[-1])
    n_rows, n_cols = x2d.shape
    y = torch.empty_like(x2d)
    rstd = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    BLOCK_SIZE = min(4096, triton.next_power_of_2(n_cols))
    rmsnorm_fwd_kernel[(n_rows,)](
        x2d, weight, y, rstd, x2d.stride(0), n_cols, eps,
        BLOCK_SIZE=BLOCK_SIZE, num_warps=8,
    )
    return y.reshape(x.shape)
