"""`triton` / `tl` imported through a project module that re-exports them, as deepspeed 0.19.8 does
(`from deepspeed.ops.triton_ops._triton import triton, tl`, where _triton.py imports triton inside a
`try`), and module names that do not depend on how a path is spelled."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kernlint.pipeline.api import Settings, lint_paths
from kernlint.pipeline.imports import Reexports
from kernlint.core.module_names import package_module_name

SETTINGS = Settings(targets=("h100",))

REEXPORTER = """
try:
    import triton
    import triton.language as tl
    AVAILABLE = True
except Exception:
    triton = None
    tl = None
    AVAILABLE = False
"""

KERNEL = """
from {source} import triton, tl


@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x * 2.0, mask=offs < n)


def run(x, n):
    scale[(n // 256,)](x, n, BLOCK=256)
"""


def _package(root: Path, source: str) -> Path:
    pkg = root / "proj" / "ops" / "triton_ops"
    pkg.mkdir(parents=True)
    for d in (root / "proj", root / "proj" / "ops", pkg):
        (d / "__init__.py").write_text("")
    (pkg / "_triton.py").write_text(REEXPORTER)
    (pkg / "scale.py").write_text(KERNEL.format(source=source))
    return pkg / "scale.py"


def test_absolute_reexport_is_followed_to_triton(tmp_path: Path) -> None:
    path = _package(tmp_path, "proj.ops.triton_ops._triton")
    (f,) = lint_paths([str(path)], SETTINGS).files
    assert [k.jit.name for k in f.kernels] == ["scale"]
    assert f.kernels[0].estimates


def test_relative_reexport_is_followed_to_triton(tmp_path: Path) -> None:
    path = _package(tmp_path, "._triton")
    (f,) = lint_paths([str(path)], SETTINGS).files
    assert [k.jit.name for k in f.kernels] == ["scale"]


def test_reexport_chain_and_a_local_definition(tmp_path: Path) -> None:
    # a.py re-exports triton from b.py; `helper` is defined in b.py, so it stays b's own name
    _package(tmp_path, "._triton")
    pkg = tmp_path / "proj" / "ops" / "triton_ops"
    (pkg / "a.py").write_text("from ._triton import triton as tr\n")
    r = Reexports()
    near = str(pkg / "scale.py")
    assert r.resolve("proj.ops.triton_ops.a.tr.jit", near) == "triton.jit"
    assert r.resolve("proj.ops.triton_ops._triton.tl.load", near) == "triton.language.load"
    assert r.resolve("proj.ops.triton_ops._triton.AVAILABLE", near) == "proj.ops.triton_ops._triton.AVAILABLE"
    assert r.resolve("elsewhere.triton.jit", near) == "elsewhere.triton.jit"   # no such module: as written


def test_module_names_come_from_the_package_structure(tmp_path: Path) -> None:
    path = _package(tmp_path, "._triton")
    assert package_module_name(str(path)) == "proj.ops.triton_ops.scale"
    assert package_module_name(str(path.parent / "__init__.py")) == "proj.ops.triton_ops"
    loose = tmp_path / "script.py"
    loose.write_text("")
    assert package_module_name(os.path.relpath(loose)) == package_module_name(str(loose))


HELPERS = """
import triton
import triton.language as tl


@triton.jit
def twice(x):
    return tl.dot(x, x)
"""

USER = """
import triton
import triton.language as tl
from pkg.helpers import twice


@triton.jit
def square(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.store(x_ptr + offs[:, None] * BLOCK + offs[None, :], twice(x))


def run(x):
    square[(1,)](x, BLOCK=64)
"""


def _check_json(cwd: Path, path: str) -> dict:  # type: ignore[type-arg]
    out = subprocess.run([sys.executable, "-m", "kernlint", "check", "--output-format", "json", "--target", "h100", path],
                         cwd=cwd, capture_output=True, text=True, timeout=300)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout.replace(str(cwd) + os.sep, ""))


def test_the_same_results_however_the_path_is_spelled(tmp_path: Path) -> None:
    # the helper's tl.dot is most of the kernel's shared memory: it is found with either spelling
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(HELPERS)
    (pkg / "mod.py").write_text(USER)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    absolute = _check_json(elsewhere, str(pkg / "mod.py"))
    relative = _check_json(tmp_path, "pkg/mod.py")
    absolute = json.loads(json.dumps(absolute).replace(str(tmp_path) + os.sep, ""))
    assert absolute == relative
    # the helper was resolved with either spelling: no call to it is left unmodelled
    assert "twice" not in json.dumps(relative)


def _estimates(path: str) -> list[tuple[str, str]]:
    (f,) = lint_paths([path], SETTINGS).files
    return [(k.jit.full_name, repr(e)) for k in f.kernels for e in k.estimates]


def test_the_same_estimates_however_the_path_is_spelled(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(HELPERS)
    (pkg / "mod.py").write_text(USER)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    absolute = _estimates(str(pkg / "mod.py"))
    monkeypatch.chdir(tmp_path)
    relative = _estimates("pkg/mod.py")
    assert absolute == relative and absolute[0][0] == "pkg.mod.square"
    # the helper's dot is in the estimate: shared memory for its operands
    (f,) = lint_paths(["pkg/mod.py"], SETTINGS).files
    assert not f.kernels[0].ir.unmodelled


UNRESOLVED = """
from missing_project.triton_utils import triton, tl
import numba


@triton.jit
def copy(x_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))


@numba.jit
def host_sum(xs):
    return sum(xs)


def run(x):
    copy[(4,)](x, BLOCK=128)
"""


def test_an_unresolvable_jit_decorator_is_reported_not_silent(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text(UNRESOLVED)
    (f,) = lint_paths([str(path)], SETTINGS).files
    assert f.kernels == []
    found = [(d.code, d.span.start.line) for d in f.diagnostics if "could not be resolved" in d.message]
    assert found == [("KL002", 7)]          # `copy`, not numba's `host_sum`
    assert "`triton.jit`" in next(d.message for d in f.diagnostics if "could not be resolved" in d.message)
