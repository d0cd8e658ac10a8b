"""Kernel sources that tests in more than one folder lint (tests/ is on sys.path, as for `from conftest import`)."""
from __future__ import annotations

# An int8 GEMM (int32 accumulator) with one autotune config: BLOCK 128 x 128 x 128, 4 stages.
# Operand buffers on sm_90: int8 4 * 16,384 (A) + 16,384 (B, N-contiguous: one buffer, see
# tests/analysis/test_eight_bit_operands.py) = 81,920 B, as Triton 3.9 allocates (fits the 232,448 B of an H100 CTA);
# as fp16, 4 * (BM*BK + BK*BN) * 2 = 262,144 B (does not).
INT8_GEMM = '''
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BM": 128, "BN": 128, "BK": 128}, num_warps=8, num_stages=4)], key=["K"])
@triton.jit
def int8_gemm(A, B, C, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = A + rm[:, None] * K + rk[None, :]
    b_ptrs = B + rk[:, None] * BN + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc += tl.dot(a, b)
        a_ptrs += BK
        b_ptrs += BK * BN
    tl.store(C + rm[:, None] * BN + rn[None, :], acc)
'''
