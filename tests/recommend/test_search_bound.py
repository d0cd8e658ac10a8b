"""The search's time floor (model.score_floor) and the pruning built on it (core._search): the floor never
exceeds the modelled time of a config, and a pruned search ranks exactly what a search of every config ranks."""
from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import Any

import pytest

from kernlint.pipeline.api import Settings, lint_paths
from kernlint.hardware.specs import SPECS
from kernlint.recommend import core
from kernlint.recommend import cli as recommend_cli
from kernlint.recommend.model import score_floor

ROOT = Path(__file__).resolve().parents[2]
# (file, kernel, bucket: None = the buckets `recommend` uses when shapes are unknown)
KERNELS: list[tuple[str, str, dict[str, int] | None]] = [
    ("examples/matmul.py", "matmul_kernel", None),
    ("examples/layernorm.py", "layernorm_fwd_kernel", {}),
    ("examples/cross_entropy.py", "cross_entropy_fwd_kernel", {}),
    ("examples/rope.py", "rope_partial_kernel", {}),
    ("examples/swiglu.py", "swiglu_fwd_kernel", None),
    ("examples/batched_matmul.py", "bmm_kernel", None),
]


def _kernel(path: str, name: str, target: str = "h100") -> Any:
    res = lint_paths([str(ROOT / path)], Settings(targets=(target,)))
    found = [k for f in res.files for k in f.kernels if k.jit.name == name]
    assert found, f"{path}: no kernel {name}"
    return found[0]


def _buckets(k: Any, bucket: dict[str, int] | None) -> list[dict[str, int]]:
    return [bucket] if bucket is not None else core.buckets_for(k, None)


def _summary(rec: core.Recommendation) -> tuple[Any, ...]:
    ranked = [(c.label(), c.score.time_us, c.score.notes, c.equivalent_stages, c.in_author_space, c.outside)
              for c in rec.ranked]
    author = rec.author.label() if rec.author else None
    return (ranked, author, rec.author_floor_us, rec.kept_author, rec.reason, rec.doubts, rec.searched)


@pytest.mark.parametrize("path, name, bucket", KERNELS)
def test_the_floor_is_below_the_modelled_time_of_every_feasible_config(
        path: str, name: str, bucket: dict[str, int] | None, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[Any, core.Candidate]] = []
    real = core._evaluate

    def spy(kernel: Any, src: Any, spec_: Any, values: dict[str, Any], nw: int, ns: int, *rest: Any) -> Any:
        c = real(kernel, src, spec_, values, nw, ns, *rest)
        if c is not None:
            seen.append((src, c))
        return c

    monkeypatch.setattr(core, "_evaluate", spy)
    monkeypatch.setattr(core, "PRUNE", False)
    for target in ("h100", "b200"):
        k, spec = _kernel(path, name, target), SPECS[target]
        for b in _buckets(k, bucket):
            seen.clear()
            core.recommend(k, spec, b, top_k=3)
            assert seen
            env = core.bucket_env(k, seen[0][0], b)
            works = core._Works(k, seen[0][0], env)
            for _, c in seen:
                work, ctas = works.get(c.constexprs, c.num_warps, c.num_stages)
                if ctas is None and work.stored:
                    ctas = core._assumed_ctas(work)
                floor = score_floor(work, spec, c.num_warps, c.num_stages, ctas)
                assert 0 < floor <= c.score.time_us * (1 + 1e-9), (target, b, c.label())


@pytest.mark.parametrize("path, name, bucket", KERNELS)
@pytest.mark.parametrize("top_k", [3, 50])
def test_a_pruned_search_ranks_what_a_full_search_ranks(path: str, name: str, bucket: dict[str, int] | None,
                                                        top_k: int, monkeypatch: pytest.MonkeyPatch) -> None:
    pruned = 0
    for b in _buckets(_kernel(path, name), bucket):
        monkeypatch.setattr(core, "PRUNE", False)
        full = core.recommend(_kernel(path, name), SPECS["h100"], b, top_k=top_k)
        monkeypatch.setattr(core, "PRUNE", True)
        fast = core.recommend(_kernel(path, name), SPECS["h100"], b, top_k=top_k)
        assert _summary(fast) == _summary(full), b
        assert full.pruned == 0
        pruned += fast.pruned
    if name == "matmul_kernel":
        assert pruned > 0   # 756 configs per bucket: most cannot reach the top


def test_the_cli_prints_the_same_with_and_without_pruning(monkeypatch: pytest.MonkeyPatch) -> None:
    parser = argparse.ArgumentParser()
    recommend_cli.add_parser(parser.add_subparsers())
    args = parser.parse_args(["recommend", str(ROOT / "examples/matmul.py"), str(ROOT / "examples/rmsnorm.py")])
    out = {}
    for prune in (False, True):
        monkeypatch.setattr(core, "PRUNE", prune)
        buf = io.StringIO()
        assert recommend_cli.run(args, buf) == 0
        out[prune] = buf.getvalue()
    assert out[True] == out[False] and "matmul_kernel [h100]" in out[True]


def test_recommend_speed_benchmark_runs_on_a_small_file() -> None:
    # A smoke test of benchmarks/recommend_speed.py (timings are a benchmark's, not a test's): both searches
    # ran and printed the same
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "recommend_speed.py"),
                           str(ROOT / "examples" / "vector_add.py")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "vector_add.py" in done.stdout and "identical" in done.stdout
