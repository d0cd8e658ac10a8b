"""The never-execute guarantee: `check` and `explain` read kernel files, they never import or run them.

Each hostile module leaves a trace if it is ever executed (a sentinel file written by top-level code,
by an `os.system` call, or by a kernel body) and one of them raises on import, so an accidental import
would also show up as an exception or a module in `sys.modules`.
"""
from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from kernlint.pipeline.api import lint_paths
from kernlint.cli import main

KERNEL = '''
@triton.jit
def {name}(x_ptr, n, BLOCK: tl.constexpr):
    {body}
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def launch(x, n):
    {name}[(n // 256,)](x, n, BLOCK=256)
'''


def _modules(tmp: Path) -> dict[str, tuple[str, Path]]:
    """module name → (source, sentinel it would create if executed)."""
    s = {k: tmp / f"sentinel_{k}" for k in ("raises", "system", "writes")}
    head = "import triton\nimport triton.language as tl\n"
    return {
        "kl_raises_on_import": (
            f"open({str(s['raises'])!r}, 'w').write('imported')\nraise RuntimeError('imported!')\n" + head
            + KERNEL.format(name="raiser", body="pass"), s["raises"]),
        "kl_os_system": (
            f"import os\nos.system('touch {s['system']}')\n" + head
            + KERNEL.format(name="systemer", body=f"os.system('touch {s['system']}')"), s["system"]),
        "kl_writes_sentinel": (
            head + f"with open({str(s['writes'])!r}, 'w') as _f:\n    _f.write('imported')\n"
            + KERNEL.format(name="writer", body=f"open({str(s['writes'])!r}, 'w')"), s["writes"]),
    }


@pytest.fixture()
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple[Path, Path]]:
    # The files sit on sys.path and in the working directory, where an accidental import would find them.
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    out = {}
    for mod, (src, sentinel) in _modules(tmp_path).items():
        path = tmp_path / f"{mod}.py"
        path.write_text(src)
        out[mod] = (path, sentinel)
    return out


def _assert_untouched(hostile: dict[str, tuple[Path, Path]]) -> None:
    for mod, (_, sentinel) in hostile.items():
        assert not sentinel.exists(), f"{mod} was executed"
        assert mod not in sys.modules, f"{mod} was imported"


def test_lint_paths_never_executes(hostile: dict[str, tuple[Path, Path]]) -> None:
    result = lint_paths([str(p) for p, _ in hostile.values()])
    assert not result.internal_errors
    # the kernels are really analysed (not skipped because the files look hostile)
    assert {k.jit.name for f in result.files for k in f.kernels} == {"raiser", "systemer", "writer"}
    _assert_untouched(hostile)


@pytest.mark.parametrize("command", ["check", "explain"])
def test_cli_never_executes(hostile: dict[str, tuple[Path, Path]], command: str) -> None:
    for path, _ in hostile.values():
        out = io.StringIO()
        code = main([command, str(path), "--no-color"] if command == "check" else [command, str(path)], out)
        assert code in (0, 1), out.getvalue()
    out = io.StringIO()
    main(["check", str(next(iter(hostile.values()))[0].parent), "--output-format", "json"], out)
    _assert_untouched(hostile)
