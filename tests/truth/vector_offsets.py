"""Micro kernel for int64 offset tiles of vectorised accesses (an fp8/fp16 block dequantizer: a 2-D tile
addressed through int64 row * N + column offsets, scaled and stored). Compiled by
tests/analysis/test_vector_offsets.py; never imported on the lint path."""
import triton
import triton.language as tl


@triton.jit
def scale_block(X, S, Y, M, N, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :].to(tl.int64)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(X + offs, mask=mask).to(tl.float32)
    s = tl.load(S + tl.program_id(0) * tl.num_programs(1) + tl.program_id(1))
    tl.store(Y + offs, x * s, mask=mask)
