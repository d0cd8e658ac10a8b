"""Probe kernels: element-wise chains whose intermediates ptxas may compute one element at a time or several
side by side (kernlint/analysis/register_parallel.py).

Compiled with `kernlint calibrate tests/truth/parallel_chains.py::k_chain --arg "*=*fp16" --config BLOCK=...`
(Triton 3.9, ptxas 12.9 sm_90 / 13.4 sm_100, 4 warps, num_stages 3); the numbers are in
tests/analysis/test_register_parallel.py.
"""
import triton
import triton.language as tl


@triton.jit
def k_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, x * 2.0, mask=m)


@triton.jit
def k_chain(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m).to(tl.float32)
    tl.store(y_ptr + offs, x * x * 0.5 + x * 3.0 - 1.0, mask=m)


@triton.jit
def k_div_scalar(x_ptr, s_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m).to(tl.float32)
    s = tl.load(s_ptr).to(tl.float32)
    tl.store(y_ptr + offs, x / s, mask=m)


@triton.jit
def k_silu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m).to(tl.float32)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=m)


@triton.jit
def k_roots(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m).to(tl.float32)
    tl.store(y_ptr + offs, tl.rsqrt(x) + tl.sqrt(x), mask=m)


@triton.jit
def k_recip(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, 1.0 / x, mask=m)
