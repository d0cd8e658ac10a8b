"""Shared memory around a dot outside any loop (kernlint/analysis/smem.py, _reuse_after_straight_line_dots and
the sm_100 completion barrier). Truth: Triton 3.9 `metadata.shared` of tests/truth/chained_dots.py::gemm_gelu_kernel
(K = 64, one dot, GELU epilogue), recorded in benchmarks/truth/probes-triton-3.9.json."""
from __future__ import annotations

import json

from conftest import ROOT

from benchmarks import accuracy


def test_epilogue_conversion_reuses_the_dead_operands() -> None:
    records = [r for r in json.loads((ROOT / "benchmarks/truth/probes-triton-3.9.json").read_text())["records"]
               if r["kernel"] == "gemm_gelu_kernel"]
    assert len(records) == 12
    for r, e in accuracy.estimate_records(records):
        bm, bn = r["config"]["BLOCK_M"], r["config"]["BLOCK_N"]
        operands = (bm * 64 + 64 * bn) * 2           # the fp16 A and B tiles, K = 64, staged once
        barrier = 8 if r["cap"] == 100 else 0        # sm_100: the tcgen05 MMA's completion mbarrier
        # the product's conversion for the store fits in the operands' bytes: nothing is added for it
        assert r["shared"] == operands + barrier, (r["cap"], r["config"], r["shared"])
        assert e.smem.total == r["shared"], (r["cap"], r["config"], e.smem.total, r["shared"])
