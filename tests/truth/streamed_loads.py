"""Micro kernels for the sunk-load register rule (kernlint/analysis/register_streams.py): tiles that meet
only in an element-wise chain ending in a store. Compiled by tests/analysis/test_register_streams.py; never imported
on the lint path."""
import triton
import triton.language as tl


@triton.jit
def three_loads(X, W, B, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0)
    w = tl.load(W + cols, mask=m, other=0.0)
    b = tl.load(B + cols, mask=m, other=0.0)
    tl.store(Y + row * N + cols, x * w + b, mask=m)


@triton.jit
def two_loads(X, W, B, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0)
    w = tl.load(W + cols, mask=m, other=0.0)
    tl.store(Y + row * N + cols, x * w, mask=m)


@triton.jit
def sum_stored_and_reused(X, W, B, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    h = tl.load(X + row * N + cols, mask=m, other=0.0) + tl.load(W + cols, mask=m, other=0.0)
    tl.store(Y + row * N + cols, h, mask=m)
    tl.store(B + row * N + cols, h * h, mask=m)
