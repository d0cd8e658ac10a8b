"""Recommended helion.Configs: searched with the estimate, ranked by the recommender's model, stored, applied."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT

from kernlint.hardware.specs import resolve_target
from kernlint.recommend.ranking import NEAR_TIE
from kernlint.recommend.helion import (
    config_text,
    entry,
    estimate_config,
    kernel_id_for,
    load_kernel,
    recommend,
    write_entries,
)
from kernlint.core.config_store import read_store

MATMUL = str(ROOT / "examples" / "helion_matmul.py")
RMS = str(ROOT / "examples" / "helion_rms_norm.py")
SQUARE = {"m": 4096, "n": 4096, "k": 4096}
# an interpreter with helion and torch: this one unless KERNLINT_HELION_PYTHON names another
HELION_PYTHON = os.environ.get("KERNLINT_HELION_PYTHON", sys.executable)


def test_host_facts_map_the_grid_and_the_k_loop_to_block_size_slots() -> None:
    t = load_kernel(MATMUL, "helion_matmul")
    assert [s for s, _ in t.grid] == ["block_size_0", "block_size_1"]
    assert [s for _, s in t.loops.values()] == ["block_size_2"]
    assert t.dot_slots >= {"block_size_0", "block_size_1", "block_size_2"}


def test_matmul_recommendations_are_feasible_and_rank_no_worse_than_the_author() -> None:
    t = load_kernel(MATMUL, "helion_matmul")
    spec = resolve_target("h100")
    rec = recommend(t, spec, SQUARE, top_k=5)
    assert rec.ranked and rec.author is not None
    assert rec.rejected["shared memory over the limit"] > 0      # infeasible configs were dropped
    for c in rec.ranked:
        assert len(c.constexprs["block_sizes"]) == 3 and all(b >= 16 for b in c.constexprs["block_sizes"])
        assert not c.estimate.smem_over and c.estimate.occupancy.ctas_per_sm >= 1
    times = [c.score.time_us for c in rec.ranked]
    # best first; leaders within NEAR_TIE of each other count as a tie (ranking.rank re-orders those)
    slack = 1 + NEAR_TIE
    assert all(a <= b * slack for i, a in enumerate(times) for b in times[i + 1:])
    assert times[0] <= rec.author.score.time_us * slack
    # the candidate's estimate is the one `estimate_config` gives for the same helion.Config
    top = rec.ranked[0]
    again = estimate_config(t, {**top.constexprs, "num_warps": top.num_warps, "num_stages": top.num_stages},
                            SQUARE, spec)
    assert again.smem.total == top.estimate.smem.total and again.registers.allocated == top.estimate.registers.allocated


def test_full_extent_reduction_searches_reduction_loops() -> None:
    t = load_kernel(RMS, "helion_rms_norm")
    rec = recommend(t, resolve_target("h100"), {"m": 4096, "n": 8192}, top_k=50)
    assert rec.ranked
    looped = {tuple(c.constexprs.get("reduction_loops") or [None]) for c in rec.ranked}
    assert (None,) in looped or any(v[0] is not None for v in looped)
    assert rec.searched > len(rec.ranked)


def test_entries_use_the_shared_store_format(tmp_path) -> None:  # type: ignore[no-untyped-def]
    t = load_kernel(MATMUL, "helion_matmul")
    rec = recommend(t, resolve_target("h100"), SQUARE, top_k=1)
    path = str(tmp_path / "kernlint.lock.json")
    write_entries(path, [entry(t, rec)])
    write_entries(path, [entry(t, rec, bucket_label="*")])        # merged, not overwritten
    (a, b) = read_store(path)
    assert a.kernel == b.kernel == kernel_id_for(t)
    assert a.kernel.startswith("examples.helion_matmul:helion_matmul@sha256:")
    assert {a.bucket, b.bucket} == {"*", "k=4096,m=4096,n=4096"}
    assert a.config["frontend"] == "helion" and a.config["kwargs"]["block_sizes"] == rec.ranked[0].constexprs[
        "block_sizes"]
    assert a.rationale.startswith(config_text(rec.ranked[0]))
    assert json.loads((tmp_path / "kernlint.lock.json").read_text())["schema"] == "kernlint.lock/1"


def _helion_available() -> bool:
    if not os.path.exists(HELION_PYTHON):
        return False
    return subprocess.run([HELION_PYTHON, "-c", "import helion, torch"], check=False,
                          capture_output=True).returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(not _helion_available(), reason=f"helion not importable by {HELION_PYTHON}")
def test_apply_pins_the_recommended_config_and_helion_runs_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Write the h100 recommendation for helion_matmul, apply it in a helion interpreter, run the kernel on the
    CPU (TRITON_INTERPRET=1: Helion generates Triton, Triton's interpreter runs it) and check Helion used it."""
    t = load_kernel(MATMUL, "helion_matmul")
    rec = recommend(t, resolve_target("h100"), SQUARE, top_k=1)
    store = str(tmp_path / "kernlint.lock.json")
    write_entries(store, [entry(t, rec, bucket_label="*")])
    want = rec.ranked[0]
    script = textwrap.dedent(f"""
        import json, sys, torch, helion
        sys.path.insert(0, {str(ROOT)!r})
        from examples.helion_matmul import helion_matmul
        from kernlint.shim.helion import apply
        author = [dict(c) for c in helion_matmul.configs]
        assert apply(helion_matmul, {store!r}, target="b200") is None      # no entry for that target
        cfg = apply(helion_matmul, {store!r}, target="h100")
        x = torch.randn(256, 128, dtype=torch.float16)
        y = torch.randn(128, 256, dtype=torch.float16)
        out = helion_matmul(x, y)
        bound = helion_matmul.bind((x, y))
        code = bound.to_triton_code(bound._config)
        print(json.dumps({{"author": author, "applied": dict(cfg), "configs": [dict(c) for c in helion_matmul.configs],
                          "used": dict(bound._config), "code": code,
                          "err": float((out.float() - x.float() @ y.float()).abs().max())}}))
    """)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    p = subprocess.run([HELION_PYTHON, "-c", script], check=False, capture_output=True, text=True, env=env,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads(p.stdout.strip().splitlines()[-1])
    blocks = want.constexprs["block_sizes"]
    assert res["applied"]["block_sizes"] == blocks and res["applied"]["num_warps"] == want.num_warps
    assert res["configs"] == [res["applied"]] != res["author"]            # replaced, kernel source untouched
    assert res["used"]["block_sizes"] == blocks and res["used"]["num_stages"] == want.num_stages
    for i, b in enumerate(blocks):
        assert f"_BLOCK_SIZE_{i} = tl.constexpr({b})" in res["code"]
    assert f"num_warps={want.num_warps}, num_stages={want.num_stages}" in res["code"]
    assert res["err"] < 0.5


def test_apply_imports_helion_lazily() -> None:
    code = ("import sys, kernlint.recommend.helion, kernlint.shim.helion; "
            "print('helion' in sys.modules or 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=str(ROOT))
    assert out.stdout.strip() == "False"


def test_unsafe_fix_pins_the_recommendation_in_the_decorator(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from kernlint.pipeline.api import Settings, lint_source
    from kernlint.recommend.helion import fix_source
    t = load_kernel(MATMUL, "helion_matmul_tuned")
    rec = recommend(t, resolve_target("h100"), SQUARE, top_k=1)
    text = (ROOT / "examples" / "helion_matmul.py").read_text()
    fixed = fix_source(text, "helion_matmul_tuned", config_text(rec.ranked[0]))
    assert "configs=[" not in fixed and fixed.count("@helion.kernel(config=helion.Config(") == 2
    result = lint_source(fixed, "examples/helion_matmul.py", Settings())
    k = next(k for f in result.files for k in f.kernels if k.jit.qualname == "helion_matmul_tuned")
    assert k.jit.helion.mode == "pinned" and len(k.points) == 1
    c = rec.ranked[0]
    assert [k.points[0].constexprs[f"block_size_{i}"] for i in range(3)] == c.constexprs["block_sizes"]
    assert (k.points[0].num_warps, k.points[0].num_stages) == (c.num_warps, c.num_stages)
    # the other kernel is untouched
    assert "@helion.kernel(config=helion.Config(block_sizes=[128, 128, 64], num_warps=8, num_stages=4))" in fixed
