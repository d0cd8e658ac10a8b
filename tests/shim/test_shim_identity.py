"""The shim names a live kernel as `kernlint recommend` and KL406 name it in the store: the same source slice
(trailing comment lines excluded), `outer.<locals>.k` as `outer.k`, and a `__main__` kernel by its file.
No Triton needed: plain functions stand in for JIT functions (the shim reads `.fn` when there is one)."""
from __future__ import annotations

import importlib.util
import io
import logging
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from kernlint.cli import main
from kernlint.frontend.kernels import module_name_for
from kernlint.recommend.cli import kernel_source as recommend_source
from kernlint.core.config_store import Entry, kernel_id, source_hash, split_id
from kernlint.rules.stale_config_store_entry import def_sources

ROOT = Path(__file__).resolve().parents[2]

KERNELS = '''import triton
import triton.language as tl


@triton.jit
def trailing(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)
    # TODO: vectorise
    # (comment lines after the last statement)


@triton.jit(
    do_not_specialize=["n"],
)
def decorated(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n))  # end


class Ops:
    @staticmethod
    @triton.jit
    def method(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
        # trailing, indented


def make():
    @triton.jit
    def local(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
        # trailing in a closure
    return local


@triton.jit
def docstring_def(x_ptr, BLOCK: tl.constexpr):
    s = """
def fake():
"""
    tl.store(x_ptr + tl.arange(0, BLOCK), 1)
'''


class _Jit:
    """What the shim reads of a JITFunction: the Python function in `.fn`."""

    def __init__(self, fn: Any = None, **_: Any) -> None:
        self.fn = fn

    def __call__(self, fn: Any) -> _Jit:      # `@triton.jit(do_not_specialize=...)`
        return _Jit(fn)


def _fake_triton(monkeypatch: pytest.MonkeyPatch) -> None:
    triton = types.ModuleType("triton")
    triton.jit = _Jit  # type: ignore[attr-defined]
    tl = types.ModuleType("triton.language")
    tl.constexpr = int  # type: ignore[attr-defined]
    triton.language = tl  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "triton", triton)
    monkeypatch.setitem(sys.modules, "triton.language", tl)


def _load(path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    _fake_triton(monkeypatch)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, mod)
    spec.loader.exec_module(mod)
    return mod


def test_shim_hashes_what_recommend_and_kl406_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kernlint.shim import _fn_source            # the shim's source of a live kernel
    path = tmp_path / "kmod.py"
    path.write_text(KERNELS)
    mod = _load(path, "kmod", monkeypatch)
    defs = def_sources(KERNELS)
    live = {"trailing": mod.trailing, "decorated": mod.decorated, "Ops.method": mod.Ops.method,
            "make.local": mod.make(), "docstring_def": mod.docstring_def}
    for qualname, k in live.items():
        line, kl406 = defs[qualname]
        want = recommend_source(str(path), line)
        assert kl406 == want, qualname
        assert source_hash(_fn_source(k)) == source_hash(want), qualname   # trailing comments: not stale


def test_kernel_defined_in_a_function_is_matched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kernlint.shim import Shim
    path = tmp_path / "kmod2.py"
    path.write_text(KERNELS)
    mod = _load(path, "kmod2", monkeypatch)
    local = mod.make()
    assert local.fn.__qualname__ == "make.<locals>.local"
    line = def_sources(KERNELS)["make.local"][0]
    e = Entry(kernel_id("kmod2", "make.local", recommend_source(str(path), line)), "h100", "*",
              {"kwargs": {"BLOCK": 256}, "num_warps": 2}, {}, "")
    shim = Shim([e], target="h100", path="lock.json")
    shim._index = {"make.local": [e]}           # what install() indexes: recommend's qualname
    plan = shim._build_plan(local)
    assert plan is not None and plan.name == "make.local" and plan.pick({}) is e
    assert shim.log == []


