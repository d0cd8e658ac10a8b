"""Development truth at the scale of real code: every launched kernel of the pinned corpus, compiled (CPU only).

    python benchmarks/corpus_truth.py --only causal-conv1d --only liger-kernel      # compile, resumable
    python benchmarks/corpus_truth.py --only fla-core --max-kernels 40 --budget 1800
    python benchmarks/corpus_truth.py --report                # docs/corpus-truth.md from the committed truth

Packages are the pinned archives of benchmarks/corpus.py, linked as `.corpus/by-project/<project>` (as
benchmarks/public_accuracy.py does). A *launched kernel* is a kernel kernlint analyses when it lints the
whole package (its kernels, not its jit helpers); files kernlint recognises as another vendor's backend
(kernlint/frontend/vendor.py) are not linted as NVIDIA code and are counted apart ("vendor" column).

For every launched kernel the script derives one compile spec, with no human in the loop:
  * arguments: calibrate's signature (kernlint/calibrate/signature.py: pointers `*fp16`, 16-byte aligned;
    integer scalars i32 divisible by 16; inner strides `1`) refined by benchmarks/public_specs.py (index
    pointers `*i32`, pointers stored with a cast take that dtype, offset-only "pointers" are i32);
  * the config is the author's: the first config of the kernel's autotune list, else its first launch
    site's keywords and launch options, else the parameter defaults and Triton's defaults (num_warps 4,
    num_stages 3);
  * a constexpr the config leaves open is filled, in this order:
      1. representative problem size: the launch site's expression for it (a keyword, a positional argument,
         or a local assigned before the launch in the launching function) is evaluated with every problem
         size it reads (`x.shape[-1]`, `n_cols`, `x.numel()`, an unknown name or call) taken as REPR_SIZE =
         1024, through min/max/`triton.next_power_of_2`/`triton.cdiv`/arithmetic only (the expression is
         read with `ast`, never run). A block size (a constexpr that shapes a tile in kernlint's IR) must
         come out a power of two up to 65536; any other constexpr is filled only from a computed expression
         (`triton.cdiv(n, BLOCK)`, `2 * D`), never from a bare size (`eps`, `HAS_GRAD=x.requires_grad`,
         `N=x.shape[1]` go on to the stated defaults); the first launch that gives a value wins;
      2. public_specs.py's stated defaults: a flag read only as a condition is False, a `tl.static_range`
         bound is 4, a block size is 64 (num_warps 4 unless the config states it), any other value 64;
      3. a constexpr used as a dtype with no value leaves the kernel underived ("dtype unknown").
  * a kernel Triton rejects because an operand is fp16 (`tl.sqrt`, `atomic_max`, a loop-carried fp32
    value) is derived again with fp32 as the default pointee, as its callers would pass (config origin
    "+*fp32 pointers").
  * a run that was interrupted, or a change of the model, is picked up with `--rederive`: compiles already
    recorded are kept (and the calibrate cache answers the rest), estimates are recomputed.
It then compiles that config for sm_90 and sm_100 through calibrate's scratch module and worker
(kernlint/calibrate/scratch.py, worker.py: the package's module is never imported) and stores, per
(kernel, config, target), the ptxas truth or the reason it did not compile, next to kernlint's estimate
for the same config and target (recorded when the kernel was last derived: `--rederive` re-estimates every
kernel with the current model and keeps the recorded compiles; the report reads it back and never re-lints).

Reasons a kernel did not compile (`reason`): "scratch module" (calibrate cannot build one: a helper or
global it cannot provide), "scratch refused" (the body reaches Python), "not analysed" (kernlint made no
estimate-ready analysis of the scratch module), "dtype unknown", "no config", "compile error" (Triton or
ptxas rejected it; `detail` has the message), "compile timeout", "sandbox refused", "worker crashed".

Output: `benchmarks/truth/corpus/<project>.json.gz` (one per package; compact JSON, gzip with a fixed mtime
so an unchanged truth is byte-identical). Incremental: a compile whose key (scratch-module hash, config,
target, Triton version) is already recorded is not redone, and a kernel whose source hash and name are
recorded is not derived again (`--rederive` forces both to be looked at again). Compiles go one at a time
through a single worker with a watchdog (the CPU is shared), and the file is rewritten after every kernel,
so the run can be stopped at any time. Compile results are also in calibrate's cache
(`.corpus/calibrate-cache`), shared with benchmarks/public_accuracy.py.
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import gzip
import hashlib
import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":   # run as `python benchmarks/corpus_truth.py`: the repository root, for `benchmarks.*`
    sys.path.insert(0, str(ROOT))

TRUTH_DIR = ROOT / "benchmarks" / "truth" / "corpus"
DOC = ROOT / "docs" / "corpus-truth.md"
SCHEMA = 1
CAPS = (90, 100)
CAP_TARGET = {90: "h100", 100: "b200"}
REPR_SIZE = 1024
MAX_BLOCK = 65536
LAUNCH_KEYS = ("num_warps", "num_stages", "maxnreg")
PROJECTS = ("causal-conv1d", "liger-kernel", "gemlite", "fla-core", "mamba-ssm", "bitsandbytes", "flash-attn",
            "unsloth", "deepspeed", "parallax-kernel", "helion", "flag-gems")
REASONS = ("scratch module", "scratch refused", "not analysed", "dtype unknown", "no config", "compile error",
           "compile timeout", "sandbox refused", "worker crashed")


# -- representative sizes at the launch site -------------------------------------------------------------
class _Unknown(Exception):
    pass


_CALLS = {"next_power_of_2": lambda n: 1 << max(int(n) - 1, 0).bit_length(),
          "cdiv": lambda a, b: -(-int(a) // int(b)), "min": min, "max": max, "int": int, "abs": abs}


def _callee(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def repr_value(expr: ast.expr, scope: dict[str, ast.expr], depth: int = 0) -> Any:
    """The value of a launch-site expression with every problem size taken as REPR_SIZE (`_Unknown` when it
    is not arithmetic over sizes and constants)."""
    if depth > 12:
        raise _Unknown
    rec = lambda e: repr_value(e, scope, depth + 1)  # noqa: E731
    if isinstance(expr, ast.Constant):
        if isinstance(expr.value, bool) or not isinstance(expr.value, (int, float)):
            raise _Unknown
        return expr.value
    if isinstance(expr, ast.Name):
        return rec(scope[expr.id]) if expr.id in scope else REPR_SIZE
    if isinstance(expr, (ast.Attribute, ast.Subscript)):      # x.shape[-1], n_cols, cfg.hidden
        return REPR_SIZE
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return -rec(expr.operand)
    if isinstance(expr, ast.BinOp):
        a, b = rec(expr.left), rec(expr.right)
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
               ast.FloorDiv: lambda: a // b, ast.Mod: lambda: a % b, ast.LShift: lambda: a << b,
               ast.RShift: lambda: a >> b, ast.Div: lambda: a / b, ast.Pow: lambda: a ** b}
        fn = ops.get(type(expr.op))
        if fn is None:
            raise _Unknown
        try:
            return fn()
        except (ZeroDivisionError, TypeError, ValueError, OverflowError):
            raise _Unknown from None
    if isinstance(expr, ast.Call):
        fn = _CALLS.get(_callee(expr.func))
        if fn is None:                                       # x.numel(), x.size(-1), a helper: a size
            return REPR_SIZE
        try:
            return fn(*[rec(a) for a in expr.args])
        except (TypeError, ValueError):
            raise _Unknown from None
    if isinstance(expr, ast.IfExp):
        return rec(expr.body)
    raise _Unknown


def _scopes(tree: ast.Module) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))] + [tree]


def launch_expressions(text: str, kernel: str, params: list[str]) -> list[tuple[dict[str, ast.expr],
                                                                               dict[str, ast.expr]]]:
    """For each launch `kernel[grid](...)` of the file: (argument name → expression, the launching
    function's assignments before the launch)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    out = []
    seen: set[int] = set()
    for scope in _scopes(tree):
        for node in ast.walk(scope):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)
                    and _callee(node.func.value) == kernel) or id(node) in seen:
                continue
            seen.add(id(node))
            args: dict[str, ast.expr] = {}
            for i, a in enumerate(node.args):
                if isinstance(a, ast.Starred):
                    break
                if i < len(params):
                    args[params[i]] = a
            args.update({k.arg: k.value for k in node.keywords if k.arg})
            assigns: dict[str, ast.expr] = {}
            for st in ast.walk(scope):
                if isinstance(st, ast.Assign) and getattr(st, "lineno", 0) < node.lineno:
                    for t in st.targets:
                        if isinstance(t, ast.Name):
                            assigns[t.id] = st.value
                        elif isinstance(t, ast.Tuple) and isinstance(st.value, ast.Tuple) and \
                                len(t.elts) == len(st.value.elts):
                            for te, ve in zip(t.elts, st.value.elts):
                                if isinstance(te, ast.Name):
                                    assigns[te.id] = ve
            out.append((args, assigns))
    return out


