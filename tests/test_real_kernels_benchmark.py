"""The committed released-kernel H200 results (benchmarks/real_kernels.py): structure, and the report
regenerates byte-identically from them (no GPU)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "gpu" / "real_kernels_h200.json"
PLAN = ROOT / "benchmarks" / "real_kernels" / "plan.json"
REPORT = ROOT / "benchmarks" / "gpu" / "real_kernels_h200.md"
sys.path.insert(0, str(ROOT / "benchmarks"))


def test_results_structure() -> None:
    from real_kernels.specs import KERNELS
    data = json.loads(RESULTS.read_text())
    assert {"gpu", "torch", "triton"} <= set(data["info"])
    rows = data["rows"]
    assert {r["kernel"] for r in rows} <= set(KERNELS)
    assert len({r["kernel"] for r in rows}) >= 6 and len({r["kernel"].split(".")[0] for r in rows}) >= 3
    plan = {(p["kernel"], json.dumps(p["shape"], sort_keys=True)) for p in json.loads(PLAN.read_text())["pairs"]}
    for r in rows:
        assert (r["kernel"], json.dumps(r["shape"], sort_keys=True)) in plan
        assert "setup_error" not in r, r
        for key in ("best_us", "author_us", "kernlint_us"):
            assert r[key] > 0, (r["kernel"], key)
        assert r["best_us"] <= min(r["author_us"], r["kernlint_us"]) + 1e-9   # the grid holds both
        assert r["kernlint_verdict"] in ("replaced", "kept", "none")
        assert isinstance(r["author_correct"], bool) and isinstance(r["kernlint_correct"], bool)


def test_report_regenerates_identically() -> None:
    from real_kernels.report import render
    assert render(json.loads(RESULTS.read_text()), json.loads(PLAN.read_text())) == REPORT.read_text()
