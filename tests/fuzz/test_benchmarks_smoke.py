"""Smoke tests for benchmarks/fuzz.py, corpus.py and speed.py at tiny sizes (no download, no Triton)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from conftest import ROOT


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


FIXTURE = {
    "pkg/__init__.py": "",
    "pkg/ops.py": '''import triton
import triton.language as tl
from triton import jit as tjit


@triton.jit
def _helper(x):
    return x * 2


@tjit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, _helper(x) + tl.sort(x), mask=offs < n)


@torch.jit.script
def not_a_kernel(x):
    return x
''',
    "pkg/broken.py": "def oops(:\n",
    "pkg/plain.py": "def f():\n    return 1\n",
}


def test_corpus_core_on_a_fixture_dir(tmp_path: Path) -> None:
    corpus = _load("corpus")
    for rel, text in FIXTURE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    report = corpus.Report()
    corpus.lint_tree("fixture", tmp_path, report, corpus.Settings(targets=("h100",)))
    assert report.files == 4 and not report.crashes
    assert report.census == 2 and report.found == 2          # @triton.jit and the `from triton import jit` alias
    assert report.kernels >= 1 and report.configs >= 1
    assert report.codes["KL001"] == 1                         # broken.py
    text = corpus.render(report, 5)
    assert "crashes (internal errors): 0" in text and "files/s" in text


def test_census_ignores_other_jits() -> None:
    corpus = _load("corpus")
    assert corpus.census("import numba\n@numba.jit\ndef f(): pass\n") == set()
    assert corpus.census("import triton as tr\n@tr.jit(debug=True)\ndef f(): pass\n") == {3}
    assert corpus.census("def broken(:\n") is None


def test_speed_small() -> None:
    speed = _load("speed")
    assert speed.per_estimate_us(1) > 0
    seconds, estimates = speed.full_sweep(4)
    assert seconds > 0 and estimates >= 4 * 3
    assert speed.cold_start_ms(1) > 0


def test_fuzz_benchmark_tiny() -> None:
    fuzz = _load("fuzz")
    assert fuzz.run(kernels=3, mutations=3, seed=0, out_dir=None) == 0
