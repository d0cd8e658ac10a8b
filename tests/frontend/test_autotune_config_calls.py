"""Autotune config lists built by the module's own functions are read statically; lists kernlint cannot
read (a data file, a run-time table) are named as the source, never replaced by defaults unsaid."""
from __future__ import annotations

from pathlib import Path

import libcst as cst

from kernlint.pipeline.api import Settings, lint_sources
from kernlint.frontend.kernels import collect_module_facts

SOURCE = (Path(__file__).parent / "autotune_calls_source.txt").read_text()


def _autotune(name: str):  # type: ignore[no-untyped-def]
    facts, _ = collect_module_facts("cfgs.py", cst.parse_module(SOURCE))
    return next(j for j in facts.jit_functions if j.name == name).autotune


def test_a_list_concatenated_with_a_function_that_appends_in_loops() -> None:
    a = _autotune("k1")
    # 1 literal + 2 stages x 2 block_m x 2 block_k built by get_configs_io_bound()
    assert len(a.configs) == 1 + 2 * 2 * 2 and a.unknown_reason is None
    got = {(c.kwargs["BM"], c.kwargs["BK"], c.options.get("num_stages"), c.options["num_warps"]) for c in a.configs[1:]}
    assert got == {(bm, bk, s, 2 if bm <= 16 else 4) for s in (2, 3) for bm in (16, 32) for bk in (32, 64)}


def test_comprehensions_over_tuples_and_product_in_returned_lists() -> None:
    a = _autotune("k2")
    assert [(c.kwargs["BM"], c.kwargs["BK"], c.options.get("num_warps")) for c in a.configs] == [
        (64, 64, 4), (128, 128, 8), (32, 16, None), (64, 16, None)]


def test_configs_from_a_data_file_are_named_and_the_estimate_says_so() -> None:
    a = _autotune("k3")
    assert a.configs == () and "configs from a data file loaded by from_json(...)" in (a.unknown_reason or "")
    result = lint_sources([("cfgs.py", SOURCE.encode())], Settings(targets=("h100",)))
    k3 = next(k for f in result.files for k in f.kernels if k.jit.name == "k3")
    assert all(any(n.startswith("autotune configs not read (configs from a data file") for n in e.assumptions)
               for e in k3.estimates)


def test_a_function_that_loops_past_the_step_budget_is_refused() -> None:
    looping = SOURCE + '''

def forever():
    out = []
    for i in range(10_000):
        for j in range(10_000):
            out.append(i)
    return out


@triton.autotune(configs=forever(), key=["n"])
@triton.jit
def k4(X, n, BM: tl.constexpr):
    tl.store(X + tl.arange(0, BM), 1.0)
'''
    facts, _ = collect_module_facts("cfgs.py", cst.parse_module(looping))
    a = next(j for j in facts.jit_functions if j.name == "k4").autotune
    assert a.configs == () and a.unknown_reason is not None


ALIASED = '''import triton
import triton.language as tl

IS_HIP = False


def nvidia_configs():
    return [triton.Config({"BM": bm}, num_warps=w) for bm in (32, 64) for w in (4, 8)]


def amd_configs():
    return [triton.Config({"BM": 16}, num_warps=4)]


get_configs = nvidia_configs
if IS_HIP:
    get_tuned = amd_configs
else:
    get_tuned = nvidia_configs


@triton.autotune(configs=get_configs(), key=["n"])
@triton.jit
def k_alias(X, n, BM: tl.constexpr):
    tl.store(X + tl.arange(0, BM), 1.0)


@triton.autotune(configs=get_tuned(), key=["n"])
@triton.jit
def k_chosen(X, n, BM: tl.constexpr):
    tl.store(X + tl.arange(0, BM), 1.0)
'''


def test_a_function_bound_to_another_name_at_module_level_is_followed() -> None:
    facts, _ = collect_module_facts("aliased.py", cst.parse_module(ALIASED))
    a = next(j for j in facts.jit_functions if j.name == "k_alias").autotune
    assert a.unknown_reason is None
    assert [(c.kwargs["BM"], c.options["num_warps"]) for c in a.configs] == [(32, 4), (32, 8), (64, 4), (64, 8)]


def test_a_name_bound_under_module_level_conditions_names_the_candidates() -> None:
    """gemlite's `get_autotune_config` is one of three functions, chosen by its settings and the vendor when the
    module is imported: kernlint does not guess which."""
    facts, _ = collect_module_facts("aliased.py", cst.parse_module(ALIASED))
    a = next(j for j in facts.jit_functions if j.name == "k_chosen").autotune
    assert a.configs == ()
    assert "`get_tuned` is one of amd_configs(), nvidia_configs(), chosen by module-level conditions" in (
        a.unknown_reason or "")
