"""Smoke tests for the H200 benchmark scripts (benchmarks/gpu_configs.py, gpu_report.py, gpu/replay.py,
gpu/fit_model.py) on the CPU, at tiny size: one saved softmax row from run 8, no GPU, no Triton."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "benchmarks" / "gpu"))

import fit_model  # noqa: E402
import gpu_configs  # noqa: E402
import gpu_report  # noqa: E402
import replay  # noqa: E402


def _one_row(tmp_path: Path, kernel: str = "softmax") -> Path:
    doc = json.loads((ROOT / "benchmarks/gpu/h200_results_run8.json").read_text())
    doc["rows"] = [r for r in doc["rows"] if r["kernel"] == kernel][:1]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    return path


def test_grids_authors_and_splits_cover_every_shape() -> None:
    for name, (_, _, shapes) in gpu_configs.KERNELS.items():
        assert len(shapes) == 6, name
        for i, shape in enumerate(shapes):
            assert gpu_configs.grid_configs(name, shape) and gpu_configs.author_configs(name, shape)
            assert gpu_configs.split_of(i) == ("held" if i == 1 else "new" if i == 3 else "fresh" if i == 4 else
                                              "unseen" if i == 5 else "fit")


def test_replay_and_fit_model_score_a_saved_row(tmp_path: Path) -> None:
    path = _one_row(tmp_path)
    rows = replay.replay([str(path)])
    assert len(rows) == 1 and 0.0 < rows[0]["ratio"] <= 1.0
    timed = fit_model.load([str(path)])
    scores = fit_model.evaluate(timed)
    assert set(scores) == {"fit"} and 0.0 < scores["fit"][0] <= 1.0


def test_report_keeps_the_notes(tmp_path: Path) -> None:
    out = tmp_path / "table.md"
    out.write_text("old table\n\n" + gpu_report.NOTES_MARK + "\nRun notes written by hand.\n")
    gpu_report.report(str(_one_row(tmp_path)), out)
    text = out.read_text()
    assert text.startswith("# Config quality on NVIDIA H200") and "| softmax |" in text
    assert text.endswith(gpu_report.NOTES_MARK + "\nRun notes written by hand.\n")
    assert "old table" not in text
