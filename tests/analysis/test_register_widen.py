"""The row-by-row narrow-hold rule (kernlint/analysis/register_widen.py).

Expected register counts are ptxas truth: the examples' fp8 quantizer from benchmarks/truth/triton-3.9.json, and
probe compiles (Triton 3.9.0, ptxas of its bundle, 2026-11-29) of the suite's quantize_int8_rowwise_kernel
(tests/truth/suite_kernels/pointwise.py, fp16 input) at configs that are not in the recorded truth, so the rule
was not designed on them. Each probe row: (BLOCK_M, BLOCK_N, num_warps, ptxas registers on sm_90).
"""
from __future__ import annotations

import json

import pytest
from conftest import ROOT

from kernlint.pipeline.api import Settings, lint_paths

INT8_FILE = "tests/truth/suite_kernels/pointwise.py"
INT8_ARGS = {"x_ptr": "*fp16", "q_ptr": "*i8", "scale_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32",
             "stride_x": "i32", "stride_q": "i32"}

# The int8 store moves 16 elements per thread, so Triton's layout puts ≤ 32 lanes on the 128-512 columns and
# the warps on the rows: each row is reduced inside one warp and every thread holds 2-16 rows.
INT8_PROBES_SM90 = [
    (16, 256, 4, 32),    # 32 elements/thread: fp32 tile 32 words, packed fp16 16
    (32, 512, 4, 77),    # 128 elements/thread: fp32 128 words, packed fp16 64
    (8, 512, 2, 48),
    (64, 128, 4, 48),
    (16, 512, 8, 32),
]


def _estimates(path: str, args: dict[str, str], kernel: str, configs: tuple[dict, ...]) -> dict[tuple, int]:
    res = lint_paths([str(ROOT / path)], Settings(targets=("h100",), cli_configs=configs, arg_types=args))
    return {tuple(sorted({**e.config.constexprs, "num_warps": e.config.num_warps}.items())): e.registers.allocated
            for f in res.files for k in f.kernels if kernel in (k.jit.name, k.jit.qualname)
            for e in k.estimates if e.config.origin == "cli"}


@pytest.mark.parametrize("block_m,block_n,warps,ptxas", INT8_PROBES_SM90)
def test_int8_rows_reduced_within_a_warp_hold_the_packed_fp16(block_m: int, block_n: int, warps: int,
                                                              ptxas: int) -> None:
    cfg = {"BLOCK_M": block_m, "BLOCK_N": block_n, "num_warps": warps, "num_stages": 1}
    got = _estimates(INT8_FILE, INT8_ARGS, "quantize_int8_rowwise_kernel", (cfg,))
    est = got[tuple(sorted({"BLOCK_M": block_m, "BLOCK_N": block_n, "num_warps": warps}.items()))]
    assert abs(est - ptxas) / ptxas <= 0.1, (cfg, est, ptxas)
    # holding the fp32 tile would cost one word per element on top of the working set
    fp32_words = block_m * block_n // (32 * warps)
    assert est < fp32_words + 8


def test_rows_reduced_across_warps_keep_the_fp32_tile() -> None:
    # BLOCK_M 4 × BLOCK_N 2048, 4 warps: the 2048 columns need all four warps, so the row maxima meet at one
    # barrier and every row is converted before any is divided; recorded ptxas (sm_90): 93 registers
    rec = next(r for r in json.load(open(ROOT / "benchmarks/truth/suite-triton-3.9.json"))["records"]
               if r["kernel"] == "quantize_int8_rowwise_kernel" and r["cap"] == 90
               and r["config"]["BLOCK_M"] == 4 and r["config"]["BLOCK_N"] == 2048)
    cfg = {**rec["config"]}
    got = _estimates(INT8_FILE, INT8_ARGS, "quantize_int8_rowwise_kernel", (cfg,))
    est = next(iter(got.values()))
    fp32_words = 4 * 2048 // 128
    assert rec["regs"] > fp32_words and est > fp32_words   # 64 fp32 words held, not 32 packed


def test_fp8_quantizer_matches_recorded_ptxas() -> None:
    recs = [r for r in json.load(open(ROOT / "benchmarks/truth/triton-3.9.json"))["records"]
            if r["kernel"] == "Fp8GroupQuantizer._quant_kernel" and r["cap"] == 90
            and r["config"]["GROUPS_PER_PROGRAM"] >= 32]
    assert recs
    configs = tuple({**r["config"], **r["constexprs"]} for r in recs)
    got = _estimates("examples/quantize_fp8.py", recs[0]["args"], "Fp8GroupQuantizer._quant_kernel", configs)
    for r in recs:
        key = tuple(sorted({"GROUP_SIZE": 128, "GROUPS_PER_PROGRAM": r["config"]["GROUPS_PER_PROGRAM"],
                            "num_warps": r["config"]["num_warps"]}.items()))
        assert abs(got[key] - r["regs"]) / r["regs"] <= 0.2, (r["config"], got[key], r["regs"])
