"""Every benchmark script answers --help with its usage (its docstring) and exit 0, quickly and without
triton, torch or a GPU; bad arguments get a one-line usage and exit 2, never a traceback."""
from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT

SCRIPTS = ["accuracy.py", "cli_speed.py", "corpus.py", "fit_registers.py", "fuzz.py", "fuzz_truth.py",
           "gpu_configs.py", "helion_truth.py", "lint_speed.py", "lsp_speed.py", "probe_register_collapse.py",
           "public_accuracy.py", "record_truth.py", "recommend_speed.py", "speed.py", "gpu/fit_model.py", "gpu/replay.py",
           "gpu/ncu_pairs.py"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("script", SCRIPTS)
def test_help(script: str) -> None:
    out = _run(f"benchmarks/{script}", "--help")
    assert out.returncode == 0, out.stderr[-500:]
    assert "Traceback" not in out.stderr
    assert out.stdout.strip(), script


def test_bad_arguments_are_one_line_and_exit_2() -> None:
    for args in (["benchmarks/gpu_configs.py", "bogus"], ["benchmarks/accuracy.py", "no-such-truth.json"]):
        out = _run(*args)
        assert out.returncode == 2 and "Traceback" not in out.stderr and out.stderr.count("\n") == 1, out.stderr