def _bare(expr: ast.expr, scope: dict[str, ast.expr]) -> bool:
    """A problem size itself (`n`, `x.shape[1]`, `x.numel()`, `cfg.flag`), not a value computed from one: as
    a block size it is taken at REPR_SIZE, but another constexpr bound to it is a flag or a scalar (`eps`,
    `HAS_GRAD=x.requires_grad`) whose value REPR_SIZE would not represent."""
    for _ in range(12):
        if isinstance(expr, ast.Name) and expr.id in scope:
            expr = scope[expr.id]
        else:
            break
    return isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript)) or (
        isinstance(expr, ast.Call) and _callee(expr.func) not in _CALLS)


def representative(name: str, launches: list[tuple[dict[str, ast.expr], dict[str, ast.expr]]],
                   block: bool) -> int | None:
    """The constexpr's value at the first launch where it evaluates with REPR_SIZE problem sizes. A block size
    must come out a power of two up to MAX_BLOCK; any other constexpr must be computed (not a bare size)."""
    for args, assigns in launches:
        expr = args.get(name)
        if expr is None:
            continue
        scope = {k: v for k, v in assigns.items() if not (isinstance(v, ast.Name) and v.id == k)}
        if not block and _bare(expr, scope):
            continue
        try:
            value = repr_value(expr, scope)
        except _Unknown:
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or value < 1:
            continue
        if block and (value & (value - 1) or value > MAX_BLOCK):
            continue
        return value
    return None


