"""Micro kernels for the shared-memory scratch of reductions: the dtype Triton reduces in (tl.max/tl.min
convert 16-bit floats to fp32, tl.sum converts 8-bit integers to i32) and where a reduced row is converted
to its store's layout (at a join with a loaded 1-D tile). Compiled by tests/analysis/test_reduction_dtypes.py; never
imported on the lint path."""
import triton
import triton.language as tl


@triton.jit
def absmax_row(A, M, BLOCK: tl.constexpr):
    # bitsandbytes' blockwise 8-bit quantizer: the absmax of one block of fp16 values
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(A + offs)
    m = tl.max(tl.abs(a), axis=0)
    tl.store(M + tl.program_id(0), m)


@triton.jit
def count_row(X, S, BLOCK: tl.constexpr):
    # a sum of int8 values (a histogram count): reduced as i32
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    tl.store(S + tl.program_id(0), tl.sum(x, axis=0))


@triton.jit
def scaled_row_sums(W, S, Y, K, BN: tl.constexpr, BK: tl.constexpr):
    # unsloth's fp8 row-wise GEMV epilogue: fp32 row sums times a loaded scale, stored as fp16
    offs_n = tl.program_id(0) * BN + tl.arange(0, BN)
    acc = tl.zeros((BN, BK), dtype=tl.float32)
    for k0 in range(0, K, BK):
        offs_k = k0 + tl.arange(0, BK)
        acc += tl.load(W + offs_n[:, None] * K + offs_k[None, :]).to(tl.float32)
    s = tl.load(S + offs_n).to(tl.float32)
    y = tl.sum(acc, axis=1) * s
    tl.store(Y + offs_n, y.to(Y.dtype.element_ty))
