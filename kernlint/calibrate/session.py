"""`kernlint calibrate`: configs × targets → estimate next to Triton/ptxas truth, with a cache and a pool.

Flow: parse the kernel's file (and its helpers' files) → scratch module (never the user's module) →
signature with stated defaults → kernlint's own estimates for every config → compile what is not cached in
worker processes → rows. Cache entries live in ``<cache_dir>/<key[:2]>/<key>.json``, keyed by the scratch
module's hash (kernel + helpers + constants), arguments, constexprs, launch options, capability, Triton
version and ptxas versions, so a changed kernel, helper or toolchain never reuses a stale number.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernlint.analysis.configs import ConfigPoint, config_points
from kernlint.analysis.estimate import KernelEstimate, estimate
from kernlint.analysis.occupancy import compute_occupancy
from kernlint.calibrate.scratch import ScratchModule, build_scratch, find_kernel, source_tree_for
from kernlint.calibrate.signature import (
    ArgSpec, compile_args, derive_signature, lint_arg_types, pointer_args, unit_stride_args,
)
from kernlint.calibrate.sweep import plan as sweep_plan
from kernlint.calibrate.worker import TritonMissing, WorkerCrashed, WorkerPool
from kernlint.frontend.static_eval import StaticEvaluator
from kernlint.hardware.specs import GpuSpec, resolve_targets

CACHE_SCHEMA = 1
DEFAULT_CACHE_DIR = Path(".kernlint_cache") / "calibrate"
INSTALL_HINT = "kernlint calibrate needs Triton: pip install 'kernlint[triton]'"


@dataclass
class Row:
    target: GpuSpec
    point: ConfigPoint
    origin: str                           # autotune / launch / default / cli / sweep
    estimate: KernelEstimate | None
    truth: dict[str, Any] | None = None   # triton_compile.RESULT_FIELDS
    error: str | None = None              # why there is no truth (Triton's message, missing constexpr, ...)
    cached: bool = False

    @property
    def config_label(self) -> str:
        return self.point.label()

    @property
    def truth_oor(self) -> bool | None:
        t = self.truth
        if not t or t.get("shared") is None:
            return None
        return t["shared"] > self.target.smem_per_cta_optin or bool(
            self.target.tmem_columns and (t.get("tmem") or 0) > self.target.tmem_columns)

    @property
    def truth_ctas(self) -> int | None:
        t = self.truth
        if not t or t.get("regs") is None or t.get("shared") is None:
            return None
        warps = t.get("num_warps_compiled") or self.point.num_warps
        return compute_occupancy(self.target, warps, t["regs"], t["shared"]).ctas_per_sm


@dataclass
class Calibration:
    path: str
    kernel: str
    scratch: ScratchModule
    signature: list[ArgSpec]
    assumptions: list[str]
    env: dict[str, Any]
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)   # one line each under the table (what --sweep held)


class CalibrateError(Exception):
    """A usage problem: bad spec, unknown kernel, Triton missing (exit code 2)."""


def _cache_key(scratch: ScratchModule, task: dict[str, Any], env: dict[str, Any]) -> str:
    blob = {"schema": CACHE_SCHEMA, "scratch": scratch.sha256, "kernel": task["kernel"], "args": task["args"],
            "constexprs": task["constexprs"], "config": task["config"], "cap": task["cap"],
            "triton": env.get("triton_version"), "ptxas": env.get("ptxas_version"),
            "ptxas_blackwell": env.get("ptxas_blackwell_version")}
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=repr).encode()).hexdigest()


class Cache:
    def __init__(self, directory: Path | None) -> None:
        self.dir = directory

    def get(self, key: str) -> dict[str, Any] | None:
        if self.dir is None:
            return None
        try:
            record = json.loads((self.dir / key[:2] / f"{key}.json").read_text())
        except (OSError, ValueError, RecursionError):
            return None
        return record if _well_formed(record) else None   # anything else is a miss: compiled again

    def put(self, key: str, record: dict[str, Any]) -> None:
        err = record.get("error") or ""
        if self.dir is None or "timed out" in err or "worker died" in err:
            return  # not a property of the kernel: try again next time
        path = self.dir / key[:2] / f"{key}.json"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(record))
        except OSError:
            pass  # a read-only tree only loses the cache


def _well_formed(record: Any) -> bool:
    """A cached compile: Triton's error message, or the integer counts every compile reports. A damaged
    entry (`[1, 2]`, `{}`, `{"regs": "20"}`) used to crash the table or be shown as a 0-register truth."""
    if not isinstance(record, dict):
        return False
    if isinstance(record.get("error"), str) and record["error"]:
        return True
    return all(isinstance(record.get(k), int) and not isinstance(record.get(k), bool)
               for k in ("regs", "shared", "spill_store"))


def prepare(kernel_spec: str, targets: tuple[str, ...] = ("h100",), configs: tuple[dict[str, Any], ...] = (),
            sweep: bool = False, args: dict[str, str] | None = None, max_configs: int = 48,
            ) -> tuple[Calibration, list[tuple[Row, dict[str, Any] | None]]]:
    """Everything before compiling: scratch module, signature, configs, estimates, compile requests."""
    from kernlint.pipeline.api import Settings, lint_sources

    path, _, name = kernel_spec.partition("::")
    tree, pm = source_tree_for(path)
    jit = find_kernel(pm, name or None)
    scratch = build_scratch(tree, pm, jit)
    signature = derive_signature(jit, pointer_args(jit, pm, tree), args or {}, unit_stride_args(jit, pm, tree))
    call_args, fixed = compile_args(signature)
    specs = resolve_targets(targets)
    sources = [(m.label, m.data) for m in tree.modules.values() if m.label in scratch.files]
    result = lint_sources(sources, Settings(targets=targets, cli_configs=configs,
                                            arg_types=lint_arg_types(signature)))
    ka = next((k for f in result.files if f.path == pm.label for k in f.kernels if k.jit.qualname == jit.qualname),
              None)
    if ka is None:
        raise CalibrateError(f"kernlint found no analysable kernel {jit.qualname} in {path}")
    points = [(p, p.origin) for p in ka.points]
    if fixed:  # --arg CONST=value fixes a constexpr in every config; before the sweep, which must hold it
        points = [(dataclasses.replace(p, constexprs={**p.constexprs, **fixed},
                                       unknown={k: v for k, v in p.unknown.items() if k not in fixed}), o)
                  for p, o in points]
    notes: list[str] = []
    if sweep and points:
        plan = sweep_plan(ka.ir, ka.jit.constexpr_names, [p for p, _ in points], fixed, path, jit.name,
                          max_configs)
        ev = StaticEvaluator(pm.names, pm.facts.constants)
        seen = {p.key for p, _ in points}
        extra: list[ConfigPoint] = []
        for cfg in plan.configs:
            for p in config_points(ka.jit, [], [cfg], ev):
                if p.key not in seen:
                    seen.add(p.key)
                    extra.append(p)
        # nearest-first chose them; show them in a readable order (block sizes, then warps, then stages)
        extra.sort(key=lambda p: (tuple(v for v in p.constexprs.values() if isinstance(v, int)), p.num_warps,
                                  p.num_stages))
        points += [(p, "sweep") for p in extra]
        note = plan.note()
        if note:
            notes.append(note)
    cal = Calibration(path, jit.qualname, scratch, signature, list(ka.ir.assumptions), {}, notes=notes)
    work: list[tuple[Row, dict[str, Any] | None]] = []
    for spec in specs:
        for p, origin in points:
            row = Row(spec, p, origin, estimate(ka.ir, p, spec))
            if scratch.refused:   # the scratch module is not even written: nothing of the kernel runs
                row.error = f"not compiled: {scratch.refused[0]}"
                work.append((row, None))
                continue
            missing = [n for n in ka.jit.constexpr_names if n not in p.constexprs]
            bad = [n for n, v in p.constexprs.items() if not isinstance(v, (int, float, bool, str, type(None)))]
            if missing or bad:
                why = "; ".join(f"{n}: {p.unknown.get(n, 'no value')}" for n in missing) or \
                    f"constexpr {bad[0]} = {p.constexprs[bad[0]]!r} cannot be passed to Triton"
                row.error = f"not compiled: {why} (give it with --config {(missing or bad)[0]}=... or --arg)"
                work.append((row, None))
                continue
            options = {"num_warps": p.num_warps, "num_stages": p.num_stages, **({"maxnreg": p.maxnreg} if p.maxnreg else {})}
            work.append((row, {"kernel": scratch.kernel, "args": call_args, "constexprs": dict(p.constexprs),
                               "config": options, "cap": spec.capability}))
    return cal, work


def attribute_error(message: str, cal: Calibration) -> str:
    """Where in the user's files a compile error is. Triton's 'at L:C' counts from the `def` of the jit function
    that failed (kernel or helper); the failing source line it quotes is looked up in the scratch module and
    mapped back (`rej.py:7`, in a helper). Errors that are not about a source line are left as they are."""
    for name, why in cal.scratch.unevaluated:   # left out of the scratch module, and the kernel needed it
        short = name.rpartition(".")[2]
        if re.search(rf"\b{re.escape(short)}\b.*not defined|not defined.*\b{re.escape(short)}\b", message):
            return f"not compiled: module constant {name} does not evaluate statically ({why}); " \
                   f"give it a literal value or pass it with --config/--arg"
    m = re.search(r"\bat \d+:\d+ `([^`]+)`", message)
    if m:
        hits = [i for i, line in enumerate(cal.scratch.source.splitlines(), 1) if line.strip() == m.group(1)]
        place = cal.scratch.original_location(hits[0]) if len(hits) == 1 else None
        if place:
            return f"{message} [at {place}]"
    if not re.search(r"\bat \d+:\d+", message):
        return message   # a timeout, a dead worker, ptxas: no source position to explain
    span = cal.scratch.spans[-1] if cal.scratch.spans else None
    where = f"{span.label}:{span.orig_line}" if span else cal.path
    return f"{message} [{cal.kernel} at {where}; Triton counts lines from the failing function's def]"


def run(kernel_spec: str, targets: tuple[str, ...] = ("h100",), configs: tuple[dict[str, Any], ...] = (),
        sweep: bool = False, args: dict[str, str] | None = None, jobs: int = 2, python: str | None = None,
        cache_dir: Path | None = DEFAULT_CACHE_DIR, max_configs: int = 48, timeout_s: int = 600,
        progress: Callable[[int, int], None] | None = None) -> Calibration:
    """Calibrate one kernel. ``progress(done, total)`` is called as compiles finish (for a progress bar)."""
    cal, work = prepare(kernel_spec, targets, configs, sweep, args, max_configs)  # spec errors first
    compile_work(cal, work, jobs, python, cache_dir, timeout_s, progress)
    cal.rows = [row for row, _ in work]
    return cal


def compile_work(cal: Calibration, work: list[tuple[Row, dict[str, Any] | None]], jobs: int = 2,
                 python: str | None = None, cache_dir: Path | None = DEFAULT_CACHE_DIR, timeout_s: int = 600,
                 progress: Callable[[int, int], None] | None = None) -> None:
    """Compile (or read from the cache) the given rows of ``prepare``'s work list; sets truth/error on them
    (``calibrate --anchor`` compiles one row first and the rest only with --verify)."""
    if python is None and importlib.util.find_spec("triton") is None:
        raise CalibrateError(INSTALL_HINT)
    cache = Cache(cache_dir)
    with tempfile.TemporaryDirectory(prefix="kernlint_scratch_") as tmp, \
            WorkerPool(python, jobs) as pool:
        try:
            cal.env = pool.environment()
        except TritonMissing:
            raise CalibrateError(INSTALL_HINT + (f" (in {python})" if python else "")) from None
        except OSError as exc:
            raise CalibrateError(f"cannot start {python or sys.executable}: {exc}") from None
        except (WorkerCrashed, ValueError) as exc:   # --python /bin/true: not an interpreter that runs the worker
            raise CalibrateError(f"{python or sys.executable} cannot run kernlint's compile worker ({exc}); "
                                 "--python needs a Python with kernlint and Triton importable") from None
        module_path = str(cal.scratch.write(Path(tmp)))
        pending: list[tuple[Row, dict[str, Any], str]] = []
        for row, task in work:
            if task is None:
                continue
            key = _cache_key(cal.scratch, task, cal.env)
            hit = cache.get(key)
            if hit is not None:
                row.truth, row.cached = hit, True
            else:
                pending.append((row, {**task, "module": module_path, "timeout": timeout_s}, key))
        total, done = len(pending), 0
        if progress:
            progress(0, total)

        def finished(i: int, res: dict[str, Any]) -> None:
            nonlocal done
            row, _, key = pending[i]
            cache.put(key, res)
            row.truth = res
            done += 1
            if progress:
                progress(done, total)

        pool.run([t for _, t, _ in pending], finished)
    for row, _ in work:
        if row.truth is not None and row.truth.get("error"):
            row.error = attribute_error(row.truth["error"], cal)
            row.truth = None
