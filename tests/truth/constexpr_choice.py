"""Micro kernel for `a if CONSTEXPR else b` whose branches have different shapes (fla's matmul epilogue adds
a bias row or a bias matrix by X_DIM). Compiled by tests/analysis/test_constexpr_choice.py; never imported on the
lint path."""
import triton
import triton.language as tl


@triton.jit
def add_bias(X, B, Y, stride_bm, stride_bn, BM: tl.constexpr, BN: tl.constexpr, X_DIM: tl.constexpr):
    o_m = tl.program_id(0) * BM + tl.arange(0, BM)
    o_n = tl.program_id(1) * BN + tl.arange(0, BN)
    x = tl.load(X + o_m[:, None] * BN + o_n[None, :]).to(tl.float32)
    p_b = B + (stride_bm * o_m[:, None] if X_DIM == 2 else 0) + stride_bn * o_n[None, :]
    b = tl.load(p_b).to(tl.float32)
    tl.store(Y + o_m[:, None] * BN + o_n[None, :], (x + b).to(Y.dtype.element_ty))