# -- discovery ---------------------------------------------------------------------------------------------
class DiscoveryError(RuntimeError):
    """Linting the package failed: its truth is left as it is."""


def discover(project: str) -> tuple[str, list[dict[str, Any]], int, dict[str, bytes]]:
    """(package root, launched kernels {file, kernel, line}, kernels in other vendors' files, file texts)."""
    from benchmarks import public_accuracy as pa
    from benchmarks import public_specs as ps

    from kernlint.pipeline.api import Settings, lint_sources

    root = pa.package_root(project)
    paths = sorted(p for p in (ROOT / root).rglob("*.py") if p.is_file())
    texts = {str(p.relative_to(ROOT)): p.read_bytes() for p in paths}
    jit_files = set(ps.jit_source_files(texts))
    result = lint_sources([(label, data) for label, data in texts.items()], Settings(targets=("h100",)))
    if result.internal_errors:
        # the development corpus lints with no internal error (benchmarks/corpus.py): one here means a broken
        # checkout or environment, whose kernel list must not replace a recorded one
        raise DiscoveryError(f"{project}: {len(result.internal_errors)} internal errors while linting, first: "
                             f"{result.internal_errors[0][:300]}")
    kernels = []
    launched = ps.launched_names(texts)
    vendor = 0
    for f in result.files:
        if f.vendor_reason:
            if f.path in jit_files:
                vendor += sum(name in launched for name, _ in
                              ps.top_level_jit_functions(texts[f.path].decode("utf-8", "replace")))
            continue
        for k in f.kernels:
            kernels.append({"file": f.path, "kernel": k.jit.qualname, "line": k.jit.line})
    kernels.sort(key=lambda k: (k["file"], k["line"], k["kernel"]))
    return root, kernels, vendor, texts


# -- one kernel: spec, estimate, compile ---------------------------------------------------------------------
def _first_points(points: tuple[Any, ...]) -> tuple[Any, ...]:
    for origin in ("autotune", "launch", "default"):
        chosen = [p for p in points if p.origin == origin]
        if chosen:
            return (chosen[0],)
    return ()


def _category(error: str) -> str:
    low = error.lower()
    if "sandbox" in low and "refused" in low:
        return "sandbox refused"
    if error.startswith("timed out") or "timeout" in low.split(":", 1)[0]:
        return "compile timeout"
    if "worker" in low and ("crash" in low or "died" in low or "exited" in low):
        return "worker crashed"
    return "compile error"


def _est(e: Any) -> dict[str, Any] | None:
    if e is None or not e.estimated:
        return None
    r = e.registers
    # the peak's breakdown (unscaled data / accumulator words, index and serial registers) lets
    # benchmarks/generalisation.py refit the register constants on some packages and score them on others
    return {"regs": r.allocated, "demand": round(float(r.demand), 2), "budget": r.budget,
            "shared": e.smem.total if e.smem else None, "tmem": e.smem.tmem_columns if e.smem else None,
            "data": round(float(r.data_regs), 3), "acc": round(float(r.acc_regs), 3),
            "index": round(float(r.index_regs), 3), "serial": round(float(r.serial_regs), 3),
            "complete": bool(r.complete)}


