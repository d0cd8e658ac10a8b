"""Micro kernels for the delayed sunk loads (kernlint/analysis/register_delayed.py): a row loop that stores
`(x - m) * r * w + b` from three loaded tiles (fp16 x, fp32 w and b), alone and after a loop that reduces x.
Compiled by tests/analysis/test_register_delayed.py; never imported on the lint path."""
import triton
import triton.language as tl


@triton.jit
def affine_only(X, Y, W, B, N, m, r, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    X += row * N
    Y += row * N
    for off in range(0, N, BLOCK):
        c = off + tl.arange(0, BLOCK)
        k = c < N
        w = tl.load(W + c, mask=k, other=1.0)
        b = tl.load(B + c, mask=k, other=0.0)
        x = tl.load(X + c, mask=k, other=0.0).to(tl.float32)
        tl.store(Y + c, ((x - m) * r * w + b).to(Y.dtype.element_ty), mask=k)


@triton.jit
def mean_affine(X, Y, W, B, N, r, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    X += row * N
    Y += row * N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        c = off + tl.arange(0, BLOCK)
        acc += tl.load(X + c, mask=c < N, other=0.0).to(tl.float32)
    m = tl.sum(acc, axis=0) / N
    for off in range(0, N, BLOCK):
        c = off + tl.arange(0, BLOCK)
        k = c < N
        w = tl.load(W + c, mask=k, other=1.0)
        b = tl.load(B + c, mask=k, other=0.0)
        x = tl.load(X + c, mask=k, other=0.0).to(tl.float32)
        tl.store(Y + c, ((x - m) * r * w + b).to(Y.dtype.element_ty), mask=k)
