"""Invariants every lint result must satisfy, shared by the CI fuzz tests and benchmarks/fuzz.py.

Each check returns a list of human-readable violations (empty = fine) instead of asserting, so the
benchmark can count and group them while the tests simply assert the list is empty.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from typing import Any

from kernlint.pipeline.api import LintResult, Settings, lint_source, lint_sources

# Fields that hold inputs (the GPU table, the config) rather than computed numbers.
_SKIP_FIELDS = {"target", "config", "op"}


def _numbers(obj: Any, path: str, depth: int = 0) -> Iterator[tuple[str, float]]:
    if depth > 6 or obj is None or isinstance(obj, (str, bool)):
        return
    if isinstance(obj, (int, float)):
        yield path, obj
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            if f.name not in _SKIP_FIELDS:
                yield from _numbers(getattr(obj, f.name), f"{path}.{f.name}", depth + 1)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _numbers(v, f"{path}[{k}]", depth + 1)
    elif isinstance(obj, (tuple, list)):
        for i, v in enumerate(obj):
            yield from _numbers(v, f"{path}[{i}]", depth + 1)


def crash_violations(result: LintResult) -> list[str]:
    """No internal error and no KL000 diagnostic: every failure must be an ordinary diagnostic."""
    out = list(result.internal_errors)
    out += [f"KL000 {d.message}" for d in result.diagnostics if d.code == "KL000"]
    return out


def estimate_violations(result: LintResult) -> list[str]:
    """Every number an estimate carries is finite and non-negative."""
    out: list[str] = []
    for f in result.files:
        for k in f.kernels:
            for e in k.estimates:
                for name in ("registers", "smem", "occupancy", "dots"):
                    for path, value in _numbers(getattr(e, name), name):
                        if not math.isfinite(value) or value < 0:
                            out.append(f"{k.jit.name} {e.target.key} [{e.config.label()}]: {path} = {value}")
    return out


def fingerprint(result: LintResult) -> tuple[Any, ...]:
    """Everything a user can see: diagnostics plus every estimate's numbers, in order."""
    estimates = tuple((e.kernel, e.target.key, e.config.key, repr(e.registers), repr(e.smem), repr(e.occupancy),
                       e.missing, e.assumptions)
                      for f in result.files for k in f.kernels for e in k.estimates)
    return tuple(result.diagnostics), estimates


def lint_checked(source: str | bytes, settings: Settings, path: str = "fuzz.py",
                 twice: bool = True) -> tuple[LintResult, list[str]]:
    """Lint `source` (twice unless told not to); return the first result and all invariant violations."""
    data = source.encode("utf-8") if isinstance(source, str) else source
    try:
        first = lint_sources([(path, data)], settings)
        second = lint_sources([(path, data)], settings) if twice else first
    except Exception as exc:  # lint_source must never raise: this is itself the finding
        raise AssertionError(f"exception escaped lint_source: {type(exc).__name__}: {exc}") from exc
    problems = crash_violations(first) + estimate_violations(first)
    if fingerprint(first) != fingerprint(second):
        problems.append("non-deterministic: two runs on the same input differ")
    return first, problems


# Scratch whose size follows the blocked layout Triton picks, not the tile: a bigger tile can get a wider
# vector per thread and fewer warps across the reduced axis, so it can need less. Measured (Triton 3.9,
# sm_80/90/100, tests/analysis/test_smem_reduce.py::test_runtime_inner_stride_loads_one_element_per_thread): a
# column-min of a unit-stride [BLOCK_M, 32] fp16 tile at 8 warps takes 1,024 B at BLOCK_M 32, 512 B at 64.
_LAYOUT_SCRATCH = ("scratch", "conversion", "layout")


def _has_layout_scratch(smem: Any) -> bool:
    return any(any(word in b.label for word in _LAYOUT_SCRATCH) for b in smem.buffers)


def monotonic_violations(source: str, kernel: str, base: dict[str, Any], bumped: dict[str, Any], knob: str,
                         settings: Settings) -> list[str]:
    """Shared memory of `kernel` under `bumped` (one knob increased) must not be below that under `base`,
    unless layout-dependent scratch is part of either peak (it is not monotonic in Triton either)."""
    s = dataclasses.replace(settings, cli_configs=(base, bumped))
    result = lint_source(source, "mono.py", s)
    out = crash_violations(result)
    for f in result.files:
        for k in f.kernels:
            if k.jit.name != kernel:
                continue
            cli = [i for i, p in enumerate(k.points) if p.origin == "cli"]
            if len(cli) != 2:
                continue  # the two configs collapsed (knob not a parameter): nothing to compare
            n = len(k.estimates) // max(1, len(k.points))
            for t in range(n):
                lo, hi = k.estimates[cli[0] * n + t], k.estimates[cli[1] * n + t]
                if lo.smem is None or hi.smem is None or not (lo.smem.complete and hi.smem.complete):
                    continue  # unknown shapes: no number to compare
                if hi.smem.total < lo.smem.total and not (_has_layout_scratch(lo.smem) or _has_layout_scratch(hi.smem)):
                    out.append(f"smem fell from {lo.smem.total} to {hi.smem.total} B on {lo.target.key} when "
                               f"{knob} went {base.get(knob)} -> {bumped.get(knob)} [{lo.config.label()}]")
    return out
