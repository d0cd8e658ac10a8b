"""Autotune helpers: `prune(target="auto")` for `prune_configs_by={"early_config_prune": ...}` and
`seed_configs(kernel, k=5)`. Both analyse the kernel's source with kernlint (libcst, never executed),
once per kernel, and import triton only to build `triton.Config`s.
"""
from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger("kernlint.triton")


@functools.lru_cache(maxsize=128)
def _analysis(path: str, name: str, target: str) -> Any:
    from kernlint.api import Settings, lint_paths
    res = lint_paths([path], Settings(targets=(target,)))
    return next((k for f in res.files for k in f.kernels if k.jit.name == name), None)


def _resolve_target(target: str) -> str:
    if target != "auto":
        return target
    from kernlint.shim import detect_target
    return detect_target() or "h100"


def _kernel_file(kernel: Any) -> tuple[str, str]:
    fn = kernel
    while hasattr(fn, "fn"):          # Autotuner → JITFunction → python function
        fn = fn.fn
    return inspect.getsourcefile(fn) or "", fn.__name__


def prune(target: str = "auto", keep_infeasible: bool = False) -> Callable[..., list[Any]]:
    """An `early_config_prune`: drops configs that cannot fit (shared/tensor memory, >2× register demand)
    and orders the rest by kernlint's time model for the launch's integer arguments. Never returns an
    empty list: if nothing is judged to fit, the configs are returned unchanged (and that is logged)."""

    def early_config_prune(configs: list[Any], named_args: Mapping[str, Any], **kwargs: Any) -> list[Any]:
        at = inspect.currentframe().f_back.f_locals.get("self")  # type: ignore[union-attr]
        if at is None or not hasattr(at, "base_fn"):
            return list(configs)
        from kernlint.hardware.specs import resolve_target
        from kernlint.recommend.core import _evaluate, bucket_env
        from kernlint.recommend.source import read_kernel_source
        tgt = _resolve_target(target)
        path, name = _kernel_file(at)
        kernel = _analysis(path, name, tgt)
        if kernel is None:
            return list(configs)
        spec = resolve_target(tgt)
        src = read_kernel_source(kernel.jit.path, name)
        shape = {k: v for k, v in {**named_args, **kwargs}.items() if isinstance(v, int) and not isinstance(v, bool)}
        env = bucket_env(kernel, src, shape)
        scored = []
        for i, c in enumerate(configs):
            cand = _evaluate(kernel, src, spec, dict(c.kwargs), c.num_warps, c.num_stages, env)
            if cand is not None:
                scored.append((cand.score.time_us, i, c))
        if not scored:
            log.warning("kernlint.triton.prune: no config of %s judged to fit; keeping all", name)
            return list(configs)
        scored.sort(key=lambda t: (t[0], t[1]))
        kept = [c for _, _, c in scored]
        if keep_infeasible:
            kept += [c for c in configs if c not in kept]
        return kept

    return early_config_prune


def seed_configs(kernel: Any, k: int = 5, target: str = "auto", shape: Mapping[str, Any] | None = None) -> list[Any]:
    """kernlint's top-k configs for `kernel` (a @triton.jit or @triton.autotune object) as triton.Config."""
    from triton import Config

    from kernlint.hardware.specs import resolve_target
    from kernlint.recommend.core import buckets_for, minimax, recommend
    tgt = _resolve_target(target)
    path, name = _kernel_file(kernel)
    analysis = _analysis(path, name, tgt)
    if analysis is None:
        return []
    spec = resolve_target(tgt)
    buckets = [dict(shape)] if shape else buckets_for(analysis, None)
    recs = [recommend(analysis, spec, b, top_k=max(k, 50)) for b in buckets]
    ranked = recs[0].ranked if len(recs) == 1 else []
    if len(recs) > 1:   # shapes unknown: minimax pick first, then each bucket's best
        first = minimax(recs)
        ranked = ([first] if first else []) + [r.ranked[0] for r in recs if r.ranked]
    out, seen = [], set()
    for c in ranked:
        if c.label() in seen:
            continue
        seen.add(c.label())
        kw = {n: v for n, v in c.constexprs.items() if not shape or n not in shape}
        out.append(Config(kw, num_warps=c.num_warps, num_stages=c.num_stages))
    return out[:k]
