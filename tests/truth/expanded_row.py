"""Probe kernel: a row max stored as an [M, 1] tile (flag-gems' amax/aminmax/addmv shape).

Compiled with `kernlint calibrate tests/truth/expanded_row.py::row_max --target h100 --config BLOCK_M=..,BLOCK_N=..`
(Triton 3.9, ptxas 12.9, sm_90, 4 warps, num_stages 3, fp16 pointers): shared memory 64 / 256 / 4,096 B at
BLOCK_M x BLOCK_N = 16 x 256 / 64 x 64 / 1024 x 64; the TTGIR converts the fp32 row (tl.max reduces fp16 in
fp32) from the reduction's sliced layout to the store's before expanding it.
"""
import triton
import triton.language as tl


@triton.jit
def row_max(inp, out, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    dtype = inp.type.element_ty
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    acc_type = tl.float32 if dtype is tl.bfloat16 else dtype
    _all = tl.full([BLOCK_M, BLOCK_N], value=float("-inf"), dtype=acc_type)
    for off in range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)[None, :]
        a = tl.load(inp + rows * N + cols, (rows < M) & (cols < N), other=float("-inf"))
        _all = tl.maximum(_all, a)
    all = tl.max(_all, axis=1)[:, None]
    tl.store(out + rows, all, rows < M)
