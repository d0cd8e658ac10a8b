"""The recommend search's space and its shortcuts: block sizes for a looped constexpr that sizes a tl.dot
operand, and stage counts skipped once a config is over the shared-memory limit."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kernlint.analysis.configs import ConfigPoint
from kernlint.analysis.estimate import estimate
from kernlint.pipeline.api import Settings, lint_paths
from kernlint.hardware.specs import SPECS
from kernlint.recommend import core
from kernlint.frontend.host_facts import read_kernel_source

ROOT = Path(__file__).resolve().parents[2]

# no autotune list kernlint can read (the configs come from a data file the module loads):
# BLOCK_K is the step of the dot's K loop, BLOCK_R the step of a plain row loop
HIDDEN_CONFIGS = '''import json

import triton
import triton.language as tl


def configs():
    with open("tuned_configs.json") as fh:
        return [triton.Config(c) for c in json.load(fh)]


@triton.autotune(configs=configs(), key=["K"])
@triton.jit
def proj(x_ptr, w_ptr, y_ptr, M, N, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_R: tl.constexpr):
    rows = tl.arange(0, 64)
    acc = tl.zeros((64, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        cols = k + tl.arange(0, BLOCK_K)
        a = tl.load(x_ptr + rows[:, None] * K + cols[None, :])
        b = tl.load(w_ptr + cols[:, None] * N + tl.arange(0, BLOCK_N)[None, :])
        acc += tl.dot(a, b)
    total = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for r in range(0, M, BLOCK_R):
        total += tl.load(y_ptr + r + tl.arange(0, BLOCK_R))
    tl.store(y_ptr + rows[:, None] * N + tl.arange(0, BLOCK_N)[None, :], acc + tl.sum(total))


def launch(x, w, y, M, N, K, bn):
    proj[(1,)](x, w, y, M, N, K, BLOCK_N=bn)
'''


def _kernel(tmp_path: Path, source: str, name: str) -> Any:
    path = tmp_path / "k.py"
    path.write_text(source)
    res = lint_paths([str(path)], Settings(targets=("h100",)))
    return next(k for f in res.files for k in f.kernels if k.jit.name == name)


def test_a_looped_block_that_sizes_a_dot_is_searched_at_mma_tile_sizes(tmp_path: Path) -> None:
    k = _kernel(tmp_path, HIDDEN_CONFIGS, "proj")
    # BLOCK_N is computed at the launch: the bucket gives it
    bucket = {"M": 4096, "N": 4096, "K": 4096, "BLOCK_N": 128}
    space = core.learn_space(k, read_kernel_source(k.jit.path, k.jit.name), bucket)
    assert space.reason is None
    # tl.dot wants every dim >= 16 and one wgmma instruction is at most 256 wide: 16, 32, ..., 256. Before,
    # the row-kernel range (128 up to the loop's extent, 4096 here) left out BLOCK_K 16-64 entirely.
    assert space.tunable["BLOCK_K"] == [16, 32, 64, 128, 256]
    # a looped block of a plain row loop keeps the row-kernel range: 128 up to the extent M = 4096
    assert space.tunable["BLOCK_R"] == [128, 256, 512, 1024, 2048, 4096]


def test_stage_counts_skipped_after_an_over_limit_one_are_over_the_limit_too(monkeypatch: pytest.MonkeyPatch) -> None:
    # every config searched (no time-floor pruning, tests/recommend/test_search_bound.py): only this skip counts
    monkeypatch.setattr(core, "PRUNE", False)
    res = lint_paths([str(ROOT / "examples/matmul.py")], Settings(targets=("h100",)))
    k = next(k for f in res.files for k in f.kernels if k.jit.name == "matmul_kernel")
    evaluated: set[tuple[Any, ...]] = set()
    real = core._evaluate

    def spy(kernel: Any, src: Any, spec: Any, values: dict[str, Any], nw: int, ns: int, *rest: Any) -> Any:
        evaluated.add((tuple(sorted(values.items())), nw, ns))
        return real(kernel, src, spec, values, nw, ns, *rest)

    monkeypatch.setattr(core, "_evaluate", spy)
    bucket = {"M": 4096, "N": 4096, "K": 4096}
    rec = core.recommend(k, SPECS["h100"], bucket, top_k=3)
    skipped = rec.searched - len(evaluated)
    assert rec.ranked and skipped > 0
    # every skipped config, estimated now, is over the limit: the search lost nothing
    src = read_kernel_source(k.jit.path, k.jit.name)
    space = core.learn_space(k, src, bucket)
    checked = 0
    for (values, nw, ns) in {(tuple(sorted(v.items())), w, s) for v, w, s in _all_points(space)} - evaluated:
        est = estimate(k.ir, ConfigPoint(dict(values), nw, ns, "cli", k.jit.line), SPECS["h100"])
        assert est.smem_over, (values, nw, ns)
        checked += 1
    assert checked == skipped


def _all_points(space: core.Space) -> list[tuple[dict[str, Any], int, int]]:
    import itertools
    names = list(space.tunable)
    out = []
    for combo in itertools.product(*(space.tunable[n] for n in names)):
        values = {**space.fixed, **dict(zip(names, combo))}
        if not core._relations_ok(values, space.relations):
            continue
        out += [(values, nw, ns) for nw in core.WARPS for ns in space.stages]
    return out


def test_each_config_is_estimated_once_across_shape_buckets(monkeypatch: pytest.MonkeyPatch) -> None:
    # the estimate depends on constexprs, warps, stages and target, not on the bucket; with shapes unknown the
    # CLI ranks every config for three buckets (mamba's ssd_chunk_scan.py: 118 s -> 44 s)
    res = lint_paths([str(ROOT / "examples/matmul.py")], Settings(targets=("h100",)))
    k = next(k for f in res.files for k in f.kernels if k.jit.name == "matmul_kernel")
    calls: list[Any] = []
    real = core.estimate

    def spy(ir: Any, point: Any, spec: Any) -> Any:
        calls.append((tuple(sorted(point.constexprs.items())), point.num_warps, point.num_stages))
        return real(ir, point, spec)

    monkeypatch.setattr(core, "estimate", spy)
    monkeypatch.setattr(core, "PRUNE", False)   # every config of both buckets is estimated: the second from memory
    first = core.recommend(k, SPECS["h100"], {"M": 4096, "N": 4096, "K": 4096}, top_k=3)
    once = len(calls)
    second = core.recommend(k, SPECS["h100"], {"M": 512, "N": 512, "K": 8192}, top_k=3)
    assert once > 0 and len(calls) == once
    # pruned (core._search), a bucket estimates what the other's floors ruled out, still never twice
    calls.clear()
    monkeypatch.setattr(core, "PRUNE", True)
    k = next(k for f in lint_paths([str(ROOT / "examples/matmul.py")], Settings(targets=("h100",))).files
             for k in f.kernels if k.jit.name == "matmul_kernel")
    for bucket in ({"M": 4096, "N": 4096, "K": 4096}, {"M": 512, "N": 512, "K": 8192}):
        core.recommend(k, SPECS["h100"], bucket, top_k=3)
    assert 0 < len(calls) == len(set(calls)) < once
    assert first.searched == second.searched and first.ranked and second.ranked
    # the ranking still follows each bucket's own grid: a 512² output has far fewer CTAs
    assert second.ranked[0].score.ctas < first.ranked[0].score.ctas