def prepare(project: str, kern: dict[str, Any], texts: dict[str, bytes],
            pointee: str = "fp16") -> tuple[dict[str, Any], Any]:
    """(kernel entry, work) — work is (scratch, [(record stub, task)]) or None when it was not derived."""
    from benchmarks import public_accuracy as pa
    from benchmarks import public_configs as pc
    from benchmarks import public_specs as ps

    from kernlint.analysis.configs import config_points
    from kernlint.analysis.estimate import estimate, shape_symbols
    from kernlint.pipeline.api import Settings, lint_sources
    from kernlint.calibrate.scratch import ScratchError, build_scratch, find_kernel, source_tree_for
    from kernlint.calibrate.signature import compile_args, derive_signature, lint_arg_types, pointer_args, \
        unit_stride_args
    from kernlint.frontend.static_eval import StaticEvaluator
    from kernlint.hardware.specs import resolve_targets

    label, qualname = kern["file"], kern["kernel"]
    entry = {"file": label, "kernel": qualname, "line": kern["line"],
             "source_sha256": hashlib.sha256(texts[label]).hexdigest(), "status": None, "detail": None,
             "config_origin": None}

    def fail(status: str, detail: str) -> tuple[dict[str, Any], None]:
        entry.update(status=status, detail=detail[:300])
        return entry, None

    try:
        tree, pm = source_tree_for(label)
        jit = find_kernel(pm, qualname)
        scratch = build_scratch(tree, pm, jit)
    except ScratchError as exc:
        return fail("scratch module", str(exc))
    except (RecursionError, OSError, ValueError) as exc:
        return fail("scratch module", f"{type(exc).__name__}: {exc}")
    if scratch.refused:
        return fail("scratch refused", "; ".join(scratch.refused))
    try:
        pointers = pointer_args(jit, pm, tree)
        offsets = ps.offset_only(jit, pointers)
        pointers -= offsets
        dtypes = ps.pointer_dtypes(jit, pointers, pa.helper_integer_args(jit, pm, tree))
        given = {n: s for n, (s, _) in dtypes.items()}
        if pointee != "fp16":
            given["*"] = f"*{pointee}"
        signature = derive_signature(jit, pointers, given, unit_stride_args(jit, pm, tree))
    except Exception as exc:  # noqa: BLE001  (a derivation failure is counted, not fatal)
        return fail("not analysed", f"signature: {type(exc).__name__}: {exc}")
    call_args, _ = compile_args(signature)
    sources = [(m.label, m.data) for m in tree.modules.values() if m.label in scratch.files]
    result = lint_sources(sources, Settings(targets=("h100",), arg_types=lint_arg_types(signature)))
    ka = next((k for f in result.files if f.path == pm.label for k in f.kernels if k.jit.qualname == jit.qualname),
              None)
    if ka is None:
        return fail("not analysed", "; ".join(result.internal_errors) or "no kernel analysis of the scratch sources")
    blocks = set(shape_symbols(ka.ir)) & set(ka.jit.constexpr_names)
    first = _first_points(ka.points)
    if not first:
        return fail("no config", "kernlint has no config point")
    # representative sizes for the constexprs the author's config leaves open
    params = [p.name for p in jit.params]
    launches = [l for data in texts.values() if qualname.encode() + b"[" in data
                for l in launch_expressions(data.decode("utf-8", "replace"), qualname, params)]
    p0 = first[0]
    filled = {}
    for name in jit.constexpr_names:
        if name in p0.constexprs and isinstance(p0.constexprs[name], (int, float, bool, str, type(None))):
            continue
        v = representative(name, launches, name in blocks)
        if v is not None:
            filled[name] = v
    if filled:
        p0 = dataclasses.replace(p0, constexprs={**p0.constexprs, **filled},
                                 unknown={k: v for k, v in p0.unknown.items() if k not in filled})
    jits = {j.name: j for m in tree.modules.values() for j in m.facts.jit_functions}
    jits.update({j.name: j for j in pm.facts.jit_functions})
    # every candidate kept (plan_configs spreads over them); the first is the stated default (block 64)
    plan = pc.plan_configs(ka.jit, (p0,), blocks, 8, jits.get)
    if plan.skip:
        return fail("dtype unknown" if plan.skip.startswith("dtype") else "no config", plan.skip)
    cfg, origin = plan.configs[0], plan.origins[0]
    if filled:
        origin += f"+{REPR_SIZE}-sized launch for {','.join(sorted(filled))}"
    if pointee != "fp16":
        origin += f"+*{pointee} pointers (fp16 was rejected)"
    entry.update(status="derived", config_origin=origin)
    ev = StaticEvaluator(pm.names, pm.facts.constants)
    specs = {s.capability: s for s in resolve_targets(tuple(CAP_TARGET[c] for c in CAPS))}
    point = config_points(ka.jit, [], [cfg], ev)[0]
    work = []
    for cap in CAPS:
        try:
            e = estimate(ka.ir, point, specs[cap])
        except Exception:  # noqa: BLE001  (an estimator crash is scored as "no estimate")
            e = None
        stub = {"file": label, "kernel": qualname, "cap": cap, "config": cfg, "args": call_args,
                "source_sha256": entry["source_sha256"], "scratch_sha256": scratch.sha256,
                "est": _est(e), "smem_limit": specs[cap].smem_per_cta_optin}
        task = {"kernel": scratch.kernel, "args": call_args,
                "constexprs": {k: v for k, v in cfg.items() if k not in LAUNCH_KEYS},
                "config": {k: v for k, v in cfg.items() if k in LAUNCH_KEYS}, "cap": cap}
        work.append((stub, task))
    return entry, (scratch, work)


