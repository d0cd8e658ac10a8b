"""Probe kernel: a load with a run-time stride, one address per element (kernlint/analysis/registers.py,
pass "addresses recomputed for occupancy").

Compiled with `kernlint calibrate tests/truth/strided_loads.py::k_strided --arg "*=*fp16" --config BLOCK=...`
(Triton 3.9, ptxas 12.9 sm_90, 4 warps, num_stages 3); the numbers are in
tests/analysis/test_register_occupancy_remat.py.
"""
import triton
import triton.language as tl


@triton.jit
def k_strided(x_ptr, y_ptr, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * s)
    tl.store(y_ptr + offs, x * 2.0)
