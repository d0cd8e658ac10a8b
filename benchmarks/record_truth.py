"""record_truth.py -- record ptxas/Triton ground truth for kernels listed in a spec file (dev-only tool).

For every (spec, config, compute capability) it compiles the kernel with NO GPU through
``triton.compile(ASTSource(fn, signature, constexprs, attrs), target=GPUTarget("cuda", cap, 32),
options={num_warps, num_stages, maxnreg, ...})`` and records what ptxas really allocated (registers,
spill store/load bytes, stack frame; parsed from Triton's own ``ptxas -v`` log, or from a re-run of the
bundled ptxas on the PTX when the log is unavailable), ``metadata.shared``, ``metadata.tmem_size``,
``metadata.num_warps`` and the wall time of the compile.  The recipe is the one measured in
docs/design.md ("Ground truth").

Run it with a venv that has the Triton version you want truth for (it never imports kernlint)::

    /work/venv-triton/bin/python benchmarks/record_truth.py \\
        --specs benchmarks/truth_specs.py --out benchmarks/truth/triton-3.9.json -j 2
    /work/venv-triton36/bin/python benchmarks/record_truth.py --only matmul_kernel \\
        --out benchmarks/truth/triton-3.6.json
    # --only takes KERNEL or FILE::KERNEL, e.g. --only tests/truth/reference_kernels.py::add_kernel

Spec file: a Python file defining ``SPECS``, a list of dicts::

    {"file": "examples/x.py",            # relative to the repo root (or absolute)
     "kernel": "name",                   # module attribute; @autotune/@heuristics wrappers are unwrapped
     "args": {"x_ptr": "*fp16", "n": "i32", "stride_xk": 1, "eps": "fp32"},
     "constexprs": {"GROUP_M": 8},       # optional
     "configs": [{"BLOCK_M": 128, "num_warps": 4, "num_stages": 3}, ...],
     "caps": [90]}                       # optional, overrides --caps for this spec

Specialisation (what Triton's runtime binder would derive for aligned inputs):
  * pointer args ("*fp16") and "i32" args get ``tt.divisibility=16``; a ":16" suffix is accepted and
    a ":0" suffix ("*fp16:0", "i32:0") turns the hint off;
  * the int literal 1 becomes ``constexpr 1``; another int becomes i32 (i64 if >= 2**31), with the
    divisibility hint when it is a multiple of 16; a float becomes fp32; None becomes ``constexpr None``;
  * other scalar type strings ("fp32", "i64", "u1", ...) get no attribute;
  * an arg that the kernel declares ``tl.constexpr`` is passed as a constexpr whatever its value.
Config keys that are CUDAOptions fields (num_warps, num_stages, num_ctas, maxnreg, ...) become compile
options; every other key is a constexpr.  Kernel parameters missing from the spec fall back to their
Python default.

A config that fails (Triton error, ptxas error, timeout) is recorded with ``"error"`` and the sweep goes
on.  Kernel modules are imported by file path with the repo root on ``sys.path`` -- acceptable only
because this recorder runs on our own example files (``kernlint calibrate`` never imports a user's module).

The compile itself (spec → signature/attrs, ``triton.compile``, ptxas log parsing, error lines) lives in
``kernlint/calibrate/triton_compile.py``, shared with ``kernlint calibrate``; it needs only the standard
library and Triton, so this script still runs in a venv without kernlint's dependencies.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import json
import multiprocessing
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SPECS = REPO_ROOT / "benchmarks" / "truth_specs.py"
SCHEMA = 1

if str(REPO_ROOT) not in sys.path:  # the shared compile core, importable without installing kernlint
    sys.path.insert(0, str(REPO_ROOT))
from kernlint.calibrate.triton_compile import (  # noqa: E402
    build_compile_args, compile_jit, environment, error_line, option_names, parse_ptxas_log, ptxas_rerun, unwrap,
)

__all__ = ["build_compile_args", "compile_task", "environment", "error_line", "main", "make_tasks", "option_names",
           "parse_ptxas_log", "ptxas_rerun"]


# ---------------------------------------------------------------------------------------------
# Spec handling (no Triton import needed)
# ---------------------------------------------------------------------------------------------

def load_specs(path: Path) -> list[dict[str, Any]]:
    """Execute the spec file in isolation and return its ``SPECS`` list."""
    spec = importlib.util.spec_from_file_location("_kernlint_truth_specs", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load spec file {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    specs = getattr(mod, "SPECS", None)
    if not isinstance(specs, list):
        raise SystemExit(f"{path} defines no SPECS list")
    return specs


def kernel_path(file: str) -> Path:
    p = Path(file)
    return p if p.is_absolute() else REPO_ROOT / p


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def selected(spec: dict[str, Any], only: set[str] | None) -> bool:
    """``--only`` entries are KERNEL or FILE::KERNEL (FILE matched as a path suffix)."""
    if not only:
        return True
    for sel in only:
        file, sep, kernel = sel.rpartition("::")
        if kernel == spec["kernel"] and (not sep or spec["file"].endswith(file)):
            return True
    return False


def make_tasks(specs: list[dict[str, Any]], caps: list[int], only: set[str] | None) -> list[dict[str, Any]]:
    tasks: list[dict[str, Any]] = []
    for si, spec in enumerate(specs):
        if not selected(spec, only):
            continue
        for ci, config in enumerate(spec.get("configs") or [{}]):
            for cap in spec.get("caps") or caps:
                tasks.append({"index": (si, ci, int(cap)), "file": spec["file"], "kernel": spec["kernel"],
                              "args": dict(spec.get("args") or {}),
                              "constexprs": dict(spec.get("constexprs") or {}),
                              "config": dict(config), "cap": int(cap)})
    return tasks


# ---------------------------------------------------------------------------------------------
# Worker side (imports Triton)
# ---------------------------------------------------------------------------------------------

_MODULES: dict[str, Any] = {}


def _init_worker(cache_dir: str) -> None:
    os.environ["TRITON_CACHE_DIR"] = cache_dir
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # 3.9's current default; silences its warning
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))


def _import_kernel_module(file: str) -> Any:
    """Import by file path; under the repo root use the dotted name so `from examples.x import y` agrees."""
    path = kernel_path(file).resolve()
    key = str(path)
    if key in _MODULES:
        return _MODULES[key]
    mod = None
    try:
        rel = path.relative_to(REPO_ROOT)
        dotted = ".".join(rel.with_suffix("").parts)
        mod = importlib.import_module(dotted)
        if Path(getattr(mod, "__file__", "") or "").resolve() != path:
            mod = None
    except (ValueError, ImportError):
        mod = None
    if mod is None:
        name = "_truth_" + hashlib.sha1(key.encode()).hexdigest()[:12]
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {path}")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    _MODULES[key] = mod
    return mod


def compile_task(task: dict[str, Any], timeout_s: int) -> dict[str, Any]:
    """Compile one (kernel, config, cap) and return its record (never raises)."""
    rec: dict[str, Any] = {"file": task["file"], "kernel": task["kernel"], "source_sha256": None, "cap": task["cap"],
                           "config": task["config"], "args": task["args"], "constexprs": task["constexprs"],
                           "regs": None, "spill_store": None, "spill_load": None, "stack": None, "shared": None,
                           "tmem": None, "num_warps_compiled": None, "compile_s": None, "ptxas_log": None,
                           "error": None}
    t0 = time.perf_counter()
    try:
        path = kernel_path(task["file"])
        rec["source_sha256"] = sha256_of(path)
        obj = _import_kernel_module(task["file"])
        for part in task["kernel"].split("."):  # "Class.attr" for a kernel defined in a class
            obj = getattr(obj, part)
        fn = unwrap(obj)
    except BaseException as exc:  # bad file / kernel name: record and go on
        if isinstance(exc, KeyboardInterrupt):
            raise
        rec["compile_s"] = round(time.perf_counter() - t0, 4)
        rec["error"] = error_line(exc)
        return rec
    rec.update(compile_jit(fn, task["args"], task["constexprs"], task["config"], task["cap"], timeout_s))
    return rec


def _env_child(cache_dir: str) -> dict[str, Any]:
    _init_worker(cache_dir)
    return environment()


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------

def _display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--specs", type=Path, default=DEFAULT_SPECS, help="spec file defining SPECS (%(default)s)")
    ap.add_argument("--out", type=Path, default=None,
                    help="output JSON (default benchmarks/truth/triton-<version>.json)")
    ap.add_argument("--caps", default="80,90,100", help="compute capabilities, comma separated (%(default)s)")
    ap.add_argument("--only", action="append", default=None, metavar="KERNEL",
                    help="record only KERNEL or FILE::KERNEL (repeatable, or comma separated)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="worker processes (%(default)s); 1 = in-process")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per compile before giving up (0 = none)")
    ap.add_argument("--cache-dir", default=None, help="TRITON_CACHE_DIR for the workers (default: a fresh temp dir)")
    ns = ap.parse_args(argv)

    caps = [int(c) for c in ns.caps.split(",") if c.strip()]
    only = {k.strip() for o in ns.only for k in o.split(",") if k.strip()} if ns.only else None
    specs = load_specs(ns.specs)
    tasks = make_tasks(specs, caps, only)
    if not tasks:
        print("no tasks (check --only / the spec file)", file=sys.stderr)
        return 2
    cache_dir = ns.cache_dir or tempfile.mkdtemp(prefix="kernlint_truth_cache_")
    # Heaviest first keeps the pool busy at the end (big tiles, many stages compile slowest).
    def weight(t: dict[str, Any]) -> float:
        w = 1.0
        for k, v in t["config"].items():
            if isinstance(v, int) and k.isupper():
                w *= max(v, 1)
        return -w
    order = sorted(range(len(tasks)), key=lambda i: weight(tasks[i]))

    t_start = time.perf_counter()
    records: list[dict[str, Any] | None] = [None] * len(tasks)
    done = 0

    def report(i: int, rec: dict[str, Any]) -> None:
        nonlocal done
        done += 1
        cfg = ",".join(f"{k}={v}" for k, v in rec["config"].items())
        res = (f"ERROR {rec['error'][:120]}" if rec["error"] else
               f"regs={rec['regs']} spill={rec['spill_store']}/{rec['spill_load']} stack={rec['stack']} "
               f"shared={rec['shared']} tmem={rec['tmem']}")
        print(f"[{done}/{len(tasks)}] {rec['kernel']} sm{rec['cap']} {cfg}: {res} ({rec['compile_s']}s)",
              file=sys.stderr, flush=True)

    if ns.jobs <= 1:
        _init_worker(cache_dir)
        env = environment()
        for i in order:
            records[i] = compile_task(tasks[i], ns.timeout)
            report(i, records[i])
    else:
        ctx = multiprocessing.get_context("spawn")  # fresh interpreters: no forked LLVM state
        with ProcessPoolExecutor(max_workers=ns.jobs, mp_context=ctx, initializer=_init_worker,
                                 initargs=(cache_dir, )) as pool:
            env_fut = pool.submit(environment)
            futs = {pool.submit(compile_task, tasks[i], ns.timeout): i for i in order}
            for fut in as_completed(futs):
                i = futs[fut]
                try:
                    records[i] = fut.result()
                except Exception as exc:  # worker died (e.g. segfault): record and go on
                    t = tasks[i]
                    records[i] = {"file": t["file"], "kernel": t["kernel"], "source_sha256": None, "cap": t["cap"],
                                  "config": t["config"], "args": t["args"], "constexprs": t["constexprs"],
                                  "regs": None, "spill_store": None, "spill_load": None, "stack": None,
                                  "shared": None, "tmem": None, "num_warps_compiled": None, "compile_s": None,
                                  "ptxas_log": None, "error": f"worker failed: {type(exc).__name__}: {exc}"[:400]}
                report(i, records[i])
            env = env_fut.result()

    wall = time.perf_counter() - t_start
    out = ns.out or REPO_ROOT / "benchmarks" / "truth" / f"triton-{env['triton_version']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {"schema": SCHEMA, **env, "caps": caps, "specs": _display_path(ns.specs), "wall_s": round(wall, 1),
           "records": records}
    out.write_text(json.dumps(doc, indent=1) + "\n")
    n_err = sum(1 for r in records if r and r["error"])
    print(f"wrote {out}: {len(records)} records, {n_err} errors, wall {wall:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