def _rejects_fp16(detail: str | None) -> bool:
    """Triton's message says an fp16 operand is not allowed (`Expected dtype ['fp32', 'fp64'] but got fp16`,
    `atomic_max does not support fp16`, a loop-carried value re-typed to fp16)."""
    return bool(detail) and "fp16" in detail and "CompilationError" in detail


def record_key(rec: dict[str, Any]) -> str:
    return json.dumps([rec["scratch_sha256"], rec["kernel"], rec["config"], rec["args"], rec["cap"],
                       rec["triton"]], sort_keys=True, default=repr)


def compile_records(scratch: Any, work: list[Any], pool: Any, env: dict[str, Any], cache: Any, tmp: Path,
                    timeout: int, done: dict[str, dict[str, Any]], retry_timeouts: bool = False) -> list[dict[str, Any]]:
    from benchmarks import public_accuracy as pa

    from kernlint.calibrate.session import _cache_key

    module = None
    out = []
    timed_out = False
    for stub, task in work:
        stub = {**stub, "triton": env.get("triton_version")}
        old = done.get(record_key(stub))
        if old is not None and retry_timeouts and old.get("reason") == "compile timeout":
            old = None        # a timeout says how busy the machine was, not what the kernel is: try again
        if old is not None:   # compiled before: the truth is kept, the estimate is today's model's
            out.append({**old, "est": stub["est"]})
            continue
        key = _cache_key(scratch, task, env)
        res = cache.get(key)
        if res is not None and retry_timeouts and "timed out" in (res.get("error") or ""):
            res = None
        if res is None:
            if timed_out:
                res = {"error": "timed out (not tried: the other target of this kernel timed out)"}
            else:
                module = module or str(scratch.write(tmp))
                res = pa._request_with_watchdog(pool, {"op": "compile", **task, "module": module,
                                                       "timeout": timeout}, timeout)
                timed_out = "timed out" in (res.get("error") or "")
                if not timed_out:   # a timeout is not cached: a quieter machine may compile it
                    cache.put(key, res)
        rec = {**stub}
        if res.get("error"):
            rec.update(outcome="failed", reason=_category(res["error"]), detail=res["error"][:300])
        else:
            rec.update(outcome="compiled", reason=None, detail=None,
                       **{k: res.get(k) for k in ("regs", "spill_store", "spill_load", "shared", "tmem")},
                       compile_s=res.get("compile_s"))
        out.append(rec)
    return out


# -- storage ---------------------------------------------------------------------------------------------------
def truth_path(project: str) -> Path:
    return TRUTH_DIR / f"{project}.json.gz"