def test_kernel_of_the_main_script_is_matched_by_its_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`python scripts/vadd.py`: the kernel's __module__ is __main__; recommend named it `scripts.vadd`."""
    from kernlint.shim import Shim
    (tmp_path / "scripts").mkdir()
    path = tmp_path / "scripts" / "vadd.py"
    path.write_text(KERNELS)
    monkeypatch.chdir(tmp_path)
    ns: dict[str, Any] = {"__name__": "__main__"}
    _fake_triton(monkeypatch)
    exec(compile(KERNELS, str(path), "exec"), ns)
    k = ns["trailing"]
    assert k.fn.__module__ == "__main__"
    line = def_sources(KERNELS)["trailing"][0]
    e = Entry(kernel_id("scripts.vadd", "trailing", recommend_source(str(path), line)), "h100", "*",
              {"kwargs": {}, "num_warps": 2}, {}, "")
    monkeypatch.setattr(sys.modules["__main__"], "__spec__", None)   # run as a file, not with -m
    for entry_module in ("scripts.vadd", "vadd"):                    # recommend run from the root or scripts/
        e.kernel = entry_module + e.kernel[e.kernel.index(":"):]
        shim = Shim([e], target="h100", path="lock.json")
        shim._index = {"trailing": [e]}
        assert shim._build_plan(k) is not None, entry_module
    e.kernel = "other.vadd" + e.kernel[e.kernel.index(":"):]       # another file's kernel of that name
    shim = Shim([e], target="h100", path="lock.json")
    shim._index = {"trailing": [e]}
    assert shim._build_plan(k) is None


