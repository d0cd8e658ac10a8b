"""Shared-memory constructs first met in public kernels (benchmarks/truth/public-triton-3.9.json), checked
on small probes compiled with Triton 3.9 (`metadata.shared`, num_stages=1; the same on sm_80, sm_90 and
sm_100):

* `tl.interleave(a, b)` (bitsandbytes dequant_4bit / dequant_fp4): join + reshape leaves each a/b pair in one
  thread; unless the store is vectorised by the pair, Triton converts the [N, 2] join through shared memory,
  2N elements in the interleaved values' own type (fp32 when a `tl.where` of two float literals took part);
* a row reduction fed to `tl.atomic_add` (mamba-ssm _chunk_cumsum_bwd_kernel): the sliced result is converted
  to the atomic's unvectorised 1-D layout, rows × element bytes;
* a row statistic loaded with a stride between two dots (fla parallel_deltaformer_bwd_kernel_u): pipelined
  into num_stages − 1 shared buffers only when one element is at least 4 bytes (the smallest cp.async).
"""
from __future__ import annotations

import pytest

from kernlint.pipeline.api import Settings, lint_paths

PROBES = '''
import triton
import triton.language as tl


@triton.jit
def interleave_kernel(a_ptr, lut_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs, mask=offs < n)
    lo = tl.load(lut_ptr + (a >> 4))
    hi = tl.load(lut_ptr + (a & 0xF))
    out = tl.interleave(lo, hi)
    o = tl.program_id(0) * 2 * BLOCK + tl.arange(0, 2 * BLOCK)
    tl.store(out_ptr + o, out, mask=o < 2 * n)


@triton.jit
def sign_interleave_kernel(a_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs, mask=offs < n)
    sign = tl.where((a & 8) == 8, -1.0, 1.0)
    out = tl.interleave(sign * (a >> 4).to(tl.float16), sign * (a & 0xF).to(tl.float16))
    o = tl.program_id(0) * 2 * BLOCK + tl.arange(0, 2 * BLOCK)
    tl.store(out_ptr + o, out, mask=o < 2 * n)


@triton.jit
def row_sum_atomic_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_C)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :],
                mask=(rows[:, None] < n_rows) & (cols[None, :] < n_cols), other=0.0)
    tl.atomic_add(out_ptr + rows, tl.sum(x.to(tl.float32), axis=1), mask=rows < n_rows)


@triton.jit
def stat_dot_kernel(q_ptr, k_ptr, v_ptr, lse_ptr, o_ptr, T, H, D: tl.constexpr, BLOCK_C: tl.constexpr,
                    BLOCK_T: tl.constexpr):
    o_c = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    o_d = tl.arange(0, D)
    q = tl.load(q_ptr + o_c[:, None] * D + o_d[None, :])
    acc = tl.zeros([BLOCK_C, D], dtype=tl.float32)
    for t in range(0, T, BLOCK_T):
        o_t = t + tl.arange(0, BLOCK_T)
        k = tl.load(k_ptr + o_d[:, None] + o_t[None, :] * D)
        lse = tl.load(lse_ptr + o_t * H)
        p = tl.math.exp2(tl.dot(q, k) - lse[None, :])
        v = tl.load(v_ptr + o_t[:, None] * D + o_d[None, :])
        acc = tl.dot(p.to(v_ptr.dtype.element_ty), v, acc)
    tl.store(o_ptr + o_c[:, None] * D + o_d[None, :], acc.to(o_ptr.dtype.element_ty))
'''

ARGS = {
    "interleave_kernel": {"a_ptr": "*u8", "lut_ptr": "*fp16", "out_ptr": "*fp16", "n": "i32"},
    "sign_interleave_kernel": {"a_ptr": "*u8", "out_ptr": "*fp16", "n": "i32"},
    "row_sum_atomic_kernel": {"x_ptr": "*fp16", "out_ptr": "*fp16", "n_rows": "i32", "n_cols": "i32"},
}

# (kernel, config, Triton 3.9 metadata.shared)
TRUTH = [
    # 64 pairs on 128 threads: 128 fp16 = 256 B
    ("interleave_kernel", {"BLOCK": 64, "num_warps": 4}, 256),
    # 256 pairs on 256 threads: the masked store (2n is a multiple of 16) takes the pair as a 2-vector
    ("interleave_kernel", {"BLOCK": 256, "num_warps": 8}, 0),
    # tl.where(c, -1.0, 1.0) is fp32, so the pairs are fp32: 128 × 4 B
    ("sign_interleave_kernel", {"BLOCK": 64, "num_warps": 4}, 512),
    ("sign_interleave_kernel", {"BLOCK": 256, "num_warps": 8}, 0),
    # 64 row sums cast to fp16 for the atomic: 64 × 2 B; 32 rows × 2 B = 64
    ("row_sum_atomic_kernel", {"BLOCK_R": 64, "BLOCK_C": 64, "num_warps": 4}, 128),
    ("row_sum_atomic_kernel", {"BLOCK_R": 32, "BLOCK_C": 128, "num_warps": 8}, 64),
]


@pytest.mark.parametrize("name,config,truth", TRUTH)
def test_public_constructs_against_compiles(tmp_path, name: str, config: dict, truth: int) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "probes.py"
    path.write_text(PROBES)
    result = lint_paths([str(path)], Settings(targets=("a100", "h100", "b200"),
                                              cli_configs=({**config, "num_stages": 1},), arg_types=ARGS[name]))
    [kernel] = [k for k in result.files[0].kernels if k.jit.name == name]
    got = {e.target.key: e.smem.total for e in kernel.estimates if e.config.origin == "cli"}
    assert got == {"a100": truth, "h100": truth, "b200": truth}


STAT = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "T": "i32", "H": "i32"}


@pytest.mark.parametrize("lse,truth", [
    # Q 8 KiB once; K and V 8 KiB each × (num_stages − 1 = 2) on mma.sync, × num_stages = 3 on wgmma
    ("*fp16", {"a100": 8192 + 2 * 2 * 8192, "h100": 8192 + 2 * 3 * 8192}),
    # + the fp32 statistic: 2 buffers × 64 × 4 B
    ("*fp32", {"a100": 8192 + 2 * 2 * 8192 + 512, "h100": 8192 + 2 * 3 * 8192 + 512}),
])
def test_strided_statistic_between_dots(tmp_path, lse: str, truth: dict) -> None:  # type: ignore[no-untyped-def]
    # Triton 3.9 metadata.shared: fp16 40,960 (sm_80) / 57,344 (sm_90); fp32 41,472 / 57,856
    path = tmp_path / "probes.py"
    path.write_text(PROBES)
    config = {"D": 64, "BLOCK_C": 64, "BLOCK_T": 64, "num_warps": 4, "num_stages": 3}
    result = lint_paths([str(path)], Settings(targets=("a100", "h100"), cli_configs=(config,),
                                              arg_types={**STAT, "lse_ptr": lse}))
    [kernel] = [k for k in result.files[0].kernels if k.jit.name == "stat_dot_kernel"]
    assert {e.target.key: e.smem.total for e in kernel.estimates if e.config.origin == "cli"} == truth