def load_truth(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def save_truth(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
        gz.write(blob)
    tmp.replace(path)


def _package_relative(label: str, root: str) -> str:
    return label[len(root) + 1:] if label.startswith(root + "/") else label


def run_project(project: str, a: argparse.Namespace, pool: Any, env: dict[str, Any], cache: Any, tmp: Path,
                start: float) -> None:
    path = truth_path(project)
    doc = load_truth(path) if path.exists() else {}
    old_kernels = {(k["file"], k["kernel"]): k for k in doc.get("kernels", [])}
    done = {record_key(r): r for r in doc.get("records", [])}
    t0 = time.monotonic()
    root, kernels, vendor, texts = discover(project)
    if not kernels and old_kernels:
        # an empty discovery where a truth exists is a broken checkout or environment, not a package without
        # kernels: never overwrite recorded compiles with nothing
        print(f"{project}: no kernels found but {len(old_kernels)} recorded; truth left as it is", file=sys.stderr)
        return
    print(f"{project}: {len(kernels)} launched kernels ({vendor} in other vendors' files apart), discovery "
          f"{time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    by_kernel_records: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in doc.get("records", []):
        by_kernel_records[(r["file"], r["kernel"])].append(r)
    entries: dict[tuple[str, str], dict[str, Any]] = {}
    records: dict[tuple[str, str], list[dict[str, Any]]] = {}
    sha = {label: hashlib.sha256(data).hexdigest() for label, data in texts.items()}
    todo = []
    for kern in kernels:
        rel = _package_relative(kern["file"], root)
        key = (rel, kern["kernel"])
        old = old_kernels.get(key)
        if old is not None and old["source_sha256"] == sha[kern["file"]] and not a.rederive and (
                old["status"] != "derived" or len(by_kernel_records.get(key, [])) == len(CAPS)):
            entries[key] = {**old, "line": kern["line"]}
            records[key] = by_kernel_records.get(key, [])
        else:
            todo.append(kern)
    if a.recorded_only:   # re-estimate what is recorded; kernels not visited yet wait for a compiling run
        todo = [k for k in todo if (_package_relative(k["file"], root), k["kernel"]) in old_kernels]
    if a.max_kernels:
        from benchmarks import public_configs as pc
        todo = pc.spread(todo, a.max_kernels)

    def write() -> None:
        new = {"schema": SCHEMA, "project": project, "root": root, "triton_version": env.get("triton_version"),
               "ptxas_version": env.get("ptxas_version"), "ptxas_blackwell_version": env.get("ptxas_blackwell_version"),
               "caps": list(CAPS), "repr_size": REPR_SIZE, "launched": len(kernels), "vendor_apart": vendor,
               "kernels": sorted(entries.values(), key=lambda k: (k["file"], k["line"], k["kernel"])),
               "records": sorted((r for rs in records.values() for r in rs),
                                 key=lambda r: (r["file"], r["kernel"], r["cap"]))}
        save_truth(path, new)

    write()
    for i, kern in enumerate(todo):
        if time.monotonic() - start > a.budget:
            print(f"{project}: time budget spent, {len(todo) - i} kernels left for the next run", file=sys.stderr)
            break
        try:
            entry, prepared = prepare(project, kern, texts)
        except Exception as exc:  # noqa: BLE001
            entry, prepared = {"file": kern["file"], "kernel": kern["kernel"], "line": kern["line"],
                               "source_sha256": sha[kern["file"]], "status": "not analysed",
                               "detail": f"{type(exc).__name__}: {exc}"[:300], "config_origin": None}, None
        recs: list[dict[str, Any]] = []
        if prepared is not None:
            recs = compile_records(prepared[0], prepared[1], pool, env, cache, tmp, a.timeout, done,
                                   a.retry_timeouts)
            if recs and all(r["outcome"] != "compiled" and _rejects_fp16(r["detail"]) for r in recs):
                # the stated default pointee is fp16; a kernel whose math needs fp32 (tl.sqrt, atomic_max)
                # is compiled with fp32 pointers instead, as its callers would pass
                try:
                    entry32, prepared32 = prepare(project, kern, texts, pointee="fp32")
                except Exception:  # noqa: BLE001  (the fp16 attempt's failure stands)
                    prepared32 = None
                if prepared32 is not None:
                    recs32 = compile_records(prepared32[0], prepared32[1], pool, env, cache, tmp, a.timeout, done,
                                             a.retry_timeouts)
                    if any(r["outcome"] == "compiled" for r in recs32):
                        entry, recs = entry32, recs32
        rel = _package_relative(kern["file"], root)
        entry["file"] = rel
        for r in recs:
            r["file"] = rel
        entries[(rel, kern["kernel"])] = entry
        records[(rel, kern["kernel"])] = recs
        write()
        outcome = entry["status"] if prepared is None else \
            ", ".join(f"sm{r['cap']} " + (f"regs={r['regs']} spill={r['spill_store']} smem={r['shared']}"
                                           if r["outcome"] == "compiled" else r["reason"]) for r in recs)
        print(f"[{time.monotonic() - start:6.0f}s] {project} {rel}::{kern['kernel']}: {outcome}",
              file=sys.stderr, flush=True)


# -- report ------------------------------------------------------------------------------------------------------
def _proxy(r: dict[str, Any]) -> Any:
    e = r["est"]
    return SimpleNamespace(
        estimated=True, target=SimpleNamespace(key=CAP_TARGET[r["cap"]], smem_per_cta_optin=r["smem_limit"]),
        smem=SimpleNamespace(total=e["shared"]), registers=SimpleNamespace(
            allocated=e["regs"], demand=e["demand"], budget=e["budget"]),
        config=SimpleNamespace(num_warps=r["config"].get("num_warps", 4), num_stages=r["config"].get("num_stages", 3)))


def pairs_of(records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Any]]:
    return [(r, _proxy(r)) for r in records
            if r["outcome"] == "compiled" and r["est"] and r["est"]["shared"] is not None and r.get("regs")]


def load_all(directory: Path = TRUTH_DIR) -> list[dict[str, Any]]:
    order = {p: i for i, p in enumerate(PROJECTS)}
    docs = [load_truth(p) for p in sorted(directory.glob("*.json.gz"))]
    return sorted(docs, key=lambda d: (order.get(d["project"], len(order)), d["project"]))


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f} %"


def _accuracy(pairs: list[tuple[dict[str, Any], Any]]) -> dict[str, dict[str, Any]]:
    from benchmarks import accuracy

    out: dict[str, dict[str, Any]] = {}
    for target, row in accuracy.metrics(pairs).items():
        rows = [(r, e) for r, e in pairs if e.target.key == target]
        tm = [(r, e) for r, e in rows if (r.get("tmem") or 0) > 0 or (r["est"]["tmem"] or 0) > 0]
        row["tmem_n"] = len(tm)
        row["tmem_exact"] = sum((r.get("tmem") or 0) == (r["est"]["tmem"] or 0) for r, _ in tm) / len(tm) if tm else None
        out[target] = row
    return out


def render(docs: list[dict[str, Any]]) -> str:
    out = ["# Corpus-scale truth (development packages)", "",
           "Generated by `python benchmarks/corpus_truth.py --report` from `benchmarks/truth/corpus/*.json.gz`; do not",
           "edit by hand. How kernels are found, how their arguments and configs are derived (representative size",
           f"{REPR_SIZE} at the launch site, then stated defaults) and what each reason means: the docstring of",
           "`benchmarks/corpus_truth.py`. Estimates are kernlint's when each kernel was last derived (`--rederive`",
           "re-estimates every recorded kernel with the current model and keeps the recorded compiles).", ""]
    if not docs:
        return "\n".join(out + ["No truth recorded yet.", ""])
    versions = sorted({f"Triton {d['triton_version']}, ptxas {d['ptxas_version']} (sm_90) and "
                       f"{d['ptxas_blackwell_version']} (sm_100)" for d in docs})
    out += [f"Toolchain: {'; '.join(versions)}. Targets: sm_90 (h100), sm_100 (b200).", "",
            "## Coverage", "",
            "launched: kernels kernlint finds in the package (other vendors' backends apart: vendor); visited: "
            "kernels this truth has looked at so far; derived: a compile spec was derived; compiled: at least one "
            "target compiled. The issue's goal is 80 % of launched kernels compiled.", "",
            "| package | launched | vendor | visited | derived | compiled | % of visited | % of launched | not compiled, by reason |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    tot = Counter()
    all_reasons: Counter[str] = Counter()
    for d in docs:
        kernels = d["kernels"]
        recs = defaultdict(list)
        for r in d["records"]:
            recs[(r["file"], r["kernel"])].append(r)
        derived = [k for k in kernels if k["status"] == "derived"]
        compiled = [k for k in derived if any(r["outcome"] == "compiled" for r in recs[(k["file"], k["kernel"])])]
        reasons: Counter[str] = Counter()
        for k in kernels:
            if k["status"] != "derived":
                reasons[k["status"]] += 1
            elif k not in compiled:
                rs = recs[(k["file"], k["kernel"])]
                reasons[rs[0]["reason"] if rs else "not compiled yet"] += 1
        all_reasons.update(reasons)
        row = {"launched": d["launched"], "vendor": d["vendor_apart"], "visited": len(kernels),
               "derived": len(derived), "compiled": len(compiled)}
        tot.update(row)
        out.append(f"| {d['project']} | {row['launched']} | {row['vendor']} | {row['visited']} | {row['derived']} | "
                   f"{row['compiled']} | {_pct(len(compiled) / len(kernels) if kernels else None)} | "
                   f"{_pct(len(compiled) / d['launched'] if d['launched'] else None)} | "
                   + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))) + " |")
    out.append(f"| **all** | {tot['launched']} | {tot['vendor']} | {tot['visited']} | {tot['derived']} | "
               f"{tot['compiled']} | {_pct(tot['compiled'] / tot['visited'] if tot['visited'] else None)} | "
               f"{_pct(tot['compiled'] / tot['launched'] if tot['launched'] else None)} | "
               + ", ".join(f"{k} {v}" for k, v in sorted(all_reasons.items(), key=lambda kv: (-kv[1], kv[0])))
               + " |")
    out += ["", "## Accuracy on compiled configs", "",
            "Scored as benchmarks/accuracy.py scores the development suite: shared memory exact / within 2 %; "
            "register median absolute error and share within 20 % on configs that fit in shared memory; spill F1 "
            "(ptxas spilled vs estimated demand over the budget); B200 tensor-memory columns exact where either "
            "side uses tensor memory.", "",
            "| package | target | configs | smem exact | smem ±2 % | regs median err | regs within 20 % | spill F1 | tmem exact |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    groups = [(d["project"], pairs_of(d["records"])) for d in docs]
    groups.append(("**all**", [p for _, ps_ in groups for p in ps_]))
    for name, pairs in groups:
        if not pairs:
            continue
        for target, row in sorted(_accuracy(pairs).items(), key=lambda kv: kv[0] != "h100"):
            tm = "–" if row["tmem_exact"] is None else f"{_pct(row['tmem_exact'])} ({row['tmem_n']})"
            out.append(f"| {name} | {target} | {int(row['pairs'])} | {_pct(row['smem_exact'])} | "
                       f"{_pct(row['smem_within_2pct'])} | {100 * row['regs_median_abs_err']:.1f} % | "
                       f"{_pct(row['regs_within_20pct'])} | {row['spill_f1']:.2f} | {tm} |")
    # why kernels did not compile: a few examples per reason (what derivation work is missing)
    out += ["", "## Not compiled: reasons with examples", ""]
    examples: dict[str, list[str]] = defaultdict(list)
    for d in docs:
        recs = defaultdict(list)
        for r in d["records"]:
            recs[(r["file"], r["kernel"])].append(r)
        for k in d["kernels"]:
            rs = recs[(k["file"], k["kernel"])]
            if k["status"] != "derived":
                reason, detail = k["status"], k["detail"]
            elif rs and not any(r["outcome"] == "compiled" for r in rs):
                reason, detail = rs[0]["reason"], rs[0]["detail"]
            else:
                continue
            examples[reason].append(f"{d['project']} `{k['file']}::{k['kernel']}`: "
                                    + (detail or "").replace("|", "\\|").replace("\n", " ")[:160])
    for reason, ex in sorted(examples.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out.append(f"- **{reason}** ({len(ex)})")
        out += [f"  - {x}" for x in ex[:5]]
    out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], help="package(s) to run, in this order (default: all)")
    ap.add_argument("--max-kernels", type=int, default=0, help="kernels per package in this run, spread over it (0: all)")
    ap.add_argument("--budget", type=float, default=3600, help="seconds after which no new kernel starts")
    ap.add_argument("-j", "--jobs", type=int, default=1, choices=[1],
                    help="compiles run one at a time (one worker, with a watchdog); the CPU is shared")
    ap.add_argument("--python", default=None, help="interpreter with Triton (default: this one)")
    ap.add_argument("--timeout", type=int, default=90, help="seconds per compile")
    ap.add_argument("--rederive", action="store_true", help="derive kernels already recorded again")
    ap.add_argument("--retry-timeouts", action="store_true", help="compile again what timed out before")
    ap.add_argument("--recorded-only", action="store_true",
                    help="with --rederive: re-estimate the kernels already recorded, visit no new ones")
    ap.add_argument("--report", action="store_true", help="write docs/corpus-truth.md from the truth (no compiles)")
    ap.add_argument("--check", action="store_true", help="with --report: exit 1 when the doc is not up to date")
    a = ap.parse_args(argv)
    if a.report:
        text = render(load_all())
        if a.check:
            same = DOC.exists() and DOC.read_text(encoding="utf-8") == text
            print("docs/corpus-truth.md is up to date" if same else "docs/corpus-truth.md is stale")
            return 0 if same else 1
        DOC.write_text(text, encoding="utf-8")
        print(text)
        return 0
    from kernlint.calibrate.session import Cache
    from kernlint.calibrate.worker import WorkerPool

    os.chdir(ROOT)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    start = time.monotonic()
    cache = Cache(ROOT / ".corpus" / "calibrate-cache")
    with tempfile.TemporaryDirectory(prefix="kernlint_corpus_truth_") as tmp, WorkerPool(a.python, 1) as pool:
        env = pool.environment()
        for project in a.only or PROJECTS:
            if time.monotonic() - start > a.budget:
                break
            try:
                run_project(project, a, pool, env, cache, Path(tmp), start)
            except DiscoveryError as exc:
                print(f"{exc}; truth left as it is", file=sys.stderr, flush=True)
    print(f"wall {time.monotonic() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
