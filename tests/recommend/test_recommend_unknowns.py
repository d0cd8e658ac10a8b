"""Recommendations where part of the launch is unknown to kernlint: a flag a `@triton.heuristics` derives, a
grid that does not evaluate (a host variable or a closure)."""
from __future__ import annotations

from pathlib import Path

from kernlint.pipeline.api import Settings, lint_paths, lint_source
from kernlint.hardware.specs import SPECS
from kernlint.recommend.core import ASSUMED_OUTPUT_BYTES, recommend

ROOT = Path(__file__).resolve().parents[2]


def test_autotune_over_heuristics_is_searched_from_the_autotuned_block_sizes() -> None:
    """examples/batched_matmul.py: `@triton.autotune` over `@triton.heuristics({"EVEN_K": ...})`. EVEN_K is
    unknown in every config, which discarded them all: "no recommendation: `BLOCK_M` ... computed at the launch
    site" although BMM_CONFIGS gives BLOCK_M 64/128."""
    res = lint_paths([str(ROOT / "examples/batched_matmul.py")], Settings(targets=("h100",)))
    k = next(k for f in res.files for k in f.kernels if k.jit.name == "bmm_kernel")
    rec = recommend(k, SPECS["h100"], {"M": 4096, "N": 4096, "K": 4096}, top_k=5)
    assert rec.reason is None and rec.ranked
    for c in rec.ranked:   # the author's BLOCK_M / BLOCK_N range (64-128), powers of two between
        assert c.constexprs["BLOCK_M"] in (64, 128) and c.constexprs["BLOCK_N"] in (64, 128)
        assert "EVEN_K" not in c.constexprs   # derived by the heuristic at run time, never fixed here


CLOSURE_GRID = '''import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 256}, num_warps=4), triton.Config({"BLOCK": 1024}, num_warps=4)],
                 key=["n"])
@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def launch(x, y, n):
    def grid(meta):
        return (triton.cdiv(n, meta["BLOCK"]),)
    scale[grid](x, y, n)
'''


def test_an_unknown_grid_is_scored_per_byte_of_output() -> None:
    """The grid is a closure kernlint does not evaluate. Scored alone, one CTA of the smallest tile was the
    fastest; now each config is scored as a launch writing ASSUMED_OUTPUT_BYTES, i.e. 64 MiB / (BLOCK × 4 B)
    CTAs of fp32 output."""
    res = lint_source(CLOSURE_GRID, "k.py", Settings(targets=("h100",), arg_types={"*": "*fp32"}))
    k = res.files[0].kernels[0]
    rec = recommend(k, SPECS["h100"], {"n": 1 << 24}, top_k=50)
    assert rec.ranked
    for c in rec.ranked:
        assert c.score.ctas == ASSUMED_OUTPUT_BYTES // (c.constexprs["BLOCK"] * 4)
        assert any("grid unknown: assumed" in n for n in c.score.notes)
    assert ASSUMED_OUTPUT_BYTES == 64 * 2**20
