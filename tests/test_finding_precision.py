"""The labelled sample of real findings (benchmarks/truth/finding_labels.jsonl) stays well-formed; the
benchmark that re-scores it (benchmarks/finding_precision.py) needs the downloaded corpus and is not run here."""
from __future__ import annotations

import importlib.util
import re
import sys

from conftest import ROOT

from kernlint.registry import all_rules

_spec = importlib.util.spec_from_file_location("finding_precision", ROOT / "benchmarks" / "finding_precision.py")
assert _spec is not None and _spec.loader is not None
fp = importlib.util.module_from_spec(_spec)
sys.modules["finding_precision"] = fp   # dataclasses look their module up
_spec.loader.exec_module(fp)


def test_labels_are_well_formed_and_unique() -> None:
    labels = fp.load_labels()
    codes = {r.CODE for r in all_rules()}
    assert labels
    for lab in labels:
        assert lab.rule in codes and lab.label in ("right", "wrong") and lab.reason.strip()
        assert re.fullmatch(r"[0-9a-f]{10}", lab.hash) and lab.line > 0 and not lab.file.startswith("/")
    keys = [(lab.package, lab.file, lab.line, lab.rule) for lab in labels]
    assert len(keys) == len(set(keys))


def test_a_label_refinds_its_line_after_the_file_shifts() -> None:
    lines = ["import triton", "", "    bos = i_b * T", "x = 1"]
    lab = fp.Label("p", "f.py", 3, "KL303", fp.line_hash("bos   =  i_b * T"), "right", "r")
    assert fp.relocate(lab, lines) == 3
    assert fp.relocate(lab, ["# a new header line", *lines]) == 4
    assert fp.relocate(lab, ["nothing here"]) is None


def test_scoring_counts_only_findings_still_reported_at_warning_level(tmp_path, monkeypatch) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "k.py").write_text("a = 1\nb = 2\n")
    monkeypatch.setattr(fp, "CORPUS", tmp_path)
    labels = [fp.Label("pkg", "k.py", 1, "KL303", fp.line_hash("a = 1"), "right", "r"),
              fp.Label("pkg", "k.py", 2, "KL303", fp.line_hash("b = 2"), "wrong", "w")]
    run = fp.PackageRun(4, 0, [("k.py", 1, "KL303", "warning"), ("k.py", 2, "KL303", "info")])
    summary = fp.score(labels, {"pkg": run})
    assert summary["rules"]["KL303"]["precision"] == 1.0          # the wrong one is info now: not counted
    assert summary["packages"]["pkg"]["per_kernel"] == 0.25        # one warning over four kernels
    assert len(summary["no_longer_reported"]) == 1
