"""Shim safety (issue 7 item 4) on Triton's real runtime path: a corrupt store, a stale entry, a recommendation
that fails to compile, two threads launching the same kernel → the kernel always runs with a valid config and
the fallback / skip is logged exactly once. Child process + fake driver as in test_shim_runtime.py
(safety_child.py); runs in every Python of $KERNLINT_TRITON_PYTHONS that can import triton, skips the others.
    KERNLINT_TRITON_PYTHONS=/work/venv-cal/bin/python:/work/venv-t34/bin/python pytest tests/shim/test_shim_safety.py
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kernlint.core.config_store import SCHEMA, write_store

from test_shim_runtime import HERE, PYTHONS, ROOT, _entry, _kid, _usable

AUTHOR_ADD = (1024, 4)                  # add_kernel launched with BLOCK_SIZE=1024, num_warps=4
AUTHOR_AUTO = (1024, 4)                 # add_kernel_autotuned's single config
CORRUPT = ["not_json.json", "wrong_schema.json", "list.json", "bad_entry.json", "missing.json",
           "entries_int.json", "estimate_str.json", "deep.json", "warps_bool.json",
           # issue 29: each of the first two raised into the user's program (ValueError out of install(),
           # TypeError at the launch of an autotuned kernel)
           "huge_int.json", "kwargs_list.json", "kwargs_object.json", "warps_huge.json", "kernel_int.json",
           "bucket_list.json", "truncated.json", "huge_file.json", "fifo.json"]


def _write_stores(d: Path) -> None:
    add, auto, rows = _kid("add_kernel"), _kid("add_kernel_autotuned"), _kid("row_sum_kernel")
    write_store(str(d / "fresh.json"), [_entry(add, {"BLOCK_SIZE": 256}, 2, 1),
                                        _entry(auto, {"BLOCK_SIZE": 128}, 1, 2, outside="1024"),
                                        _entry(rows, {"BLOCK": 64}, 8, 1)], "test")   # OutOfResources here
    write_store(str(d / "stale.json"), [_entry(add.rsplit("@", 1)[0] + "@sha256:0000000000000000",
                                               {"BLOCK_SIZE": 256}, 2, 1)], "test")
    write_store(str(d / "failing.json"), [_entry(add, {"BLOCK_SIZE": 1000}, 4, 1),    # not a power of 2:
                                          _entry(auto, {"BLOCK_SIZE": 1000}, 4, 3, outside="1024")], "test")
    (d / "not_json.json").write_text('{"schema": "kernlint.lock/1", "entries": [')      # truncated write
    (d / "wrong_schema.json").write_text(json.dumps({"schema": "someone-else/3", "entries": []}))
    (d / "list.json").write_text(json.dumps([{"kernel": "x", "target": "h100"}]))
    (d / "bad_entry.json").write_text(json.dumps({"schema": SCHEMA, "entries": [{"kernel": "m:f@sha256:0"}]}))
    # each used to escape as TypeError / ValueError / RecursionError from install() (review of 2026-11-30)
    (d / "entries_int.json").write_text(json.dumps({"schema": SCHEMA, "entries": 5}))
    good = _entry(add, {"BLOCK_SIZE": 256}, 2, 1).to_json()
    (d / "estimate_str.json").write_text(json.dumps({"schema": SCHEMA, "entries": [{**good, "estimate": "n/a"}]}))
    (d / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (d / "warps_bool.json").write_text(json.dumps({"schema": SCHEMA, "entries": [
        {**good, "config": {**good["config"], "num_warps": True}}]}))
    text = json.dumps({"schema": SCHEMA, "entries": [good]})
    (d / "huge_int.json").write_text(text.replace('"num_warps": 2', '"num_warps": ' + "9" * 5000))
    for name, kwargs in (("kwargs_list.json", {"BLOCK_SIZE": [256, 512]}), ("kwargs_object.json", {"BLOCK_SIZE": {}})):
        (d / name).write_text(json.dumps({"schema": SCHEMA, "entries": [{**good, "config": {**good["config"],
                                                                                          "kwargs": kwargs}}]}))
    (d / "warps_huge.json").write_text(json.dumps({"schema": SCHEMA, "entries": [
        {**good, "config": {**good["config"], "num_warps": 2 ** 40}}]}))
    (d / "kernel_int.json").write_text(json.dumps({"schema": SCHEMA, "entries": [{**good, "kernel": 7}]}))
    (d / "bucket_list.json").write_text(json.dumps({"schema": SCHEMA, "entries": [{**good, "bucket": ["*"]}]}))
    (d / "truncated.json").write_text(text[: len(text) // 2])
    with open(d / "huge_file.json", "w") as fh:   # over the 16 MB store limit: refused unread
        fh.write('{"schema": "kernlint.lock/1", "entries": [], "pad": "')
        fh.write("x" * (17 * 1024 * 1024) + '"}')
    os.mkfifo(d / "fifo.json")   # would block a plain open() forever


@pytest.fixture(scope="module", params=PYTHONS)
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    py = request.param
    if not _usable(py):
        pytest.skip(f"{py} cannot import triton")
    tmp = tmp_path_factory.mktemp("shim_safety")
    _write_stores(tmp)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(PYTHONPATH=os.pathsep.join([str(ROOT), str(HERE)]), TRITON_CACHE_DIR=str(tmp / "cache"),
               TRITON_DEFAULT_FP_FUSION="1")
    proc = subprocess.run([py, str(HERE / "safety_child.py"), str(tmp)], capture_output=True, text=True,
                          env=env, cwd=tmp, timeout=900)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@")), None)
    assert line, proc.stderr[-4000:]
    return json.loads(line[2:])  # type: ignore[no-any-return]


def _ran(sc: dict[str, Any], expected: tuple[int, int], count: int) -> None:
    assert sc["errors"] == []
    got = [(lc["constexprs"]["BLOCK_SIZE"], lc["num_warps"]) for lc in sc["launches"]]
    assert got == [expected] * count, got


def _once(sc: dict[str, Any], event: str) -> None:
    """Exactly one shim-log entry and one logging record for `event`, and no other warning."""
    assert [e[0] for e in sc["log"]].count(event) == 1, sc["log"]
    assert [r[1] for r in sc["records"]].count(event) == 1, sc["records"]
    others = [r for r in sc["records"] if r[0] in ("WARNING", "ERROR") and r[1] != event]
    assert others == [], others


@pytest.mark.parametrize("store", CORRUPT)
def test_corrupt_store_names_file_and_changes_nothing(run: dict[str, Any], store: str) -> None:
    sc = run["corrupt:" + store]
    _ran(sc, AUTHOR_ADD, 3)                                  # three launches, all with the author's config
    _once(sc, "store-error")
    (rec,) = sc["records"]
    assert rec[0] == "ERROR" and store in rec[2], rec       # the message names the file
    assert sc["untouched_while_installed"] and sc["restored"]   # no Triton attribute was wrapped


def test_stale_entry_ignored_and_logged_once(run: dict[str, Any]) -> None:
    sc = run["stale"]
    _ran(sc, AUTHOR_ADD, 3)
    _once(sc, "stale")
    assert not any(e[0] == "applied" for e in sc["log"])


def test_failing_recommendation_plain_launch(run: dict[str, Any]) -> None:
    sc = run["compile_fail_plain"]
    _ran(sc, AUTHOR_ADD, 3)
    _once(sc, "fallback")
    assert not any(e[0] == "applied" for e in sc["log"])


def test_failing_recommendation_autotune(run: dict[str, Any]) -> None:
    sc = run["compile_fail_autotune"]
    _ran(sc, AUTHOR_AUTO, 3)
    _once(sc, "fallback")


def test_out_of_resources_repeated(run: dict[str, Any]) -> None:
    sc = run["out_of_resources"]
    assert sc["errors"] == [] and [lc["num_warps"] for lc in sc["launches"]] == [1, 1, 1]
    _once(sc, "fallback")
    assert sc["restored"]


def test_two_threads_applied(run: dict[str, Any]) -> None:
    sc = run["threads_applied"]
    _ran(sc, (256, 2), 2)
    _once(sc, "applied")


def test_two_threads_fallback(run: dict[str, Any]) -> None:
    sc = run["threads_fallback"]
    _ran(sc, AUTHOR_ADD, 2)
    _once(sc, "fallback")


def test_two_threads_stale(run: dict[str, Any]) -> None:
    sc = run["threads_stale"]
    _ran(sc, AUTHOR_ADD, 2)
    _once(sc, "stale")


def test_two_threads_autotune(run: dict[str, Any]) -> None:
    sc = run["threads_autotune"]
    assert sc["errors"] == []
    got = [(lc["constexprs"]["BLOCK_SIZE"], lc["num_warps"]) for lc in sc["launches"]]
    assert got == [(128, 1)] * 2, got
    _once(sc, "applied")
