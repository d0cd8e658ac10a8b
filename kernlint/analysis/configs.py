"""Which configs a kernel is analysed under, and where each came from (for anchoring diagnostics)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kernlint.frontend.arg_values import ArgValueError, parse_arg_value
from kernlint.frontend.facts import NO_DEFAULT, ConfigOrigin, JitFunction, LaunchSite
from kernlint.frontend.static_eval import LAUNCH_OPTIONS, StaticEvaluator
from kernlint.ir.symbolic import Unknown

# Triton's defaults when a launch or Config does not say (triton.Config / CUDAOptions in 3.4-3.9).
DEFAULT_NUM_WARPS = 4
DEFAULT_NUM_STAGES = 3


@dataclass(frozen=True, slots=True)
class ConfigPoint:
    constexprs: Mapping[str, Any]
    num_warps: int
    num_stages: int
    origin: ConfigOrigin
    line: int
    col: int = 0
    maxnreg: int | None = None
    unknown: Mapping[str, str] = field(default_factory=dict)   # constexpr → why its value is unknown
    defaulted: tuple[str, ...] = ()                            # names that took Triton's defaults
    invalid: str | None = None                                 # why Triton refuses these launch options
    # set when the kernel is autotuned but its config list could not be read (a data file, a call kernlint
    # cannot evaluate): this point stands in for configs nobody stated, and the output says so
    source_note: str | None = None

    @property
    def key(self) -> tuple[Any, ...]:
        return (tuple(sorted((k, repr(v)) for k, v in self.constexprs.items())), self.num_warps,
                self.num_stages, self.maxnreg)

    def label(self) -> str:
        # numbers and strings (`ACTIVATION="gelu"`, `--config BLOCK=abc`, shown so a typo is visible); flags and
        # dtypes stay out of the label
        parts = [f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in self.constexprs.items()
                 if isinstance(v, (int, float, str)) and not isinstance(v, bool)]
        parts += [f"num_warps={self.num_warps}", f"num_stages={self.num_stages}"]
        if self.maxnreg:
            parts.append(f"maxnreg={self.maxnreg}")
        return ", ".join(parts)


def parse_config_option(text: str) -> dict[str, Any]:
    """`BLOCK_M=128,num_warps=8` → {"BLOCK_M": 128, "num_warps": 8} (ints, floats, True/False)."""
    out: dict[str, Any] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise ValueError(f"bad --config item {part!r}: expected NAME=VALUE")
        name, raw = (s.strip() for s in part.split("=", 1))
        value: Any
        if raw in ("True", "False"):
            value = raw == "True"
        else:
            try:
                value = int(raw, 0)
            except ValueError:
                try:
                    value = float(raw)
                except ValueError:
                    value = raw
        out[name] = value
    for name in ("num_warps", "num_stages", "maxnreg"):
        if name in out and (not isinstance(out[name], int) or isinstance(out[name], bool)):
            raise ValueError(f"bad --config item {name}={out[name]!r}: expected an integer")
    why = invalid_launch_options(out.get("num_warps", DEFAULT_NUM_WARPS), out.get("num_stages", DEFAULT_NUM_STAGES),
                                 out.get("maxnreg"))
    if why:
        raise ValueError(f"bad --config: {why}")
    return out


def given_arg_values(jit: JitFunction, arg_types: Mapping[str, str]) -> dict[str, Any]:
    """The `--arg` values that hold in every config: constexprs given a value or a dtype (`FLAG=True`,
    `ACC_DTYPE=tl.int32`) and arguments passed as None, which `@triton.heuristics` lambdas may test
    (`lambda args: args["BIAS"] is not None`)."""
    out: dict[str, Any] = {}
    for p in jit.params:
        text = arg_types.get(p.name)
        if text is None:
            continue
        try:
            given = parse_arg_value(p.name, text)
            if p.is_constexpr:
                out[p.name] = given.constexpr_value()
            elif given.is_none:
                out[p.name] = None
        except ArgValueError:
            continue
    return out


def launch_pointees(jit: JitFunction, launches: list[LaunchSite]) -> dict[str, tuple[str, str]]:
    """Parameter → (element type, why) that every launch site agrees on (a launcher's dtype assert, the dtype
    of a tensor it allocates and passes); a parameter the launches disagree on is left to other evidence."""
    by_index = {p.index: p.name for p in jit.params}
    seen: dict[str, set[tuple[str, str]]] = {}
    for site in launches:
        for slot, dtype, why in site.arg_dtypes:
            name = by_index.get(slot) if isinstance(slot, int) else slot
            if name is not None:
                seen.setdefault(name, set()).add((dtype, why))
    return {name: min(ev, key=lambda e: e[1]) for name, ev in seen.items() if len({d for d, _ in ev}) == 1}


def _point(jit: JitFunction, values: Mapping[str, Any], options: Mapping[str, Any], origin: ConfigOrigin,
           line: int, col: int, evaluator: StaticEvaluator | None, pre_unknown: Mapping[str, str],
           given: Mapping[str, Any] | None = None) -> ConfigPoint:
    constexprs: dict[str, Any] = {}
    unknown: dict[str, str] = dict(pre_unknown)
    defaulted: list[str] = []
    given = given or {}
    for p in jit.params:
        if not p.is_constexpr:
            continue
        if p.name in given:
            constexprs[p.name] = given[p.name]
        elif p.name in values and not isinstance(values[p.name], Unknown):
            constexprs[p.name] = values[p.name]
        elif p.name in values:
            unknown[p.name] = values[p.name].reason
        elif p.default is not NO_DEFAULT and not isinstance(p.default, Unknown):
            constexprs[p.name] = p.default
            defaulted.append(p.name)
    # @triton.heuristics lambdas that only read constexprs of this config evaluate statically.
    if evaluator is not None:
        for h in jit.heuristics:
            if h.body is None or h.name in constexprs:
                continue
            value = evaluator.evaluate(h.body, {h.arg_name: {**given, **constexprs}})
            if isinstance(value, Unknown):
                unknown[h.name] = f"set by @triton.heuristics `{h.source}` at line {h.line}"
            else:
                constexprs[h.name] = value
                unknown.pop(h.name, None)
    for name in list(unknown):
        if name in constexprs:
            del unknown[name]
    nw, ns = options.get("num_warps"), options.get("num_stages")
    if not isinstance(nw, int) or isinstance(nw, bool):
        defaulted.append("num_warps")
        nw = DEFAULT_NUM_WARPS
    if not isinstance(ns, int) or isinstance(ns, bool):
        defaulted.append("num_stages")
        ns = DEFAULT_NUM_STAGES
    maxnreg = options.get("maxnreg")
    maxnreg = maxnreg if isinstance(maxnreg, int) and not isinstance(maxnreg, bool) else None
    return ConfigPoint(constexprs, nw, ns, origin, line, col, maxnreg, unknown, tuple(defaulted),
                       invalid_launch_options(nw, ns, maxnreg))


def invalid_launch_options(num_warps: int, num_stages: int, maxnreg: int | None) -> str | None:
    """Why Triton would refuse these launch options, or None. triton/backends/nvidia/compiler.py
    (CUDAOptions.__post_init__, Triton 3.6 and 3.9) asserts "num_warps must be a power of 2"; a negative
    stage count or register cap means nothing to it. The estimator never sees such a point: a negative warp
    count used to size layouts without bound (memory exhausted) and 0 divided by zero."""
    if num_warps <= 0 or num_warps & (num_warps - 1):
        return f"num_warps={num_warps} is not a power of two: Triton refuses to compile it"
    if num_stages < 0:
        return f"num_stages={num_stages} is negative"
    if maxnreg is not None and maxnreg <= 0:
        return f"maxnreg={maxnreg} is not a positive register count"
    return None


def config_points(jit: JitFunction, launches: list[LaunchSite], cli_configs: list[dict[str, Any]],
                  evaluator: StaticEvaluator | None = None, given: Mapping[str, Any] | None = None) -> list[ConfigPoint]:
    """Autotune configs, each launch site's explicit values, CLI configs; Triton defaults otherwise. `given`:
    values `--arg` fixes for every config (given_arg_values)."""
    points: list[ConfigPoint] = []
    for raw in cli_configs:
        values = {k: v for k, v in raw.items() if k not in LAUNCH_OPTIONS}
        points.append(_point(jit, values, raw, "cli", jit.line, 0, evaluator, {}, given))
    if jit.autotune is not None:
        for cfg in jit.autotune.configs:
            points.append(_point(jit, cfg.kwargs, cfg.options, "autotune", cfg.line, cfg.col, evaluator,
                                 cfg.unknown, given))
    for site in launches:
        values = {k: v for k, v in site.kwargs.items() if k not in LAUNCH_OPTIONS}
        options = {k: v for k, v in site.kwargs.items() if k in LAUNCH_OPTIONS}
        if jit.autotune is not None and jit.autotune.configs:
            continue  # the autotuner supplies block sizes and launch options; the launch passes data only
        points.append(_point(jit, values, options, "launch", site.line, site.col, evaluator, {}, given))
    if not points:
        points.append(_point(jit, {}, {}, "default", jit.line, 0, evaluator, {}, given))
    if jit.autotune is not None and not jit.autotune.configs:
        why = jit.autotune.unknown_reason or "no configs"
        points = [replace(p, source_note=f"autotune configs not read ({why}): analysed with "
                                         f"{'the launch values' if p.origin == 'launch' else 'Triton defaults'} "
                                         f"instead, which the autotuner may never run")
                  if p.origin in ("launch", "default") else p for p in points]
    unique: dict[tuple[Any, ...], ConfigPoint] = {}
    for p in points:
        unique.setdefault((p.origin, p.line, p.key), p)
    return list(unique.values())
