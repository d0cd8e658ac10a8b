"""Probe kernels: one element-wise math call per kernel against the same copy kernel without it (k_copy).

Compiled with `kernlint calibrate tests/truth/math_calls.py::k_sin --arg "*=*fp32" --config BLOCK=...` (Triton 3.9,
ptxas 12.9 sm_90 / 13.4 sm_100, 4 warps, num_stages 1); the numbers are in kernlint/analysis/register_math.py and
tests/analysis/test_register_math.py.
"""
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def k_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0).to(tl.float32)
    tl.store(y_ptr + offs, x * 2.0, mask=m)


@triton.jit
def k_sin(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0).to(tl.float32)
    tl.store(y_ptr + offs, tl.sin(x), mask=m)


@triton.jit
def k_cos(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0).to(tl.float32)
    tl.store(y_ptr + offs, tl.cos(x), mask=m)


@triton.jit
def k_exp(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0).to(tl.float32)
    tl.store(y_ptr + offs, tl.exp(x), mask=m)


@triton.jit
def k_log(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0).to(tl.float32)
    tl.store(y_ptr + offs, tl.log(x), mask=m)


@triton.jit
def k_sqrt(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0).to(tl.float32)
    tl.store(y_ptr + offs, tl.sqrt(x), mask=m)


@triton.jit
def k_erf(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0).to(tl.float32)
    tl.store(y_ptr + offs, tl.erf(x), mask=m)


@triton.jit
def k_tanh(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0).to(tl.float32)
    tl.store(y_ptr + offs, libdevice.tanh(x), mask=m)


@triton.jit
def k_sigmoid(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0).to(tl.float32)
    tl.store(y_ptr + offs, tl.sigmoid(x), mask=m)


@triton.jit
def k_div(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0).to(tl.float32)
    tl.store(y_ptr + offs, x / (1.0 + x * x), mask=m)


@triton.jit
def k_pow(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0).to(tl.float32)
    tl.store(y_ptr + offs, libdevice.pow(x, 1.7), mask=m)


@triton.jit
def k_acosh(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0).to(tl.float32)
    tl.store(y_ptr + offs, libdevice.acosh(x), mask=m)


@triton.jit
def k_erfinv(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0).to(tl.float32)
    tl.store(y_ptr + offs, libdevice.erfinv(x), mask=m)
