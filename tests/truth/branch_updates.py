"""Micro kernel for a tile updated in one branch of a runtime `if` (kernlint/analysis/liveness.py: the then
branch's value reaches the join where that branch ends); ptxas counts in tests/analysis/test_branch_liveness.py."""
import triton
import triton.language as tl


@triton.jit
def branch_update(A, B, P, Q, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(A + offs) * 2.0
    b = tl.load(B + offs) * 3.0
    if flag == 0:
        tl.store(P + BLOCK + offs, a + b)
    else:
        a += tl.load(P + offs)
        b += tl.load(Q + offs)
    tl.store(A + offs, a)
    tl.store(B + offs, b)


@triton.jit
def branch_select(A, B, C, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(A + offs)
    if flag == 0:
        c = a
    else:
        c = tl.load(B + offs) * 2.0
    tl.store(C + offs, c)