def test_main_kernel_without_a_file_says_why(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    from kernlint.shim import Shim
    ns: dict[str, Any] = {"__name__": "__main__"}
    exec(compile("def k(x):\n    return x\n", "<stdin>", "exec"), ns)
    monkeypatch.setattr(sys.modules["__main__"], "__spec__", None)
    e = Entry("vadd:k@sha256:0000000000000000", "h100", "*", {"kwargs": {}}, {}, "")
    shim = Shim([e], target="h100", path="lock.json")
    shim._index = {"k": [e]}
    with caplog.at_level(logging.INFO, logger="kernlint.shim"):
        assert shim._build_plan(ns["k"]) is None
    assert [x[0] for x in shim.log] == ["no-module"] and "__main__" in shim.log[0][2]


@pytest.mark.parametrize("path", ["examples/sub/x.py", "./a/b/__init__.py", "/tmp/my-proj/pkg/ops.py",
                                  "a\\b\\c.py", "x.py", "", "pkg/1bad/mod.py"])
def test_module_name_for_path_matches_the_frontend(path: str) -> None:
    from kernlint.core.module_names import module_name_for as module_name_for_path   # the shim's (no libcst)
    assert module_name_for_path(path) == module_name_for(path)


def _check(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["check", "--no-cache", "--select", "KL406", "--output-format", "concise", *argv], out), out.getvalue()


def test_kl406_finds_a_local_kernel_stored_with_python_qualname(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("kmod.py").write_text(KERNELS)
    line, src = def_sources(KERNELS)["make.local"]
    kid = kernel_id("kmod", "make.<locals>.local", src)          # a store written with Python's qualname
    assert split_id(kid)[1] == "make.<locals>.local"
    store = '{"schema": "kernlint.lock/1", "entries": [{"kernel": "%s", "target": "h100", "config": {}}]}' % kid
    Path("kernlint.lock.json").write_text(store)
    code, out = _check("kmod.py")
    assert code == 0 and "KL406" not in out, out                # found, and fresh
    Path("kmod.py").write_text(KERNELS.replace("+ 1)\n        # trailing in", "+ 2)\n        # trailing in"))
    code, out = _check("kmod.py")
    assert code == 1 and f"kmod.py:{line}:" in out and "no longer" not in out, out


def test_recommend_then_shim_agree_on_a_kernel_ending_in_comments(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end: `kernlint recommend -o` on a copy of an example whose kernel ends in comment lines, then
    the shim's hash of the live kernel is the entry's (it read as stale right after recommend)."""
    from kernlint.shim import _fn_source
    monkeypatch.chdir(tmp_path)
    src = (ROOT / "examples" / "vector_add.py").read_text()
    src = src.replace("    tl.store(out_ptr + offsets, x + y, mask=mask)\n",
                      "    tl.store(out_ptr + offsets, x + y, mask=mask)\n    # TODO: fuse the scale\n")
    assert "# TODO: fuse the scale" in src
    Path("va.py").write_text(src)
    assert main(["recommend", "va.py", "--target", "h100", "-o", "lock.json"], io.StringIO()) == 0
    Path("kernlint.lock.json").write_text(Path("lock.json").read_text())
    assert "KL406" not in _check("va.py")[1]
    torch = types.ModuleType("torch")
    torch.Tensor = object  # type: ignore[attr-defined]   # the launcher's annotations are evaluated at import
    monkeypatch.setitem(sys.modules, "torch", torch)
    mod = _load(tmp_path / "va.py", "va", monkeypatch)
    import json
    (entry,) = {e["kernel"] for e in json.loads(Path("lock.json").read_text())["entries"]}
    assert source_hash(_fn_source(mod.vector_add_kernel)) == split_id(entry)[2]



def test_same_named_kernels_in_two_directories_do_not_make_each_other_stale(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """a/ops.py and b/ops.py define different `scale` kernels; recommend stored `a.ops:scale@…` and `b.ops:scale@…`.
    Module ids match by suffix, so from inside a/ the module `ops` matched b's entry too: KL406 reported a's
    unchanged kernel as stale, and the shim refused a's fresh entry."""
    from kernlint.shim import Shim
    body = KERNELS.split("\n\n\n@triton.jit(")[0]   # imports + `trailing`
    for sub, factor in (("a", "2"), ("b", "3")):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "ops.py").write_text(body.replace("* 2)", f"* {factor})"))
    line = def_sources(body)["trailing"][0]
    entries = [Entry(kernel_id(f"{sub}.ops", "trailing", recommend_source(str(tmp_path / sub / "ops.py"), line)),
                     "h100", "*", {"kwargs": {"BLOCK": 256}, "num_warps": 2}, {}, "") for sub in ("a", "b")]
    assert entries[0].kernel.split("@")[1] != entries[1].kernel.split("@")[1]
    store = {"schema": "kernlint.lock/1", "generator": "test", "entries": [
        {"kernel": e.kernel, "target": e.target, "bucket": e.bucket, "config": e.config, "estimate": {},
         "rationale": ""} for e in entries]}
    import json
    (tmp_path / "a" / "kernlint.lock.json").write_text(json.dumps(store))
    monkeypatch.chdir(tmp_path / "a")
    out = io.StringIO()
    assert main(["check", "ops.py", "--select", "KL406", "--no-cache"], out) == 0, out.getvalue()
    # an edit to a's kernel is still stale
    (tmp_path / "a" / "ops.py").write_text(body.replace("* 2)", "* 4)"))
    out = io.StringIO()
    assert main(["check", "ops.py", "--select", "KL406", "--no-cache", "--output-format", "concise"], out) == 1
    assert out.getvalue().count("KL406") == 1
    # the shim, with the kernel imported as module `ops`: a's entry applies, b's is passed over
    (tmp_path / "a" / "ops.py").write_text(body.replace("* 2)", "* 2)"))
    mod = _load(tmp_path / "a" / "ops.py", "ops", monkeypatch)
    shim = Shim(entries, target="h100", path="lock.json")
    shim._index = {"trailing": entries}
    with caplog.at_level(logging.DEBUG, logger="kernlint.shim"):
        plan = shim._build_plan(mod.trailing)
    assert plan is not None and plan.pick({}) is entries[0]
    assert not [r for r in shim.log if "stale" in str(r)]
