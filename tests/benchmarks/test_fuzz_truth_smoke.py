"""Smoke test of benchmarks/fuzz_truth.py (differential fuzzing against Triton's compiler): two generated
kernels compiled on one target, the summary line parsed. Needs the kernlint[triton] extra, as CI has."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest
from conftest import ROOT


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs Triton (kernlint[triton])")
def test_fuzz_truth_runs_and_reports() -> None:
    out = subprocess.run([sys.executable, "benchmarks/fuzz_truth.py", "--kernels", "2", "--seed", "0",
                          "--targets", "h100"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    m = re.search(r"2 kernels, (\d+) \(kernel, target\) compiles compared, (\d+) rejected by Triton, "
                  r"0 without a result; shared memory exact (\d+)/(\d+)", out.stdout)
    assert m, out.stdout[-2000:]
    compared, rejected, exact, total = map(int, m.groups())
    assert compared + rejected == 2 and compared == total and exact <= compared
