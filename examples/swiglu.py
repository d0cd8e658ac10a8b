"""Fused SwiGLU activation: c = silu(a) * b, row-wise over [n_rows, n_cols] activations."""
import torch
import triton
import triton.language as tl

from .kernel_utils import silu


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4, num_stages=1),
        triton.Config({"BLOCK_SIZE": 2048}, num_warps=4, num_stages=1),
        triton.Config({"BLOCK_SIZE": 2048}, num_warps=8, num_stages=2),
        triton.Config({"BLOCK_SIZE": 4096}, num_warps=8, num_stages=1),
    ],
    key=["n_cols"],
)
@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, c_ptr, row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    offset = tl.cast(row, tl.int64) * row_stride
    a_row = a_ptr + offset
    b_row = b_ptr + offset
    c_row = c_ptr + offset
    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        a = tl.load(a_row + cols, mask=mask, other=0.0)
        b = tl.load(b_row + cols, mask=mask, other=0.0)
        c = silu(a) * b.to(tl.float32)
        tl.store(c_row + cols, c.to(c_ptr.dtype.element_ty), mask=mask)


def swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.shape == b.shape and a.is_contiguous() and b.is_contiguous()
    a2d = a.reshape(-1, a.shape[-1])
    b2d = b.reshape(-1, b.shape[-1])
    n_rows, n_cols = a2d.shape
    c = torch.empty_like(a2d)
    swiglu_fwd_kernel[(n_rows,)](a2d, b2d, c, a2d.stride(0), n_cols)
    return c.reshape(a.shape)
