"""Which configs of a public kernel to compile: kernlint's config points with the stated defaults filled in
(the defaults and the facts they rest on are in public_specs.py). Used by benchmarks/public_accuracy.py."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.public_specs import (DEFAULT_BLOCK_SETS, DEFAULT_CONSTEXPR, DEFAULT_UNROLL, LAUNCH_KEYS,  # type: ignore[import-not-found]
                          condition_only, unroll_bound, used_as_dtype)

from kernlint.analysis.configs import ConfigPoint
from kernlint.frontend.facts import JitFunction


@dataclass
class ConfigPlan:
    configs: list[dict[str, Any]] = field(default_factory=list)   # constexprs + num_warps/num_stages
    origins: list[str] = field(default_factory=list)
    skip: str | None = None                                        # why no config could be derived


def spread(items: list[Any], n: int) -> list[Any]:
    """n items spread evenly over the list (first and last included), in order."""
    if len(items) <= n:
        return list(items)
    if n == 1:
        return [items[len(items) // 2]]
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)]


def plan_configs(jit: JitFunction, points: tuple[ConfigPoint, ...], block_names: set[str],
                 max_configs: int, helper: Callable[[str], JitFunction | None] = lambda n: None) -> ConfigPlan:
    """Configs to compile: kernlint's config points (autotune > launch > default), unknown values filled by
    the stated defaults; at most ``max_configs``, spread over the autotune list."""
    plan = ConfigPlan()
    by_origin = {o: [p for p in points if p.origin == o] for o in ("autotune", "launch", "default")}
    chosen = by_origin["autotune"] or by_origin["launch"] or by_origin["default"]
    reasons: list[str] = []
    for p in spread(chosen, max_configs):
        base = {k: v for k, v in p.constexprs.items() if isinstance(v, (int, float, bool, str, type(None)))}
        missing = [n for n in jit.constexpr_names if n not in base]
        unrolls = [n for n in missing if unroll_bound(jit, n)]
        base.update({n: DEFAULT_UNROLL for n in unrolls})
        missing = [n for n in missing if n not in unrolls]
        # a flag that picks a tile (`acc = tl.zeros([BT, BK]) if USE_DW else None`) is in the IR's shapes
        # through that choice, but it is still a flag, not a block size
        flags = [n for n in missing if condition_only(jit, n, helper)]
        blocks = [n for n in missing if n in block_names and n not in flags]
        other = [n for n in missing if n not in blocks and n not in flags]
        dtypes = [n for n in other if used_as_dtype(jit, n)]
        if dtypes:
            reasons.append(f"dtype constexpr {dtypes[0]}: {p.unknown.get(dtypes[0], 'no value')}"[:160])
            continue
        base.update({n: False for n in flags})
        base.update({n: DEFAULT_CONSTEXPR for n in other})
        origin = p.origin + (f"+{DEFAULT_CONSTEXPR} for {','.join(other)}" if other else "") + \
            (f"+False for {','.join(flags)}" if flags else "") + \
            (f"+{DEFAULT_UNROLL} for {','.join(unrolls)}" if unrolls else "")
        launch = {"num_warps": p.num_warps, "num_stages": p.num_stages, **({"maxnreg": p.maxnreg} if p.maxnreg else {})}
        if not blocks:
            plan.configs.append({**base, **launch})
            plan.origins.append(origin)
            continue
        for size, warps in DEFAULT_BLOCK_SETS:
            nw = p.num_warps if "num_warps" not in p.defaulted else warps
            plan.configs.append({**base, **dict.fromkeys(blocks, size), **launch, "num_warps": nw})
            plan.origins.append(f"{origin}+default blocks")
    unique: dict[str, tuple[dict[str, Any], str]] = {}
    for cfg, origin in zip(plan.configs, plan.origins):
        unique.setdefault(repr(sorted(cfg.items(), key=lambda kv: kv[0])), (cfg, origin))
    kept = spread(list(unique.values()), max_configs)
    plan.configs = [c for c, _ in kept]
    plan.origins = [o for _, o in kept]
    if not plan.configs:
        plan.skip = reasons[0] if reasons else "no config point"
    return plan


def split_config(cfg: dict[str, Any], block_names: set[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Record form: (config: block sizes + launch options, constexprs: the other constexprs)."""
    config = {k: v for k, v in cfg.items() if k in block_names or k in LAUNCH_KEYS}
    return config, {k: v for k, v in cfg.items() if k not in config}
