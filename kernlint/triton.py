"""Autotune helpers: `prune(target="auto")` for `prune_configs_by={"early_config_prune": ...}` and
`seed_configs(kernel, k=5)`. Both analyse the kernel's source with kernlint (libcst, never executed),
once per kernel, and import triton only to build `triton.Config`s.

Neither may crash the user's program: `prune` runs inside Triton's autotuner at launch. An analysis that
fails (the file cannot be read or parsed, kernlint's own internal error, an unknown $KERNLINT_TARGET) is
one log line per kernel, and the author's configs are used unchanged.
"""
from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger("kernlint.triton")
_told: set[tuple[str, ...]] = set()     # (what, path, name, target) already logged: one line per kernel


@functools.lru_cache(maxsize=128)
def _analysis_or_reason(path: str, name: str, target: str) -> tuple[Any, str]:
    from kernlint.pipeline.api import Settings, lint_paths
    res = lint_paths([path], Settings(targets=(target,)))
    kernel = next((k for f in res.files for k in f.kernels if k.jit.name == name), None)
    if kernel is not None:
        return kernel, ""
    errors = [f"{d.code} {d.message}" for f in res.files for d in f.diagnostics if d.code in ("KL000", "KL001")]
    errors += [f"internal error: {f.internal_error}" for f in res.files if f.internal_error]
    return None, errors[0] if errors else f"kernlint found no @triton.jit kernel named {name!r} in {path}"


def _analysis(path: str, name: str, target: str) -> Any:
    """The kernel's analysis, or None (why: `_analysis_or_reason`)."""
    return _analysis_or_reason(path, name, target)[0]


def _resolve_target(target: str) -> str:
    """A target key; "auto" is $KERNLINT_TARGET (resolved like --target), else the current GPU, else h100.
    Raises UnknownTarget for an unknown name or $KERNLINT_TARGET (callers log it)."""
    from kernlint.hardware.specs import resolve_target
    if target != "auto":
        return resolve_target(target).key
    from kernlint.shim.target import describe_target, env_target
    return env_target() or describe_target()[0] or "h100"


def _kernel_file(kernel: Any) -> tuple[str, str]:
    fn = kernel
    while hasattr(fn, "fn"):          # Autotuner → Heuristics → JITFunction → python function
        fn = fn.fn
    return inspect.getsourcefile(fn) or "", fn.__name__


def _warn_once(level: int, key: tuple[str, ...], msg: str, *args: Any) -> None:
    if key not in _told:
        _told.add(key)
        log.log(level, msg, *args)


def _analyse(kernel: Any, target: str, who: str) -> tuple[Any, Any, str, str] | None:
    """(analysis, spec, path, name) for `kernel`, or None after logging why once (target errors: ERROR,
    analysis failures: WARNING)."""
    from kernlint.hardware.specs import UnknownTarget, resolve_target
    path, name = _kernel_file(kernel)
    try:
        tgt = _resolve_target(target)
    except UnknownTarget as exc:
        _warn_once(logging.ERROR, ("target", path, name, target), "kernlint.triton.%s: %s: %s; the author's "
                   "configs are used unchanged", who, name, exc)
        return None
    try:
        analysis, reason = _analysis_or_reason(path, name, tgt)
    except Exception as exc:  # noqa: BLE001 - kernlint's own failure must not stop the user's program
        analysis, reason = None, f"internal error {type(exc).__name__}: {str(exc)[:200]}"
    if analysis is None:
        _warn_once(logging.WARNING, ("analysis", who, path, name, tgt), "kernlint.triton.%s: %s could not be "
                   "analysed (%s); the author's configs are used unchanged", who, name, reason)
        return None
    return analysis, resolve_target(tgt), path, name


def prune(target: str = "auto", keep_infeasible: bool = False) -> Callable[..., list[Any]]:
    """An `early_config_prune`: drops configs that cannot fit (shared/tensor memory, >2× register demand)
    and orders the rest by kernlint's time model for the launch's integer arguments. Never returns an
    empty list: if nothing is judged to fit, the configs are returned unchanged (and that is logged)."""
    if target != "auto":
        from kernlint.hardware.specs import resolve_target
        resolve_target(target)        # an unknown explicit target fails here, at decoration, not at launch

    def early_config_prune(configs: list[Any], named_args: Mapping[str, Any], **kwargs: Any) -> list[Any]:
        at = inspect.currentframe().f_back.f_locals.get("self")  # type: ignore[union-attr]
        if at is None or not hasattr(at, "base_fn"):
            return list(configs)
        got = _analyse(at, target, "prune")
        if got is None:
            return list(configs)
        kernel, spec, _, name = got
        try:
            scored = _score(kernel, spec, name, configs, {**named_args, **kwargs})
        except Exception as exc:  # noqa: BLE001 - a model failure on one config list: keep the author's
            _warn_once(logging.WARNING, ("score", kernel.jit.path, name, spec.key), "kernlint.triton.prune: %s: "
                       "internal error %s: %s; the author's configs are used unchanged", name,
                       type(exc).__name__, str(exc)[:200])
            return list(configs)
        if not scored:
            log.warning("kernlint.triton.prune: no config of %s judged to fit; keeping all", name)
            return list(configs)
        scored.sort(key=lambda t: (t[0], t[1]))
        kept = [c for _, _, c in scored]
        if keep_infeasible:
            kept += [c for c in configs if c not in kept]
        return kept

    return early_config_prune


def _score(kernel: Any, spec: Any, name: str, configs: list[Any],
           args: Mapping[str, Any]) -> list[tuple[float, int, Any]]:
    from kernlint.recommend.core import _evaluate, bucket_env
    from kernlint.frontend.host_facts import read_kernel_source
    src = read_kernel_source(kernel.jit.path, name)
    shape = {k: v for k, v in args.items() if isinstance(v, int) and not isinstance(v, bool)}
    env = bucket_env(kernel, src, shape)
    scored = []
    for i, c in enumerate(configs):
        cand = _evaluate(kernel, src, spec, dict(c.kwargs), c.num_warps, c.num_stages, env)
        if cand is not None:
            scored.append((cand.score.time_us, i, c))
    return scored


def seed_configs(kernel: Any, k: int = 5, target: str = "auto", shape: Mapping[str, Any] | None = None) -> list[Any]:
    """kernlint's top-k configs for `kernel` (a @triton.jit or @triton.autotune object) as triton.Config;
    [] (logged once) when the kernel cannot be analysed. An unknown explicit `target` raises UnknownTarget."""
    from triton import Config

    from kernlint.recommend.core import buckets_for, minimax, recommend
    if target != "auto":
        from kernlint.hardware.specs import resolve_target
        resolve_target(target)
    got = _analyse(kernel, target, "seed_configs")
    if got is None:
        return []
    analysis, spec, _, name = got
    try:
        buckets = [dict(shape)] if shape else buckets_for(analysis, None)
        recs = [recommend(analysis, spec, b, top_k=max(k, 50)) for b in buckets]
    except Exception as exc:  # noqa: BLE001 - kernlint's failure: no seeds, the author's configs stay
        _warn_once(logging.WARNING, ("seed", analysis.jit.path, name, spec.key), "kernlint.triton.seed_configs: "
                   "%s: internal error %s: %s; no seeds", name, type(exc).__name__, str(exc)[:200])
        return []
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
