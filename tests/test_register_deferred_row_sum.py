"""sm_100 attention keeps a second copy of the softmax probabilities for a row sum deferred by one iteration
(kernlint/analysis/register_tmem.deferred_row_sums). Truth: Triton 3.9 / ptxas on sm_100, recorded in
benchmarks/truth/suite-triton-3.9.json (tests/truth/suite_kernels/attention.py, causal, HEAD_DIM 64, fp16)."""
from __future__ import annotations

import json
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import accuracy  # noqa: E402


def _records(cap: int) -> dict[tuple[int, int, int], tuple[dict, object]]:
    records = [r for r in json.loads((ROOT / "benchmarks/truth/suite-triton-3.9.json").read_text())["records"]
               if r["kernel"] == "attn_fwd_causal_kernel" and r["cap"] == cap]
    return {(r["config"]["BLOCK_M"], r["config"]["BLOCK_N"], r["config"]["num_warps"]): (r, e)
            for r, e in accuracy.estimate_records(records)}


def test_a_thread_owning_a_row_holds_the_previous_probabilities_and_spills() -> None:
    b200 = _records(100)
    # one row per thread (BLOCK_M = 32 × num_warps): ptxas allocates all 255 registers and spills
    for key in ((128, 64, 4), (256, 64, 8)):
        record, estimate = b200[key]
        assert record["regs"] == 255 and record["spill_store"] > 0, record
        regs = estimate.registers
        assert regs.demand > regs.budget == 255, (key, regs.demand)   # spill predicted
        # the copy is p: BLOCK_M × 64 fp32 over 32 × num_warps threads = 64 words a thread, at data_scale 0.95
        # (60.8 registers) on top of the 228 / 220 the loop body needed before
        assert regs.demand >= (228 if key[2] == 4 else 220) + 60


def test_two_threads_per_row_or_no_tcgen05_add_nothing() -> None:
    b200 = _records(100)
    # 128 rows at 8 warps: the second warpgroup takes half the columns; ptxas 113 registers, no spill
    record, estimate = b200[(128, 64, 8)]
    assert record["regs"] == 113 and not record["spill_store"]
    assert estimate.registers.demand <= estimate.registers.budget
    assert abs(estimate.registers.allocated - 113) / 113 <= 0.2
    # sm_90 (wgmma, accumulator in registers, no rotated loop): 128 × 64 at 4 warps is 232 registers, no spill
    record, estimate = _records(90)[(128, 64, 4)]
    assert record["regs"] == 232 and not record["spill_store"]
    assert estimate.registers.demand <= 255
