"""Micro kernels for the reduced-stream register rule (kernlint/analysis/register_streams.py): loaded tiles
whose only use is one reduction. Compiled by tests/analysis/test_reduced_streams.py; never imported on the lint path."""
import triton
import triton.language as tl


@triton.jit
def dot_rows(O, DO, Delta, M, D: tl.constexpr, BM: tl.constexpr, BD: tl.constexpr):
    # flash-attention's backward preprocess: delta = rowsum(o * do)
    pid = tl.program_id(0)
    offs_m = pid * BM + tl.arange(0, BM)
    offs_d = tl.arange(0, BD)
    mask = (offs_m[:, None] < M) & (offs_d[None, :] < D)
    o = tl.load(O + offs_m[:, None] * D + offs_d[None, :], mask=mask, other=0.0)
    do = tl.load(DO + offs_m[:, None] * D + offs_d[None, :], mask=mask, other=0.0)
    delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1)
    tl.store(Delta + offs_m, delta, mask=offs_m < M)


@triton.jit
def dot_row_1d(X, Y, S, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0)
    y = tl.load(Y + row * N + cols, mask=m, other=0.0)
    tl.store(S + row, tl.sum(x.to(tl.float32) * y.to(tl.float32), axis=0))


@triton.jit
def square_sum_1d(X, Y, S, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(S + row, tl.sum(x * x, axis=0))


@triton.jit
def dot_rows_flag(O, DO, X, Delta, M, D: tl.constexpr, BM: tl.constexpr, BD: tl.constexpr, HAS_X: tl.constexpr):
    # mamba's `if HAS_D: out -= x * D` ahead of the row sum: with the flag off Triton emits dot_rows exactly
    pid = tl.program_id(0)
    offs_m = pid * BM + tl.arange(0, BM)
    offs_d = tl.arange(0, BD)
    mask = (offs_m[:, None] < M) & (offs_d[None, :] < D)
    o = tl.load(O + offs_m[:, None] * D + offs_d[None, :], mask=mask, other=0.0).to(tl.float32)
    do = tl.load(DO + offs_m[:, None] * D + offs_d[None, :], mask=mask, other=0.0).to(tl.float32)
    if HAS_X:
        o -= tl.load(X + offs_m[:, None] * D + offs_d[None, :], mask=mask, other=0.0).to(tl.float32)
    delta = tl.sum(o * do, axis=1)
    tl.store(Delta + offs_m, delta, mask=offs_m < M)
