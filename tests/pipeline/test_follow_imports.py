"""Helpers imported from files outside the run are found the way Python would import them (kernlint/pipeline/imports.py).

fla-core's kernels call `safe_dot` from fla/ops/utils/op.py, a directory the kernel's file is not in, and the
helper is defined in both branches of a module-level `if`. Without the helper body the dot is an element-wise
op: no operand buffers at all (the public benchmark's fla mesa_net kernel: 0 B estimated against Triton's
262,144 B). With it, checking the kernel's file alone gives what checking both files gives.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from kernlint.pipeline.api import Settings, lint_paths
from kernlint.pipeline.imports import MAX_FILES, follow, module_file, search_dirs
from kernlint.pipeline.runner import Options, RunStats, run
from kernlint.pipeline.settings import Overrides, Resolver

OP = '''import os
import triton
import triton.language as tl

IS_BLACKWELL = os.environ.get("ARCH") == "sm_100"

if IS_BLACKWELL:
    @triton.jit
    def safe_dot(a, b):
        return tl.inline_asm_elementwise("mov.f32 $0, $1;", "=r,r", [tl.dot(a, b)], dtype=tl.float32,
                                         is_pure=True, pack=1)
else:
    @triton.jit
    def safe_dot(a, b):
        return tl.dot(a, b)
'''
KERNEL = '''import triton
import triton.language as tl

from pkg.utils.op import safe_dot


@triton.jit
def chunk_state(a_ptr, b_ptr, h_ptr, NT, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    h = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        a = tl.load(a_ptr + i * BM * BK + offs_m[:, None] * BK + offs_k[None, :])
        b = tl.load(b_ptr + i * BK * BN + offs_k[:, None] * BN + offs_n[None, :])
        h += safe_dot(a, b)
    tl.store(h_ptr + offs_m[:, None] * BN + offs_n[None, :], h)
'''
CONFIG = {"BM": 64, "BN": 64, "BK": 64, "num_warps": 4, "num_stages": 3}


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for d in ("pkg", "pkg/utils", "pkg/ops"):
        (tmp_path / d).mkdir(exist_ok=True)
        (tmp_path / d / "__init__.py").write_text("")
    (tmp_path / "pkg/utils/op.py").write_text(OP)
    (tmp_path / "pkg/ops/state.py").write_text(KERNEL)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _smem(result) -> list[int]:  # type: ignore[no-untyped-def]
    return [e.smem.total for f in result.files for k in f.kernels for e in k.estimates if e.config.origin == "cli"]


def test_a_helper_in_another_directory_is_followed(tree: Path) -> None:
    settings = Settings(targets=("h100",), cli_configs=(CONFIG,))
    alone = lint_paths(["pkg/ops/state.py"], settings)
    both = lint_paths(["pkg/ops/state.py", "pkg/utils/op.py"], settings)
    assert [f.path for f in alone.files] == ["pkg/ops/state.py"]          # the helper's file is not reported
    assert not [d for d in alone.diagnostics if d.code == "KL002"]         # the call is modelled
    # 3 stages of a 64×64 and a 64×64 fp16 operand on wgmma: at least 3 × 2 × 8,192 B, same as with both files
    assert _smem(alone) == _smem(both) and _smem(alone)[0] >= 3 * 2 * 64 * 64 * 2


def test_the_command_line_follows_it_and_reports_only_the_given_file(tree: Path) -> None:
    resolver = Resolver(Overrides(targets=("h100",), cli_configs=(CONFIG,)), isolated=True)
    stats = RunStats()
    result = run(["pkg/ops/state.py"], resolver, Options(cache=False, need_estimates=True), stats)
    assert [f.path for f in result.files] == ["pkg/ops/state.py"] and stats.files == 1
    assert not [d for d in result.diagnostics if d.code == "KL002"]
    assert _smem(result)[0] >= 3 * 2 * 64 * 64 * 2


def test_a_changed_helper_file_invalidates_the_cached_result(tree: Path) -> None:
    resolver = Resolver(Overrides(targets=("h100",), cli_configs=(CONFIG,)), isolated=True)
    first = run(["pkg/ops/state.py"], resolver, Options(cache=True), RunStats())
    assert not [d for d in first.diagnostics if d.code == "KL002"]
    # the helper stops being a jit function: the kernel's call is no longer modelled, and the cached
    # result (keyed on the helper file's content too) must not hide that
    (tree / "pkg/utils/op.py").write_text(OP.replace("@triton.jit\n", ""))
    stats = RunStats()
    second = run(["pkg/ops/state.py"], resolver, Options(cache=True), stats)
    assert stats.linted == 1
    assert [d.code for d in second.diagnostics if d.code == "KL002"] == ["KL002"]


def test_standard_modules_and_defined_names_are_not_looked_up() -> None:
    looked: list[str] = []

    def exists(path: str) -> bool:
        looked.append(path)
        return False

    given = [("a/k.py", (frozenset({"a.k.kern", "module:a.k"}),
                         frozenset({"triton.language.dot", "torch.empty", "a.k.kern", "builtins.range",
                                    "module:a.k", "a.h.helper"})))]
    assert follow(given, lambda paths: [], exists) == []
    # only a.h.helper was searched for: as module a.h, then as a re-export from package a
    expected = {os.path.join(d, *tail) for d in search_dirs(["a/k.py"])
                for tail in (("a", "h.py"), ("a", "h", "__init__.py"), ("a.py",), ("a", "__init__.py"))}
    assert looked and set(looked) <= expected


def test_the_module_name_of_a_found_file_must_match() -> None:
    # `x/pkg/m.py` is module pkg.m only when x is not itself a module component (module_name_for keeps
    # identifiers): `src/pkg/m.py` is src.pkg.m, so it does not define pkg.m as seen from `src/run.py`
    assert module_file("pkg.m", ["weird-dir"], lambda p: p == "weird-dir/pkg/m.py") == "weird-dir/pkg/m.py"
    assert module_file("pkg.m", ["src"], lambda p: p == "src/pkg/m.py") is None
    assert search_dirs(["a/b/c.py"]) == ["a/b", "a", ""]


def test_the_search_is_bounded() -> None:
    # every file found references a new module: the run stops at MAX_FILES context files
    def iface(i: int) -> tuple[frozenset[str], frozenset[str]]:
        return frozenset({f"m{i}.f"}), frozenset({f"m{i + 1}.f"})

    def load(paths: list[str]):  # type: ignore[no-untyped-def]
        return [(iface(int(Path(p).stem[1:])), None) for p in paths]

    found = follow([("m0.py", iface(0))], load, exists=lambda p: p.endswith(".py") and "/" not in p)
    assert 0 < len(found) <= MAX_FILES


def test_the_editor_follows_imports_from_the_project_root(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The language server lints the open document by its path relative to the project root (the directory
    of its pyproject.toml), wherever the server runs, so `from pkg.utils.op import safe_dot` finds the helper;
    the result still carries the document's own path."""
    pytest.importorskip("pygls", reason="the LSP server needs the kernlint[lsp] extra")
    from kernlint.lsp.server import KernlintServer, document_name

    (tree / "pyproject.toml").write_text("[tool.kernlint]\ntargets = [\"h100\"]\n")
    elsewhere = tree / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    doc = tree / "pkg/ops/state.py"
    assert document_name(str(doc), str(tree)) == (os.path.join("pkg", "ops", "state.py"), str(tree))
    linted = KernlintServer().lint_text(doc.as_uri(), KERNEL)
    assert linted.result.path == str(doc)
    assert not [d for d in linted.result.diagnostics if d.code == "KL002"]
    # without the helper's file the call is not modelled, and the editor says so
    (tree / "pkg/utils/op.py").unlink()
    linted = KernlintServer().lint_text(doc.as_uri(), KERNEL)
    assert [d.code for d in linted.result.diagnostics if d.code == "KL002"] == ["KL002"]
