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


def run(x, n):
    scale[(1,)](x, n, BLOCK=128)
''',
    "pkg/broken.py": "def oops(:\n",
    "pkg/plain.py": "def f():\n    return 1\n",
    # another vendor's backend directory: a row of its own, and kernlint skips it by default
    "pkg/backends/_ascend/ops.py": '''import triton
import triton.language as tl


@triton.jit
def npu_copy(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))


def run(x):
    npu_copy[(1,)](x, BLOCK=96)
''',
}


def _write(root: Path, files: dict[str, str]) -> list[Path]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return sorted(root / rel for rel in files)


def test_corpus_core_on_a_fixture_dir(tmp_path: Path) -> None:
    from benchmarks import corpus

    _write(tmp_path, FIXTURE)
    report = corpus.Report()
    corpus.lint_tree("fixture", tmp_path, report, corpus.Settings(targets=("h100",)))
    assert not report.crashes
    main, vendor = report.rows["fixture"], report.rows["fixture [ascend]"]
    assert set(report.rows) == {"fixture", "fixture [ascend]"}
    # the census counts launched kernels only: `scale` (decorated through the `from triton import jit`
    # alias), not `_helper` (called by it) nor torch's jit; kernlint finds it
    assert (main.files, main.census, main.found, main.skipped, main.errors) == (4, 1, 1, 0, 0)
    # the vendor file's launched kernel is in the census but skipped (vendor-backends = "skip" by default)
    assert (vendor.files, vendor.census, vendor.found, vendor.skipped) == (1, 1, 0, 1)
    assert report.missed == [] and report.unresolved == []
    assert report.kernels == 1 and report.configs == 1          # the launch's BLOCK=128
    assert report.codes["KL001"] == 1                           # broken.py
    text = corpus.render(report, 5, show_vendors=True)
    assert "internal errors: 0" in text and "fixture [ascend]" in text
    assert "fixture [ascend]" not in corpus.render(report, 5, show_vendors=False)


def test_census_ignores_other_jits(tmp_path: Path) -> None:
    from benchmarks.census import Census

    files = _write(tmp_path, {
        "numba_k.py": "import numba\n@numba.jit\ndef f(): pass\nf[(1,)]()\n",
        "tr_k.py": "import triton as tr\n@tr.jit(debug=True)\ndef f(): pass\nf[(1,)]()\n",
        "unlaunched.py": "import triton\n@triton.jit\ndef g(): pass\n",
        "broken.py": "def broken(:\n",
    })
    assert Census(tmp_path, files).kernels() == {tmp_path / "tr_k.py": {3}}


def test_speed_small() -> None:
    speed = _load("speed")
    assert speed.per_estimate_us(1) > 0
    seconds, estimates = speed.full_sweep(4)
    assert seconds > 0 and estimates >= 4 * 3
    assert speed.cold_start_ms(1) > 0


def test_fuzz_benchmark_tiny() -> None:
    fuzz = _load("fuzz")
    assert fuzz.run(kernels=3, mutations=3, seed=0, out_dir=None) == 0
