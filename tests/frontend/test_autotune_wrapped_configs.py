"""`@triton.autotune(configs=helper([...]))`: the literal list inside a one-argument helper call is read as the
author's configs (mamba-ssm passes 25 kernels' lists through `autotune_configs(...)`, which returns them or
narrows them at run time). The helper itself is never run."""
from __future__ import annotations

from kernlint.pipeline.api import Settings, lint_source

TEMPLATE = '''import triton
import triton.language as tl
from .utils import autotune_configs


@triton.autotune(configs={configs}, key=["n"])
@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
'''
LISTED = '[triton.Config({"BLOCK": 256}, num_warps=4), triton.Config({"BLOCK": 1024}, num_warps=8)]'


def _autotune(configs: str):  # type: ignore[no-untyped-def]
    res = lint_source(TEMPLATE.format(configs=configs), "k.py", Settings(targets=("h100",)))
    return res.files[0].kernels[0].jit.autotune


def test_a_one_argument_helper_around_a_literal_list_is_read_through() -> None:
    spec = _autotune(f"autotune_configs({LISTED})")
    assert spec.unknown_reason is None
    assert [(c.kwargs["BLOCK"], c.options["num_warps"]) for c in spec.configs] == [(256, 4), (1024, 8)]


def test_other_calls_stay_unknown() -> None:
    # extra arguments may change what the helper returns; a call of nothing literal has nothing to read
    for expr in (f"autotune_configs({LISTED}, fast=True)", "autotune_configs(CONFIGS)", "make_configs()"):
        spec = _autotune(expr)
        assert spec.configs == () and spec.unknown_reason
