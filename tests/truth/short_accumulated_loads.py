"""Micro kernels for in-loop accumulations of short loaded rows, whose vectors ptxas streams one by one
(kernlint/analysis/register_vectors.py); ptxas register counts in tests/analysis/test_register_vectors.py."""
import triton
import triton.language as tl


@triton.jit
def centred_squares(X, Out, stride, n, shift, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = X + row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n, other=0.0).to(tl.float32)
        x = tl.where(cols < n, x - shift, 0.0)
        acc += x * x
    tl.store(Out + row, tl.sum(acc, axis=0))


@triton.jit
def weighted_sum(X, W, Out, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + row * stride + cols, mask=cols < n, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=cols < n, other=0.0).to(tl.float32)
        acc += x * w
    tl.store(Out + row, tl.sum(acc, axis=0))
