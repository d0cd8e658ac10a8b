"""Probe kernels for element-by-element loads whose addresses are formed in the loop body
(tests/analysis/test_register_gathered_loads.py).

gathered_rows_kernel reads rows through an index loaded in the same trip (liger-kernel _moe_bwd_dW2_kernel's dout
gather); strided_rows_kernel reads the same columns at rows k + offs_m. Columns sit COL_STRIDE elements apart, so
every load moves one fp16 element. Compiled with Triton 3.9.0 (ptxas 12.9.86 / 13.4.59) by `kernlint calibrate`;
the numbers are in the test.
"""
import triton
import triton.language as tl


@triton.jit
def gathered_rows_kernel(X, IDX, O, n, stride_x, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         COL_STRIDE: tl.constexpr):
    """Rows gathered through a loaded index, columns at a stride: one element per load, pointers per trip."""
    offs_m = tl.arange(0, BLOCK_M)
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k in range(0, n, BLOCK_M):
        idx = tl.load(IDX + k + offs_m).to(tl.int64)
        x = tl.load(X + idx[:, None] * stride_x + cols[None, :] * COL_STRIDE)
        acc += x.to(tl.float32)
    tl.store(O + offs_m[:, None] * BLOCK_N + cols[None, :], acc)


@triton.jit
def strided_rows_kernel(X, IDX, O, n, stride_x, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        COL_STRIDE: tl.constexpr):
    """The same loads with rows k + offs_m: every address is a loop-invariant tile plus k * stride_x."""
    offs_m = tl.arange(0, BLOCK_M)
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k in range(0, n, BLOCK_M):
        rows = (k + offs_m).to(tl.int64)
        x = tl.load(X + rows[:, None] * stride_x + cols[None, :] * COL_STRIDE)
        acc += x.to(tl.float32)
    tl.store(O + offs_m[:, None] * BLOCK_N + cols[None, :], acc)
