"""Smoke tests for the H200 benchmark scripts (benchmarks/gpu_configs.py, gpu_report.py, gpu/replay.py,
gpu/fit_model.py) on the CPU, at tiny size: one saved softmax row from run 8, no GPU, no Triton."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT


from benchmarks.gpu import fit_model
from benchmarks import gpu_configs
from benchmarks import gpu_report
from benchmarks.gpu import replay


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


def test_settle_times_identical_cubins_once_and_reports_fresh_medians() -> None:
    from benchmarks.gpu import timing  # benchmarks/gpu/timing.py

    # the selection made "s3" the best on lucky samples; s1 (the recommendation) is the same program
    calls: list[str] = []
    fresh = {"s1": [10.0, 10.4, 10.2], "auth": [12.0, 11.0, 13.0]}

    def timer(key: str) -> float:
        calls.append(key)
        return fresh[key][sum(c == key for c in calls) - 1]

    out = timing.settle("s1", "auth", "s3", {"s1": "abc", "s3": "abc", "auth": "def"}, timer, rounds=3)
    assert calls == ["s1", "auth"] * 3          # s3 is never timed: its cubin is s1's
    assert out["best"] == "s1" and out["merged"] == ["s3"]
    assert out["us"] == {"s1": 10.2, "s3": 10.2, "auth": 12.0}   # medians of the fresh rounds


def test_settle_keeps_a_faster_distinct_best_and_never_merges_unknown_cubins() -> None:
    from benchmarks.gpu import timing

    times = {"rec": 11.0, "best": 10.0}
    out = timing.settle("rec", None, "best", {"rec": None, "best": None}, lambda k: times[k], rounds=2)
    assert out["best"] == "best" and out["merged"] == []
    assert out["us"]["best"] / out["us"]["rec"] == 10.0 / 11.0


def test_ncu_pairs_report_reads_the_saved_counters(capsys) -> None:  # type: ignore[no-untyped-def]
    # benchmarks/gpu/ncu_pairs.py: the saved Nsight Compute CSV of H200 run 1 maps back onto GROUPS in order,
    # and every profiled config is one that run 24 timed (so its counters can be read next to its time)
    from benchmarks.gpu import ncu_pairs  # noqa: PLC0415
    ncu_pairs.report(str(ROOT / "benchmarks/gpu/ncu/h200_counters_run1.csv"))
    out = capsys.readouterr().out
    heads = [line[3:] for line in out.splitlines() if line.startswith("== ")]
    assert heads == ncu_pairs.labels()
    assert out.count("gpu__time_duration=") == len(heads) and "gpu__time_duration=?" not in out
    timed = {(r["kernel"], json.dumps(r["shape"], sort_keys=True)): r["all_us"]
             for r in json.loads((ROOT / "benchmarks/gpu/h200_results_run24.json").read_text())["rows"]}
    for name, shape, cfgs in ncu_pairs.GROUPS:
        all_us = timed[(name, json.dumps(shape, sort_keys=True))]
        for kw, w, s in cfgs:
            assert gpu_configs.config_key(gpu_configs.cfg(kw, w, s)) in all_us, (name, shape, kw, w, s)
