"""Micro kernels for the in-flight load window of in-loop accumulations (kernlint/analysis/register_streams.py,
window_accumulated_loads); ptxas register counts in tests/analysis/test_register_rows.py."""
import triton
import triton.language as tl


@triton.jit
def accumulate_one_load(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, n, BLOCK):
        acc += tl.load(X + i + offs).to(tl.float32)
    tl.store(Y + offs, acc)


@triton.jit
def accumulate_product(X, W, Y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, n, BLOCK):
        acc += tl.load(X + i + offs).to(tl.float32) * tl.load(W + i + offs).to(tl.float32)
    tl.store(Y + offs, acc)


@triton.jit
def accumulate_and_store(X, Y, Z, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, n, BLOCK):
        x = tl.load(X + i + offs)
        tl.store(Z + i + offs, x * 2.0)
        acc += x
    tl.store(Y + offs, acc)
