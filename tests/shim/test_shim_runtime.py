"""The shim on Triton's real runtime path: `JITFunction.run` / `Autotuner.run` bind, specialise and compile
(sm_90, bundled ptxas) for each launch; a fake driver (runtime_child.py) records what would be launched.

Runs in every Python listed in $KERNLINT_TRITON_PYTHONS (os.pathsep-separated; default: this one) that can
import triton; the others are skipped. E.g.
    KERNLINT_TRITON_PYTHONS=/work/venv-cal/bin/python:/work/venv-triton36/bin/python pytest tests/shim
"""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kernlint.recommend.cli import kernel_source
from kernlint.core.config_store import Entry, kernel_id, write_store

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PYTHONS = [p for p in os.environ.get("KERNLINT_TRITON_PYTHONS", sys.executable).split(os.pathsep) if p]
KERNELS = HERE / "runtime_kernels.py"


def _kid(qualname: str, path: Path = KERNELS, module: str = "runtime_kernels") -> str:
    """The kernel id `kernlint recommend` writes (its own `kernel_source`, not the shim's)."""
    tree = ast.parse(path.read_text())
    name = qualname.rsplit(".", 1)[-1]
    line = next(n.lineno for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)
    return kernel_id(module, qualname, kernel_source(str(path), line))


def _entry(kid: str, kwargs: dict[str, int], warps: int, stages: int, outside: str | None = None) -> Entry:
    # `outside`: the author's values of the block size, for an entry recommend marked outside the author's
    # space (and checked); the shim holds an unmarked entry to the autotuner's configs (shim/author_space.py)
    space = None if outside is None else {"in_author_space": False, "outside": {next(iter(kwargs)): outside}}
    return Entry(kid, "h100", "*", {"kwargs": kwargs, "num_warps": warps, "num_stages": stages}, {}, "test",
                 space)


def _stores(tmp_path: Path) -> tuple[str, str, str]:
    fresh = [_entry(_kid("add_kernel"), {"BLOCK_SIZE": 256}, 2, 1),
             _entry(_kid("add_kernel_autotuned"), {"BLOCK_SIZE": 128}, 1, 2, outside="1024"),
             _entry(_kid("row_sum_kernel"), {"BLOCK": 64}, 8, 1),         # needs smem: OutOfResources here
             _entry(_kid("scale_even_autotuned"), {"BLOCK": 512}, 2, 1, outside="128/256"),
             _entry(_kid("scale_even"), {"BLOCK": 512}, 2, 1),
             _entry(_kid("add_kernel_commented"), {"BLOCK_SIZE": 256}, 2, 1),
             _entry(_kid("make_local_kernel.local_add"), {"BLOCK_SIZE": 256}, 2, 1)]   # as recommend names it
    other = [_entry(_kid("add_kernel").rsplit("@", 1)[0] + "@sha256:0000000000000000", {"BLOCK_SIZE": 256}, 2, 1),
             _entry(_kid("add_kernel_autotuned"), {"BLOCK_SIZE": 1000}, 4, 3, outside="1024")]   # no compile
    # an entry recommend wrote as inside the author's configs, which no longer hold its block size (the
    # author narrowed a config list defined outside the decorator: the kernel hash cannot see that)
    narrowed = [_entry(_kid("add_kernel_autotuned"), {"BLOCK_SIZE": 128}, 1, 2)]
    paths = (tmp_path / "fresh.json", tmp_path / "other.json", tmp_path / "narrowed.json")
    for path, entries in zip(paths, (fresh, other, narrowed)):
        write_store(str(path), entries, "test")
    return str(paths[0]), str(paths[1]), str(paths[2])


def _usable(py: str) -> bool:
    return subprocess.run([py, "-c", "import triton"], capture_output=True).returncode == 0


@pytest.fixture(scope="module", params=PYTHONS)
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    py = request.param
    if not _usable(py):
        pytest.skip(f"{py} cannot import triton")
    tmp = tmp_path_factory.mktemp("shim_runtime")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(PYTHONPATH=os.pathsep.join([str(ROOT), str(HERE)]), TRITON_CACHE_DIR=str(tmp / "cache"),
               TRITON_DEFAULT_FP_FUSION="1")
    proc = subprocess.run([py, str(HERE / "runtime_child.py"), *_stores(tmp)], capture_output=True, text=True,
                          env=env, cwd=tmp, timeout=900)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@")), None)
    assert line, proc.stderr[-4000:]
    return json.loads(line[2:])  # type: ignore[no-any-return]


