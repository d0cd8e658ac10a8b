"""KL406 and `kernlint recommend` agree on kernel ids: a fresh store is clean, an edited kernel is stale."""
from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest

from kernlint.cli import main
from kernlint.recommend.cli import kernel_source
from kernlint.rules.stale_config_store_entry import def_sources

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["vector_add.py", "matmul.py", "rmsnorm.py", "softmax.py"])
def test_def_sources_slice_like_recommend(name: str) -> None:
    path = ROOT / "examples" / name
    for qualname, (line, src) in def_sources(path.read_text()).items():
        assert src == kernel_source(str(path), line), qualname


def _check(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["check", "--no-cache", "--select", "KL406", *argv], out), out.getvalue()


def test_recommend_then_edit_then_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)       # module names come from paths relative to the working directory
    os.mkdir("pkg")
    shutil.copyfile(ROOT / "examples" / "vector_add.py", "pkg/vector_add.py")
    Path("pyproject.toml").write_text('[tool.kernlint]\nconfig-store = "configs/lock.json"\n')
    os.mkdir("configs")
    assert main(["recommend", "pkg/vector_add.py", "--target", "h100", "-o", "configs/lock.json"], io.StringIO()) == 0
    entries = json.loads(Path("configs/lock.json").read_text())["entries"]
    assert entries and all(e["kernel"].startswith("pkg.vector_add:") for e in entries)
    code, out = _check("pkg")
    assert code == 0 and "KL406" not in out
    # an edit to the kernel body makes every entry for it stale, reported on the def line
    src = Path("pkg/vector_add.py").read_text()
    qualname = entries[0]["kernel"].split(":")[1].split("@")[0]
    line = def_sources(src)[qualname][0]
    lines = src.splitlines(keepends=True)
    lines.insert(line, "    # tuned differently now\n")
    Path("pkg/vector_add.py").write_text("".join(lines))
    code, out = _check("pkg", "--output-format", "concise")
    assert code == 1 and f"vector_add.py:{line}:" in out and "KL406" in out
    # trailing whitespace and CRLF are not changes (same normalisation as the shim)
    Path("pkg/vector_add.py").write_bytes(src.replace("\n", "  \r\n").encode())
    assert "KL406" not in _check("pkg")[1]
    # the kernel renamed away: its entries are reported on line 1
    Path("pkg/vector_add.py").write_text(src.replace(f"def {qualname}(", "def renamed_kernel(")
                                         .replace(f"{qualname}[", "renamed_kernel["))
    code, out = _check("pkg", "--output-format", "concise")
    assert code == 1 and "vector_add.py:1:" in out and "no longer" in out


def test_corrupt_store_is_reported_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(ROOT / "examples" / "vector_add.py", "vector_add.py")
    Path("kernlint.lock.json").write_text("{not json")
    code, out = _check("vector_add.py", "--output-format", "concise")
    assert code == 1 and "kernlint.lock.json" in out and "invalid JSON" in out
    # a well-formed file with a bad field: still one KL406, and the file's own findings are kept (it used to
    # be a KL000 internal error per linted file, with every finding lost)
    Path("kernlint.lock.json").write_text('{"schema": "kernlint.lock/1", "entries": [{"kernel": "m:f@x", '
                                          '"target": "h100", "config": {}, "estimate": "n/a"}]}')
    code, out = _check("vector_add.py", "--output-format", "concise")
    assert code == 1 and "KL406" in out and "`estimate` must be an object" in out and "KL000" not in out


_INLINE_AUTOTUNE = '''import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
                          triton.Config({"BLOCK_SIZE": 2048}, num_warps=8)], key=["n"])
@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
'''


def test_editing_the_autotune_decorator_makes_entries_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The recommendation was chosen inside the author's configs: narrowing them (here: dropping the 2048 config)
    must not leave an entry that may hold 2048 looking fresh (store.def_text hashes the decorators too)."""
    monkeypatch.chdir(tmp_path)
    Path("ops.py").write_text(_INLINE_AUTOTUNE)
    assert main(["recommend", "ops.py", "--target", "h100", "-o", "kernlint.lock.json"], io.StringIO()) == 0
    assert json.loads(Path("kernlint.lock.json").read_text())["entries"]
    assert "KL406" not in _check("ops.py")[1]
    narrowed = _INLINE_AUTOTUNE.replace(',\n                          triton.Config({"BLOCK_SIZE": 2048}, num_warps=8)', "")
    assert narrowed != _INLINE_AUTOTUNE
    Path("ops.py").write_text(narrowed)
    code, out = _check("ops.py", "--output-format", "concise")
    assert code == 1 and "KL406" in out
