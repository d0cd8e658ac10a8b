"""Per-group absmax quantisation to float8 e4m3 (1 x GROUP_SIZE groups along each row)."""
import torch
import triton
import triton.language as tl

FP8_E4M3_MAX = tl.constexpr(448.0)


class Fp8GroupQuantizer:
    """Quantise a [rows, cols] activation to fp8 with one fp32 scale per (row, group)."""

    def __init__(self, group_size: int = 128, groups_per_program: int = 4):
        assert group_size & (group_size - 1) == 0
        self.group_size = group_size
        self.groups_per_program = groups_per_program

    @staticmethod
    @triton.jit
    def _quant_kernel(
        x_ptr, y_ptr, scale_ptr,
        x_row_stride, y_row_stride, n_cols, n_groups,
        GROUP_SIZE: tl.constexpr, GROUPS_PER_PROGRAM: tl.constexpr,
    ):
        row = tl.program_id(0).to(tl.int64)
        pid_g = tl.program_id(1)
        BLOCK: tl.constexpr = GROUP_SIZE * GROUPS_PER_PROGRAM
        cols = pid_g * BLOCK + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)

        xg = tl.reshape(x, (GROUPS_PER_PROGRAM, GROUP_SIZE))
        amax = tl.maximum(tl.max(tl.abs(xg), axis=1), 1e-12)
        scale = amax / FP8_E4M3_MAX
        q = tl.clamp(xg / scale[:, None], -FP8_E4M3_MAX, FP8_E4M3_MAX)
        q = tl.reshape(q, (BLOCK,)).to(tl.float8e4nv)
        tl.store(y_ptr + row * y_row_stride + cols, q, mask=mask)

        groups = pid_g * GROUPS_PER_PROGRAM + tl.arange(0, GROUPS_PER_PROGRAM)
        tl.store(scale_ptr + row * n_groups + groups, scale, mask=groups < n_groups)

    def __call__(self, x: torch.Tensor):
        assert x.ndim == 2 and x.stride(1) == 1
        n_rows, n_cols = x.shape
        n_groups = triton.cdiv(n_cols, self.group_size)
        y = torch.empty((n_rows, n_cols), dtype=torch.float8_e4m3fn, device=x.device)
        scales = torch.empty((n_rows, n_groups), dtype=torch.float32, device=x.device)
        grid = (n_rows, triton.cdiv(n_groups, self.groups_per_program))
        self._quant_kernel[grid](
            x, y, scales,
            x.stride(0), y.stride(0), n_cols, n_groups,
            GROUP_SIZE=self.group_size, GROUPS_PER_PROGRAM=self.groups_per_program,
            num_warps=4,
        )
        return y, scales
