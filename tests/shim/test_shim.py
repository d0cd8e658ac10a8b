"""The shim applies stored configs (and falls back) without changing results: TRITON_INTERPRET=1 on CPU."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernlint.core.config_store import Entry, kernel_id, read_store, StoreError, write_store

ROOT = Path(__file__).resolve().parents[2]
TRITON_PY = os.environ.get("KERNLINT_TRITON_PYTHON", sys.executable)


def _has(py: str, mod: str) -> bool:
    return subprocess.run([py, "-c", f"import {mod}"], capture_output=True).returncode == 0


def _kid(module: str, qualname: str, path: str) -> str:
    from kernlint.recommend.cli import kernel_source
    import ast
    tree = ast.parse((ROOT / path).read_text())
    line = next(n.lineno for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == qualname)
    return kernel_id(module, qualname, kernel_source(str(ROOT / path), line))


def _store(tmp_path: Path) -> str:
    entries = [
        Entry(_kid("examples.vector_add", "vector_add_kernel", "examples/vector_add.py"), "h100", "*",
              {"kwargs": {"BLOCK_SIZE": 256}, "num_warps": 2, "num_stages": 1}, {}, "test"),
        Entry(_kid("examples.matmul", "matmul_kernel", "examples/matmul.py"), "h100", "*",
              {"kwargs": {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": 4}, "num_warps": 4,
               "num_stages": 2}, {}, "test",
              # outside the autotune list (its BLOCK_M is 64-256): written only after `--verify` passed
              {"in_author_space": False, "outside": {"BLOCK_M": "32", "BLOCK_N": "32", "BLOCK_K": "16"},
               "verified": "verified: same results as the author's config under TRITON_INTERPRET=1"}),
        Entry(_kid("examples.rmsnorm", "rmsnorm_fwd_kernel", "examples/rmsnorm.py"), "h100", "*",
              {"kwargs": {"BLOCK_SIZE": 64}, "num_warps": 2, "num_stages": 1}, {}, "test"),
        Entry("examples.softmax:softmax_kernel@sha256:0000000000000000", "h100", "*",
              {"kwargs": {}, "num_warps": 2, "num_stages": 1}, {}, "stale on purpose"),
        Entry(_kid("examples.vector_add", "vector_add_kernel", "examples/vector_add.py"), "a100", "*",
              {"kwargs": {"BLOCK_SIZE": 8}, "num_warps": 1, "num_stages": 1}, {}, "other GPU: ignored"),
    ]
    path = tmp_path / "kernlint.lock.json"
    write_store(str(path), entries, "test")
    return str(path)


def test_store_roundtrip_and_bad_input(tmp_path: Path) -> None:
    path = _store(tmp_path)
    assert len(read_store(path)) == 5
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(StoreError, match="bad.json"):
        read_store(str(bad))
    bad.write_text(json.dumps({"schema": "other/9", "entries": []}))
    with pytest.raises(StoreError, match="schema"):
        read_store(str(bad))


@pytest.mark.parametrize("doc, message", [
    ({"schema": "kernlint.lock/1", "entries": 5}, "`entries` must be a list, not int"),
    ({"schema": "kernlint.lock/1", "entries": [7]}, "entry 0 is malformed: `entry` must be an object"),
    ({"schema": "kernlint.lock/1", "entries": [{"kernel": "m:f@x", "target": "h100", "config": {"num_warps": "8"}}]},
     "`config.num_warps` must be a positive integer, not '8'"),
    ({"schema": "kernlint.lock/1", "entries": [{"kernel": "m:f@x", "target": "h100", "config": {},
                                                "estimate": "n/a"}]}, "`estimate` must be an object"),
    ({"schema": "kernlint.lock/2", "entries": []}, "unsupported config store version 'kernlint.lock/2'"),
])
def test_every_malformed_store_is_one_store_error_naming_the_field(tmp_path: Path, doc: object, message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(StoreError) as info:
        read_store(str(bad))
    assert str(bad) in str(info.value) and message in str(info.value)


def test_deeply_nested_json_is_a_store_error(tmp_path: Path) -> None:
    bad = tmp_path / "deep.json"
    bad.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(StoreError, match="nested too deeply"):
        read_store(str(bad))


@pytest.mark.skipif(not all(_has(TRITON_PY, m) for m in ("torch", "triton", "numpy")),
                    reason="needs triton, torch (CPU) and numpy for TRITON_INTERPRET=1")
def test_shim_under_interpreter_keeps_results(tmp_path: Path) -> None:
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT))
    proc = subprocess.run([TRITON_PY, str(ROOT / "tests/shim/interp_child.py"), _store(tmp_path)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@")), None)
    assert line, proc.stderr[-3000:]
    out = json.loads(line[2:])
    assert max(out["err"].values()) < 1e-2, out
    events = {(e[0], e[1]) for e in out["log"]}
    assert ("applied", "vector_add_kernel") in events            # callable grid: block size changed
    assert ("applied", "matmul_kernel") in events                # autotuner: configs replaced, no benchmark
    assert ("skip", "rmsnorm_fwd_kernel") in events              # fixed grid, other block sizes: not applied


def _plain_kernel(x):  # type: ignore[no-untyped-def]  # stands in for a JITFunction's `fn`
    return x


def test_entries_only_for_another_gpu_say_so_once(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from kernlint.shim import Shim
    kid = kernel_id(__name__, "_plain_kernel", "def _plain_kernel(x):\n    return x\n")
    shim = Shim([Entry(kid, "a100", "*", {"kwargs": {}, "num_warps": 2}, {}, "")], target="h100", path="lock.json")
    shim._index = {"_plain_kernel": shim.entries}
    with caplog.at_level(logging.DEBUG, logger="kernlint.shim"):
        assert shim._build_plan(_plain_kernel) is None and shim._build_plan(_plain_kernel) is None
    assert [e[0] for e in shim.log] == ["other-gpu"]        # once, however often kernels are planned
    assert "lock.json has entries for a100, not for this GPU (h100)" in shim.log[0][2]
    assert sum("ignored on h100" in r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG) == 2
    assert not any(r.getMessage().startswith("kernlint.shim:") for r in caplog.records)  # logger name says it


def test_a_bad_mode_in_the_environment_installs_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import kernlint.shim as shim_mod
    calls: list[tuple[str, str]] = []
    monkeypatch.setattr(shim_mod, "install", lambda path, mode="replace", target=None: calls.append((path, mode)))
    monkeypatch.setenv("KERNLINT_CONFIGS", str(tmp_path / "lock.json"))
    monkeypatch.setenv("KERNLINT_SHIM_MODE", " Seed ")
    shim_mod.install_from_env()
    assert calls == [(str(tmp_path / "lock.json"), "seed")]     # case and spaces forgiven
    monkeypatch.setenv("KERNLINT_SHIM_MODE", "sede")
    inert = shim_mod.install_from_env()
    assert calls == [(str(tmp_path / "lock.json"), "seed")] and inert is not None
    assert [e[0] for e in inert.log] == ["settings-error"] and "'sede'" in inert.log[0][2]


@pytest.mark.skipif(not all(_has(TRITON_PY, m) for m in ("torch", "triton", "numpy")),
                    reason="needs triton, torch (CPU) and numpy for TRITON_INTERPRET=1")
def test_shim_never_changes_block_sizes_under_heuristics(tmp_path: Path) -> None:
    """The review's heap corruption: the JIT-level wrapper set BLOCK=512 on every config the autotuner
    benchmarked, after @triton.heuristics had computed EVEN (no mask) for BLOCK=128."""
    kernels = "tests/shim/runtime_kernels.py"
    path = tmp_path / "heur.lock.json"
    write_store(str(path), [Entry(_kid("runtime_kernels", name, kernels), "h100", "*",
                                  {"kwargs": {"BLOCK": 512}, "num_warps": 2, "num_stages": 1}, {}, "test",
                                  {"in_author_space": False, "outside": {"BLOCK": "128/256"}})
                            for name in ("scale_even_autotuned", "scale_even")], "test")
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests/shim")]))
    proc = subprocess.run([TRITON_PY, str(ROOT / "tests/shim/heur_interp_child.py"), str(path)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@")), None)
    assert line, proc.stderr[-3000:]
    out = json.loads(line[2:])
    assert out.pop("device") == "cpu"
    for name, sc in out.items():
        assert sc["guard_written"] == 0 and sc["wrong"] == 0, (name, sc)
        assert all(even == (4224 % block == 0) for block, even in sc["seen"]), (name, sc["seen"])
    assert {b for b, _ in out["autotune_seed"]["seen"]} == {512, 128, 256}
    assert [e[0] for e in out["autotune_seed"]["log"]] == ["applied"]
    assert out["heuristics_only"]["seen"] == [[128, True]]
    assert [e[0] for e in out["heuristics_only"]["log"]] == ["skip"]