def _events(scenario: dict[str, Any]) -> set[tuple[str, str]]:
    return {(e[0], e[1]) for e in scenario["log"]}


def test_plain_launch_callable_grid_gets_options_and_block_sizes(run: dict[str, Any]) -> None:
    (launch,) = run["callable_grid"]["launches"]
    assert launch["num_warps"] == 2 and launch["num_stages"] == 1
    assert launch["constexprs"]["BLOCK_SIZE"] == 256
    assert launch["grid"][0] == 4096 // 256                   # the callable grid saw the new block size
    assert ("applied", "add_kernel") in _events(run["callable_grid"])


def test_plain_launch_fixed_grid_other_block_sizes_skips_the_entry(run: dict[str, Any]) -> None:
    # The block sizes cannot change (the grid was computed for 1024) and the recommended num_warps=2 was
    # ranked for BLOCK_SIZE=256: the pair (1024, 2) was never evaluated, so the author's config runs whole.
    (launch,) = run["fixed_grid"]["launches"]
    assert (launch["num_warps"], launch["constexprs"]["BLOCK_SIZE"], launch["grid"][0]) == (4, 1024, 4)
    log = run["fixed_grid"]["log"]
    assert [e[0] for e in log] == ["skip"], log
    assert "BLOCK_SIZE=256" in log[0][2] and "BLOCK_SIZE=1024" in log[0][2] and "fixed" in log[0][2]


def test_plain_launch_fixed_grid_same_block_sizes_gets_options(run: dict[str, Any]) -> None:
    (launch,) = run["fixed_grid_same_blocks"]["launches"]
    assert (launch["num_warps"], launch["num_stages"], launch["constexprs"]["BLOCK_SIZE"]) == (2, 1, 256)
    assert [e[0] for e in run["fixed_grid_same_blocks"]["log"]] == ["applied"]


def test_autotune_configs_swapped(run: dict[str, Any]) -> None:
    (launch,) = run["autotune"]["launches"]                   # one config: no benchmarking
    assert (launch["constexprs"]["BLOCK_SIZE"], launch["num_warps"], launch["num_stages"]) == (128, 1, 2)
    assert ("applied", "add_kernel_autotuned") in _events(run["autotune"])


def test_out_of_resources_falls_back_to_author_config(run: dict[str, Any]) -> None:
    assert run["row_sum_w8_unshimmed"] == "OutOfResources"     # the recommendation really cannot load here
    launches = run["out_of_resources"]["launches"]
    assert [lc["num_warps"] for lc in launches] == [1]         # only the author's config launched
    log = run["out_of_resources"]["log"]
    assert any(e[0] == "fallback" and "OutOfResources" in e[2] for e in log), log


def test_compile_error_falls_back_to_author_configs(run: dict[str, Any]) -> None:
    (launch,) = run["compile_error"]["launches"]
    assert (launch["constexprs"]["BLOCK_SIZE"], launch["num_warps"]) == (1024, 4)
    assert ("fallback", "add_kernel_autotuned") in _events(run["compile_error"])


def test_entry_outside_the_autotuners_current_configs_is_not_applied(run: dict[str, Any]) -> None:
    (launch,) = run["narrowed"]["launches"]
    assert (launch["constexprs"]["BLOCK_SIZE"], launch["num_warps"]) == (1024, 4)
    log = run["narrowed"]["log"]
    assert [e[0] for e in log] == ["stale"], log
    assert "BLOCK_SIZE=128 is not among the autotuner's values (1024)" in log[0][2]


def test_stale_entry_is_ignored(run: dict[str, Any]) -> None:
    (launch,) = run["stale"]["launches"]
    assert (launch["constexprs"]["BLOCK_SIZE"], launch["num_warps"]) == (1024, 4)
    assert ("stale", "add_kernel") in _events(run["stale"])
    assert not any(e[0] == "applied" for e in run["stale"]["log"])


def test_reports_triton_version(run: dict[str, Any]) -> None:
    print(f"shim runtime tests ran on Triton {run['triton']}")
    assert run["triton"]


# ------------------------------------------------------------------ @triton.heuristics (review: heap corruption)
HEUR_N = 4224      # 33 * 128: EVEN for BLOCK=128, not for 256 or 512


def _consistent(scenario: dict[str, Any]) -> list[tuple[int, bool]]:
    """(BLOCK, EVEN) of every launch, after checking that EVEN was computed for the BLOCK launched: an
    EVEN=True launch with a BLOCK that does not divide n stores out of bounds."""
    got = [(lc["constexprs"]["BLOCK"], bool(lc["constexprs"]["EVEN"])) for lc in scenario["launches"]]
    assert got and all(even == (HEUR_N % block == 0) for block, even in got), got
    return got


