"""Declared cache keys (kernlint/ir/cache_keys.py): keys of different analyses never collide, and every entry
an estimate leaves on the graph and its liveness is under a declared key."""
from __future__ import annotations

from pathlib import Path

from kernlint.analysis.estimate import _liveness, estimate
from kernlint.hardware.specs import resolve_target
from kernlint.ir.cache_keys import Analysis, CacheKey
from kernlint.pipeline.api import Settings, lint_paths

ROOT = Path(__file__).resolve().parents[2]


def test_members_are_distinct() -> None:
    assert len(Analysis.__members__) == len(Analysis)    # no member is an alias of another (same value)


def test_keys_of_different_analyses_never_collide() -> None:
    params = [(), (4,), ("h100", 4), (frozenset({("BLOCK", int, 64)}),)]
    keys = [a.key(*p) for a in Analysis for p in params]
    assert len(set(keys)) == len(keys)
    table = {k: i for i, k in enumerate(keys)}
    assert all(table[k] == i for i, k in enumerate(keys))
    assert Analysis.READERS.key() == CacheKey(Analysis.READERS, ()) and Analysis.READERS.key() != "readers"


def test_an_estimate_caches_only_under_declared_keys() -> None:
    result = lint_paths([str(ROOT / "examples" / "matmul.py")], Settings(targets=("h100",)))
    kernel = next(k for f in result.files for k in f.kernels)
    point = kernel.points[0]
    estimate(kernel.ir, point, resolve_target("h100"))
    assert kernel.ir.cache and all(isinstance(k, CacheKey) for k in kernel.ir.cache)
    live = _liveness(kernel.ir, dict(point.constexprs))
    assert live.cache and all(isinstance(k, CacheKey) for k in live.cache)
    assert {k.analysis for k in live.cache} >= {Analysis.DOT_PLACEMENT, Analysis.PRODUCERS}
