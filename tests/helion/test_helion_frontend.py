"""Helion kernels: found statically, lowered to the shared graph, analysed per helion.Config."""
from __future__ import annotations

import os

from conftest import ROOT
from kernlint.pipeline.api import Settings, lint_paths, lint_source
from kernlint.frontend.helion import HelionKernel
from kernlint.ir.helion_types import HelionIR
from kernlint.ir.nodes import OpKind

MATMUL = '''import helion
import helion.language as hl
import torch
from helion import kernel as hk


@hk(configs=[helion.Config(block_sizes=[64, 32, 16], num_warps=4), helion.Config(block_sizes=[128, 64, 32])])
def mm(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = y.size()
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, x[tile_m, tile_k], y[tile_k, tile_n])
        out[tile_m, tile_n] = acc
    return out
'''


def _kernel(source: str, **settings):  # type: ignore[no-untyped-def]
    result = lint_source(source, "k.py", Settings(**settings))
    assert not result.internal_errors
    (k,) = [k for f in result.files for k in f.kernels]
    return k


def test_alias_and_configs_map_block_sizes_in_order_of_first_tile() -> None:
    k = _kernel(MATMUL)
    assert isinstance(k.jit, HelionKernel) and isinstance(k.ir, HelionIR)
    assert [s.symbol for s in k.ir.tunable_slots] == ["block_size_0", "block_size_1", "block_size_2"]
    first, second = k.points
    assert dict(first.constexprs) == {"block_size_0": 64, "block_size_1": 32, "block_size_2": 16}
    assert first.origin == "autotune" and second.num_warps == 4 and "num_warps" in second.defaulted
    assert first.num_stages == 1  # Helion's default, not Triton's 3
    dots = [op for op, _ in k.ir.walk() if op.kind == OpKind.DOT]
    assert len(dots) == 1 and [str(d) for d in dots[0].result.shape] == ["block_size_0", "block_size_1"]
    assert any(op.kind == OpKind.FOR for op, _ in k.ir.walk()) and not k.ir.unmodelled


def test_smem_grows_with_the_config_like_the_triton_matmul() -> None:
    k = _kernel(MATMUL)
    small, big = (e.smem.total for e in k.estimates)
    assert 0 < small < big


def test_no_config_uses_helions_default_and_fixed_block_sizes_take_no_slot() -> None:
    src = MATMUL.replace("@hk(configs=[helion.Config(block_sizes=[64, 32, 16], num_warps=4), "
                         "helion.Config(block_sizes=[128, 64, 32])])", "@hk").replace(
        "hl.tile(k)", "hl.tile(k, block_size=32)")
    k = _kernel(src)
    (p,) = k.points
    assert p.origin == "default" and dict(p.constexprs) == {"block_size_0": 32, "block_size_1": 32}
    assert [s.fixed for s in k.ir.slots] == [None, None, 32]


def test_full_extent_row_is_a_reduction_dim_known_from_config_or_cli() -> None:
    src = '''import helion
import helion.language as hl
import torch


@helion.kernel(config=helion.Config(block_sizes=[2], reduction_loops=[None]))
def rs(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([m], dtype=torch.float32, device=x.device)
    for tile_m in hl.tile(m):
        out[tile_m] = torch.sum(x[tile_m, :].to(torch.float32), dim=-1)
    return out
'''
    k = _kernel(src)
    assert [r.extent_text for r in k.ir.rdims] == ["n"] and not k.estimates[0].estimated
    assert "rdim_0" in k.points[0].unknown
    known = _kernel(src, cli_configs=[{"n": 3000}])
    assert known.points[0].constexprs["rdim_0"] == 4096 and known.estimates[0].estimated
    looped = _kernel(src.replace("[None]", "[512]"))
    assert looped.points[0].constexprs["rdim_0"] == 512
    assert any(op.kind == OpKind.REDUCE for op, _ in k.ir.walk())


def test_unmodelled_device_construct_is_a_kl002_not_a_crash() -> None:
    src = MATMUL.replace("out[tile_m, tile_n] = acc", "out[tile_m, tile_n] = hl.inline_asm_elementwise(acc)")
    result = lint_source(src, "k.py", Settings(select=("KL002",)))
    assert not result.internal_errors
    assert [d.code for d in result.diagnostics] == ["KL002"]


def test_garbage_helion_code_never_crashes() -> None:
    for body in ("for t in hl.tile():\n        x[t] = 1", "for a, b in hl.grid(x.size()):\n        x[a, b] += y[a]",
                 "with torch.no_grad():\n        pass", "for t in hl.tile(n, block_size=bs):\n        z = x[t, 1, ...]"):
        src = f"import helion\nimport helion.language as hl\nimport torch\n\n\n@helion.kernel\ndef f(x, y, n: int):\n    {body}\n"
        assert not lint_source(src, "k.py").internal_errors


def test_examples_explain_helion_matmul() -> None:
    from kernlint.cli import main

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        assert main(["explain", "examples/helion_matmul.py::helion_matmul"]) == 0
        result = lint_paths(["examples"])
    finally:
        os.chdir(cwd)
    names = {k.jit.name for f in result.files for k in f.kernels if isinstance(k.jit, HelionKernel)}
    assert {"helion_matmul", "helion_rms_norm", "helion_softmax_two_pass", "helion_attention",
            "helion_matmul_bias_gelu"} <= names
