"""ranking.collapse_stage_variants: configs that only num_stages tells apart, where the model sees no
difference (no multi-buffered loop: same shared memory, registers and time), are listed once."""
from __future__ import annotations

from pathlib import Path

from kernlint.pipeline.api import Settings, lint_paths
from kernlint.hardware.specs import SPECS
from kernlint.recommend.core import recommend

ROOT = Path(__file__).resolve().parents[2]


def _kernel(path: str, name: str):  # type: ignore[no-untyped-def]
    res = lint_paths([str(ROOT / path)], Settings(targets=("h100",)))
    return next(k for f in res.files for k in f.kernels if k.jit.name == name)


def test_a_streaming_kernel_lists_each_block_and_warp_count_once() -> None:
    # swiglu has no tl.dot: nothing is multi-buffered, so num_stages 1, 2 and 3 of a (BLOCK_SIZE, num_warps)
    # pair are one program (the H200 runs hashed their cubins alike). Before: the top 3 was one config 3 times.
    rec = recommend(_kernel("examples/swiglu.py", "swiglu_fwd_kernel"), SPECS["h100"],
                    {"n_rows": 4096, "n_cols": 4096}, top_k=5)
    pairs = [(c.constexprs["BLOCK_SIZE"], c.num_warps) for c in rec.ranked]
    assert len(rec.ranked) == 5 and len(set(pairs)) == 5
    for c in rec.ranked:
        assert c.num_stages == min(c.equivalent_stages) and len(c.equivalent_stages) >= 2
        assert "give the same estimate" in c.stages_note()


def test_a_pipelined_matmul_keeps_its_stage_variants_apart() -> None:
    # the K loop's operands are multi-buffered: each extra stage adds (BLOCK_M + BLOCK_N) * BLOCK_K * 2 bytes
    # of shared memory, so stage variants are different programs and none is folded
    rec = recommend(_kernel("examples/matmul.py", "matmul_kernel"), SPECS["h100"],
                    {"M": 4096, "N": 4096, "K": 4096}, top_k=60)
    assert rec.ranked and all(not c.equivalent_stages for c in rec.ranked)
    tiles = [(tuple(sorted(c.constexprs.items())), c.num_warps) for c in rec.ranked]
    assert len(set(tiles)) < len(tiles)      # some tile appears at two stage counts
    for c in rec.ranked:
        same_tile = [d for d in rec.ranked if d is not c and d.constexprs == c.constexprs
                     and d.num_warps == c.num_warps]
        for d in same_tile:
            cx = c.constexprs
            per_stage = (cx["BLOCK_M"] + cx["BLOCK_N"]) * cx["BLOCK_K"] * 2
            assert d.estimate.smem.total - c.estimate.smem.total == per_stage * (d.num_stages - c.num_stages)