def test_autotune_over_heuristics_seed_benchmarks_each_config_as_it_is(run: dict[str, Any]) -> None:
    sc = run["heur_autotune_seed"]
    got = _consistent(sc)
    assert {b for b, _ in got} == {512, 128, 256}          # the recommendation first, then the author's two
    assert got[-1] == (512, False)                         # fake timings in order: the recommendation won
    assert [e[0] for e in sc["log"]] == ["applied"], sc["log"]


def test_autotune_over_heuristics_replace_logs_applied_once(run: dict[str, Any]) -> None:
    sc = run["heur_autotune_replace"]
    assert _consistent(sc) == [(512, False)]
    assert [lc["num_warps"] for lc in sc["launches"]] == [2]
    assert [e[0] for e in sc["log"]] == ["applied"], sc["log"]     # was logged by both wrappers


def test_heuristics_only_kernel_keeps_its_block_sizes(run: dict[str, Any]) -> None:
    sc = run["heur_other_blocks"]
    assert _consistent(sc) == [(128, True)]
    assert [lc["num_warps"] for lc in sc["launches"]] == [4]       # the entry is skipped whole
    assert [e[0] for e in sc["log"]] == ["skip"] and "heuristics" in sc["log"][0][2], sc["log"]


def test_heuristics_only_kernel_same_block_sizes_gets_options(run: dict[str, Any]) -> None:
    sc = run["heur_same_blocks"]
    assert _consistent(sc) == [(512, False)]
    assert [lc["num_warps"] for lc in sc["launches"]] == [2]
    assert [e[0] for e in sc["log"]] == ["applied"], sc["log"]


# ------------------------------------------------------------------ kernel identity
def test_kernel_ending_in_comment_lines_is_not_stale(run: dict[str, Any]) -> None:
    sc = run["trailing_comments"]
    assert [e[0] for e in sc["log"]] == ["applied"], sc["log"]
    assert [lc["constexprs"]["BLOCK_SIZE"] for lc in sc["launches"]] == [256]


def test_kernel_defined_in_a_function_matches_recommends_qualname(run: dict[str, Any]) -> None:
    sc = run["local_kernel"]
    assert [(e[0], e[1]) for e in sc["log"]] == [("applied", "make_local_kernel.local_add")], sc["log"]
    assert [lc["constexprs"]["BLOCK_SIZE"] for lc in sc["launches"]] == [256]


def test_uninstall_restores_the_autotuners_configs(run: dict[str, Any]) -> None:
    sc = run["leak"]
    assert ("applied", "add_kernel_autotuned") in _events(sc)
    assert sc["after"] == sc["author"]
    (launch,) = sc["launch_after"]                                 # the tuning cache forgot the shim's config
    assert (launch["constexprs"]["BLOCK_SIZE"], launch["num_warps"]) == (1024, 4)


# ------------------------------------------------------------------ a kernel in the script being run
MAIN = HERE / "main_child.py"


@pytest.fixture(scope="module", params=PYTHONS)
def main_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    py = request.param
    if not _usable(py):
        pytest.skip(f"{py} cannot import triton")
    tmp = tmp_path_factory.mktemp("shim_main")
    store = tmp / "lock.json"
    # `kernlint recommend tests/shim/main_child.py` from the repository root writes this module id
    write_store(str(store), [_entry(_kid("main_add", MAIN, "tests.shim.main_child"), {"BLOCK_SIZE": 256}, 2, 1)],
                "test")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(PYTHONPATH=os.pathsep.join([str(ROOT), str(HERE)]), TRITON_CACHE_DIR=str(tmp / "cache"))
    proc = subprocess.run([py, str(MAIN), str(store)], capture_output=True, text=True, env=env, cwd=tmp,
                          timeout=900)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@")), None)
    assert line, proc.stderr[-4000:]
    return json.loads(line[2:])  # type: ignore[no-any-return]


def test_kernel_of_the_main_script_is_matched_by_its_file(main_run: dict[str, Any]) -> None:
    assert main_run["module"] == "__main__"
    assert [(e[0], e[1]) for e in main_run["log"]] == [("applied", "main_add")], main_run["log"]
    (launch,) = main_run["launches"]
    assert (launch["constexprs"]["BLOCK_SIZE"], launch["num_warps"]) == (256, 2)
