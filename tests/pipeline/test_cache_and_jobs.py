"""The result cache (keys, invalidation, CACHEDIR.TAG, clean, concurrent writers) and `-j` workers."""
from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from kernlint.pipeline.api import lint_sources
from kernlint.cli import main
from kernlint.pipeline.runner import Options, RunStats, run
from kernlint.pipeline.settings import Resolver

HELPER = '''import triton
import triton.language as tl


@triton.jit
def twice(x):
    return x * 2
'''
KERNEL = '''import triton
import triton.language as tl

from helpers import twice


@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, twice(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)
'''
LAUNCHER = '''from kern import scale


def go(x, n):
    scale[(n // 1000,)](x, n, BLOCK=1000)
'''


def _tree(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text(HELPER)
    (tmp_path / "kern.py").write_text(KERNEL)
    (tmp_path / "launch.py").write_text(LAUNCHER)
    (tmp_path / "other.py").write_text("x = 1\n")


def lint(stats: RunStats, jobs: int = 1, cache: bool = True):  # type: ignore[no-untyped-def]
    return run(["."], Resolver(), Options(jobs=jobs, cache=cache), stats)


def summary(result) -> list[tuple[str, int, str, str]]:  # type: ignore[no-untyped-def]
    return [(d.span.path, d.span.start.line, d.code, d.message) for d in result.diagnostics]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_warm_run_reads_everything_from_the_cache(tmp_path: Path) -> None:
    _tree(tmp_path)
    cold, warm = RunStats(), RunStats()
    first, second = lint(cold), lint(warm)
    assert cold.linted == 4 and warm.cached == 4 and warm.linted == 0 and warm.parsed == 0
    assert summary(first) == summary(second) and any(d.code == "KL301" for d in first.diagnostics)
    assert second.kernel_count == first.kernel_count == 1 and second.estimate_count == first.estimate_count
    tag = tmp_path / ".kernlint_cache" / "CACHEDIR.TAG"
    assert tag.read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_a_change_invalidates_the_file_and_its_dependents_only(tmp_path: Path) -> None:
    _tree(tmp_path)
    lint(RunStats())
    (tmp_path / "launch.py").write_text(LAUNCHER.replace("BLOCK=1000", "BLOCK=1024"))
    stats = RunStats()
    result = lint(stats)
    # the launcher changed: it and the kernel it launches are re-linted; helpers.py and other.py are not
    assert stats.linted == 2 and stats.cached == 2
    assert not any(d.code == "KL301" for d in result.diagnostics)
    (tmp_path / "other.py").write_text("x = 2\n")
    stats = RunStats()
    lint(stats)
    assert stats.linted == 1
    (tmp_path / "helpers.py").write_text(HELPER.replace("x * 2", "x * 3"))
    stats = RunStats()
    lint(stats)
    # the helper, the kernel that inlines it, and (conservatively: helpers' closure) the launcher
    assert stats.linted == 3 and stats.cached == 1


def test_settings_change_invalidates(tmp_path: Path) -> None:
    _tree(tmp_path)
    lint(RunStats())
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\nignore = ["KL301"]\n')
    stats = RunStats()
    result = lint(stats)
    assert stats.cached == 0 and not result.diagnostics


def test_model_source_is_part_of_the_key() -> None:
    from kernlint.pipeline.cache import _model_files

    names = {p.relative_to(p.parents[1]).as_posix() for p in _model_files()}
    for needed in ("hardware/specs.py", "analysis/registers.py", "lowering/lower.py", "frontend/kernels.py",
                   "rules/shared_memory_overflow.py", "pipeline/suppression.py", "pipeline/settings.py"):
        assert any(n.endswith(needed) for n in names), needed
    assert not any(n.startswith(("report/", "cli/")) or n.endswith("pipeline/cache.py") for n in names)


def test_jobs_give_the_same_result_as_one_process(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    _tree(tmp_path)
    files = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.py"))
    reference = lint_sources([(f, Path(f).read_bytes()) for f in files])
    one, two = lint(RunStats(), jobs=1, cache=False), lint(RunStats(), jobs=3, cache=False)
    assert summary(one) == summary(two) == summary(reference)
    assert [f.path for f in two.files] == files
    assert two.estimate_count == reference.estimate_count


def test_concurrent_processes_share_the_cache(tmp_path: Path) -> None:
    _tree(tmp_path)
    cmd = [sys.executable, "-m", "kernlint", "check", ".", "--output-format", "concise", "-j", "1"]
    procs = [subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 1 for p in procs) and len(set(outs)) == 1
    assert not list((tmp_path / ".kernlint_cache").rglob("*.tmp"))
    assert subprocess.run(cmd, cwd=tmp_path, stdout=subprocess.PIPE, text=True).stdout == outs[0]


def test_clean_and_no_cache(tmp_path: Path) -> None:
    _tree(tmp_path)
    out = io.StringIO()
    assert main(["check", ".", "--no-cache"], out) == 1
    assert not (tmp_path / ".kernlint_cache").exists()
    main(["check", "."], io.StringIO())
    assert (tmp_path / ".kernlint_cache").is_dir()
    assert main(["clean"], out) == 0 and not (tmp_path / ".kernlint_cache").exists()
    (tmp_path / "notacache").mkdir()
    assert main(["clean", "--cache-dir", "notacache"], out) == 2 and (tmp_path / "notacache").exists()


def test_clean_removes_the_caches_of_subprojects_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each `[tool.kernlint]` project keeps its own cache, and `check .` from above creates them: `clean`
    removed only the current directory's (ruff clean removes those below too)."""
    monkeypatch.chdir(tmp_path)
    _tree(tmp_path)
    sub = tmp_path / "sub"
    sub.mkdir()
    _tree(sub)
    (sub / "pyproject.toml").write_text("[tool.kernlint]\n")
    main(["check", "."], io.StringIO())
    assert (tmp_path / ".kernlint_cache").is_dir() and (sub / ".kernlint_cache").is_dir()
    out = io.StringIO()
    assert main(["clean"], out) == 0
    assert not (tmp_path / ".kernlint_cache").exists() and not (sub / ".kernlint_cache").exists()
    assert "Removed .kernlint_cache" in out.getvalue() and "sub/.kernlint_cache" in out.getvalue()
    assert main(["clean"], out) == 0 and "No cache at" in out.getvalue()


def test_a_changed_data_file_of_the_package_invalidates_its_files(tmp_path: Path) -> None:
    """An autotune list read from the package's YAML (frontend.data_configs) is part of the cached result."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "kern.py").write_text(KERNEL)
    (tmp_path / "pkg" / "tune.yaml").write_text("scale:\n  - META: {BLOCK: 64}\n")
    (tmp_path / "other.py").write_text("x = 1\n")
    lint(RunStats())
    stats = RunStats()
    lint(stats)
    assert stats.cached == 3 and stats.linted == 0
    (tmp_path / "pkg" / "tune.yaml").write_text("scale:\n  - META: {BLOCK: 128}\n  - META: {BLOCK: 256}\n")
    stats = RunStats()
    lint(stats)
    # the package's two files again; other.py, outside the package, from the cache
    assert stats.linted == 2 and stats.cached == 1
