"""kernlint's estimator on real kernels of public packages, against Triton 3.9 + ptxas truth (CPU only).

    /work/venv-cal/bin/python benchmarks/public_accuracy.py                 # full run (~20 min, -j 1)
    python benchmarks/public_accuracy.py --python /work/venv-cal/bin/python --per-package 2 --configs 1
    python benchmarks/public_accuracy.py --report benchmarks/truth/public-triton-3.9.json   # no compiles

Packages are the pinned archives of benchmarks/corpus.py (downloaded once into the git-ignored `.corpus/`).
Each package's source root is linked as `.corpus/by-project/<project>` (a name that is not a Python
identifier, so `module_name_for` turns `.corpus/by-project/liger-kernel/liger_kernel/ops/x.py` into the real
module name `liger_kernel.ops.x`); the truth records name files by that path, relative to the repo root, so
benchmarks/accuracy.py reads them as it reads the other truth files (it lints the file with its directory;
this script lints it with the files its helpers come from, as `kernlint calibrate` does).

Per package: kernels = jit functions launched with a grid somewhere in the package; a deterministic sample
(`--per-package`, spread over the sorted (file, line) list) gets a compile spec derived by
benchmarks/public_specs.py (stated defaults there), is compiled from a scratch module
(kernlint/calibrate/scratch.py: never the package's module) for sm_90, sm_100 and sm_80, and its records are
paired with kernlint's estimate for the same config and target. `--budget` seconds stop new kernels.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":   # run as `python benchmarks/public_accuracy.py`: the repository root, for `benchmarks.*`
    sys.path.insert(0, str(ROOT))

from benchmarks import accuracy  # noqa: E402
from benchmarks import public_configs as pc  # noqa: E402
from benchmarks import public_specs as ps  # noqa: E402
from benchmarks.public_report import coverage, error_class, render  # noqa: E402,F401  (re-exported)

LINKS = ".corpus/by-project"
CAPS = (90, 100, 80)
CAP_TARGET = {80: "a100", 90: "h100", 100: "b200"}
DEFAULT_PROJECTS = ("liger-kernel", "mamba-ssm", "bitsandbytes", "flash-attn", "fla-core", "unsloth")
OUT = ROOT / "benchmarks" / "truth" / "public-triton-3.9.json"


# -- packages ----------------------------------------------------------------------------------------
def package_root(project: str) -> str:
    """`.corpus/by-project/<project>` (relative to ROOT), linked to the extracted archive's source root."""
    from benchmarks import corpus

    pinned = {p: (f, sha) for p, f, sha in corpus.PINNED}
    filename, sha = pinned[project]
    src = corpus.extract(corpus.download(project, filename, sha))
    entries = [e for e in src.iterdir() if not e.name.startswith(".")]
    top = entries[0] if len(entries) == 1 and not (entries[0] / "__init__.py").exists() and \
        filename.endswith(".tar.gz") else src     # an sdist unpacks into one `name-version/` directory
    link = ROOT / LINKS / project
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() and Path(os.readlink(link)) != Path(os.path.relpath(top, link.parent)):
        link.unlink()
    if not link.exists():
        link.symlink_to(os.path.relpath(top, link.parent), target_is_directory=True)
    return f"{LINKS}/{project}"


@dataclass
class Candidate:
    project: str
    label: str          # path relative to ROOT
    qualname: str
    line: int


def find_kernels(project: str, root: str) -> list[Candidate]:
    texts = {str(p.relative_to(ROOT)): p.read_bytes() for p in sorted((ROOT / root).rglob("*.py")) if p.is_file()}
    launched = ps.launched_names(texts)
    out: list[Candidate] = []
    for label in ps.jit_source_files(texts):
        for name, line in ps.top_level_jit_functions(texts[label].decode("utf-8", "replace")):
            if name in launched:
                out.append(Candidate(project, label, name, line))
    return out


# -- one kernel: spec, estimates, compiles ------------------------------------------------------------
@dataclass
class KernelResult:
    cand: Candidate
    skip: str | None = None
    spec_notes: list[str] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    pairs: list[tuple[dict[str, Any], Any]] = field(default_factory=list)


def helper_integer_args(jit: Any, pm: Any, tree: Any) -> list[tuple[Any, str]]:
    """(argument expression, "bits"/"index") for the arguments of jit helper calls that the helper uses as
    integers (`dequant_body(a=tl.load(p + offs))` where the helper does `a >> 4`)."""
    import libcst as cst

    from kernlint.calibrate.signature import _helper_of

    out: list[tuple[Any, str]] = []
    calls: list[Any] = []

    class _V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            calls.append(node)

    jit.node.body.visit(_V())
    for call in calls:
        helper = _helper_of(call, pm, tree)
        if helper is None or helper[0] is jit:
            continue
        uses = ps.integer_params(helper[0])
        names = [p.name for p in helper[0].params]
        for i, a in enumerate(call.args):
            name = a.keyword.value if a.keyword is not None else names[i] if i < len(names) else None
            if name in uses:
                out.append((a.value, uses[name]))
    return out


def prepare_kernel(cand: Candidate, caps: tuple[int, ...], max_configs: int) -> tuple[KernelResult, Any]:
    """Spec + estimates; returns (result, work) where work = (scratch, [(record stub, estimate, task)])."""
    from kernlint.analysis.configs import config_points
    from kernlint.analysis.estimate import estimate, shape_symbols
    from kernlint.pipeline.api import Settings, lint_sources
    from kernlint.calibrate.scratch import ScratchError, build_scratch, find_kernel, source_tree_for
    from kernlint.calibrate.signature import (
        compile_args, derive_signature, lint_arg_types, pointer_args, unit_stride_args,
    )
    from kernlint.frontend.static_eval import StaticEvaluator
    from kernlint.hardware.specs import resolve_targets

    res = KernelResult(cand)
    try:
        tree, pm = source_tree_for(cand.label)
        jit = find_kernel(pm, cand.qualname)
        scratch = build_scratch(tree, pm, jit)
    except ScratchError as exc:
        res.skip = f"scratch module: {exc}"[:200]
        return res, None
    pointers = pointer_args(jit, pm, tree)
    offsets = ps.offset_only(jit, pointers)
    pointers -= offsets
    dtypes = ps.pointer_dtypes(jit, pointers, helper_integer_args(jit, pm, tree))
    given = {name: spec for name, (spec, _) in dtypes.items()}
    res.spec_notes = [f"{n}={s} ({why})" for n, (s, why) in sorted(dtypes.items())] + \
        [f"{n}=i32 (kernlint's pointer finder: only a pointer increment)" for n in sorted(offsets)]
    signature = derive_signature(jit, pointers, given, unit_stride_args(jit, pm, tree))
    call_args, _ = compile_args(signature)
    targets = tuple(CAP_TARGET[c] for c in caps)
    sources = [(m.label, m.data) for m in tree.modules.values() if m.label in scratch.files]
    # one target: the config points do not depend on it, and the per-target estimates are made below only
    # for the configs that get compiled (a lint estimates every autotune config for every target)
    result = lint_sources(sources, Settings(targets=targets[:1], arg_types=lint_arg_types(signature)))
    ka = next((k for f in result.files if f.path == pm.label for k in f.kernels if k.jit.qualname == jit.qualname),
              None)
    if ka is None:
        res.skip = "kernlint: no analysable kernel (" + "; ".join(result.internal_errors)[:120] + ")"
        return res, None
    blocks = set(shape_symbols(ka.ir)) & set(ka.jit.constexpr_names)
    jits = {j.name: j for m in tree.modules.values() for j in m.facts.jit_functions}   # kernel's file wins
    jits.update({j.name: j for j in pm.facts.jit_functions})
    plan = pc.plan_configs(ka.jit, ka.points, blocks, max_configs, jits.get)
    if plan.skip:
        res.skip = plan.skip
        return res, None
    ev = StaticEvaluator(pm.names, pm.facts.constants)
    specs = {s.capability: s for s in resolve_targets(targets)}
    file_sha = hashlib.sha256(pm.data).hexdigest()
    work = []
    for cfg, origin in zip(plan.configs, plan.origins):
        point = config_points(ka.jit, [], [cfg], ev)[0]   # the cli point comes first
        config, constexprs = pc.split_config(cfg, blocks)
        for cap in caps:
            e = estimate(ka.ir, point, specs[cap])
            stub = {"file": cand.label, "kernel": cand.qualname, "package": cand.project,
                    "source_sha256": file_sha, "scratch_sha256": scratch.sha256, "cap": cap, "config": config, "args": call_args,
                    "constexprs": constexprs, "config_origin": origin}
            task = {"kernel": scratch.kernel, "args": call_args, "constexprs": {k: v for k, v in cfg.items()
                    if k not in ps.LAUNCH_KEYS}, "config": {k: v for k, v in cfg.items() if k in ps.LAUNCH_KEYS},
                    "cap": cap}
            work.append((stub, e, task))
    return res, (scratch, work)


def _request_with_watchdog(pool: Any, req: dict[str, Any], timeout: int) -> dict[str, Any]:
    """One compile on the pool's single worker; the worker is killed when it runs past ``timeout`` + 30 s
    (Triton's own SIGALRM timeout cannot interrupt a long LLVM/ptxas step), and the pool starts a new one."""
    from kernlint.calibrate.worker import WorkerCrashed

    fired = threading.Event()

    def kill() -> None:
        fired.set()
        for w in list(pool._all):
            w.proc.kill()

    timer = threading.Timer(timeout + 30, kill)
    timer.start()
    try:
        return pool.request(req)
    except WorkerCrashed as exc:
        return {"error": f"timed out after {timeout + 30} s (worker killed)" if fired.is_set() else str(exc)}
    finally:
        timer.cancel()


def compile_kernel(res: KernelResult, scratch: Any, work: list[Any], pool: Any, env: dict[str, Any],
                   cache: Any, tmp: Path, timeout: int) -> None:
    from kernlint.calibrate.session import _cache_key
    from kernlint.calibrate.triton_compile import RESULT_FIELDS

    module = str(scratch.write(tmp))
    pending = []
    for stub, e, task in work:
        hit = cache.get(_cache_key(scratch, task, env))
        if hit is not None:
            res.records.append({**stub, **hit})
        else:
            pending.append((stub, task))

    timed_out = False
    for stub, task in pending:
        if timed_out:  # the other configs of a kernel that timed out would too: 2 min each
            res.records.append({**stub, **dict.fromkeys(RESULT_FIELDS), "error": "timed out (not tried: an "
                                "earlier config of this kernel timed out)"})
            continue
        out = _request_with_watchdog(pool, {"op": "compile", **task, "module": module, "timeout": timeout}, timeout)
        timed_out = "timed out" in (out.get("error") or "")
        cache.put(_cache_key(scratch, task, env), out)
        res.records.append({**stub, **out})
    by_key = {(json.dumps(s["config"], sort_keys=True), json.dumps(s["constexprs"], sort_keys=True), s["cap"]): e
              for s, e, _ in work}
    for r in res.records:
        e = by_key[(json.dumps(r["config"], sort_keys=True), json.dumps(r["constexprs"], sort_keys=True), r["cap"])]
        if r.get("error") is None and e.estimated:
            res.pairs.append((r, e))


# -- driver -------------------------------------------------------------------------------------------
def sample(cands: list[Candidate], n: int) -> list[Candidate]:
    return pc.spread(sorted(cands, key=lambda c: (c.label, c.line)), n) if n > 0 else cands


def run(a: argparse.Namespace) -> tuple[list[KernelResult], dict[str, int], dict[str, Any]]:
    from kernlint.calibrate.session import Cache
    from kernlint.calibrate.worker import WorkerPool

    os.chdir(ROOT)
    found: dict[str, int] = {}
    queues: list[list[Candidate]] = []
    for project in a.only or DEFAULT_PROJECTS:
        cands = find_kernels(project, package_root(project))
        found[project] = len(cands)
        queues.append(sample(cands, a.per_package))
        print(f"{project}: {len(cands)} kernels, {len(queues[-1])} sampled", file=sys.stderr, flush=True)
    order = [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]  # round robin
    results: list[KernelResult] = []
    start = time.monotonic()
    cache = Cache(None if a.no_cache else ROOT / ".corpus" / "calibrate-cache")
    with tempfile.TemporaryDirectory(prefix="kernlint_public_") as tmp, WorkerPool(a.python, 1) as pool:
        env = pool.environment()
        for cand in order:
            if time.monotonic() - start > a.budget:
                results.append(KernelResult(cand, skip="time budget: not started"))
                continue
            res, prepared = prepare_kernel(cand, a.caps, a.configs)
            if prepared is not None:
                compile_kernel(res, prepared[0], prepared[1], pool, env, cache, Path(tmp), a.timeout)
            results.append(res)
            ok = sum(r.get("error") is None for r in res.records)
            print(f"[{time.monotonic() - start:6.0f}s] {cand.label}::{cand.qualname}: "
                  f"{res.skip or f'{ok}/{len(res.records)} compiled'}", file=sys.stderr, flush=True)
    env["wall_s"] = round(time.monotonic() - start, 1)
    return results, found, env


def save(path: Path, results: list[KernelResult], found: dict[str, int], env: dict[str, Any],
         caps: tuple[int, ...]) -> None:
    doc = {"schema": 1, **{k: env.get(k) for k in ("triton_version", "ptxas_version", "ptxas_blackwell_version",
                                                   "python", "wall_s")},
           "caps": list(caps), "specs": "derived by benchmarks/public_specs.py (benchmarks/public_accuracy.py)",
           "kernels": [{"project": r.cand.project, "file": r.cand.label, "kernel": r.cand.qualname,
                        "skip": r.skip, "spec_notes": r.spec_notes} for r in results],
           "found": found, "records": [rec for r in results for rec in r.records]}
    path.write_text(json.dumps(doc, indent=1) + "\n")


def load(path: Path) -> tuple[list[KernelResult], dict[str, int]]:
    """Rebuild results from a saved run; estimates are recomputed (the model may have moved)."""
    doc = json.loads(path.read_text())
    os.chdir(ROOT)
    for project in doc["found"]:
        package_root(project)
    results = {(k["file"], k["kernel"]): KernelResult(Candidate(k["project"], k["file"], k["kernel"], 0),
                                                      skip=k["skip"], spec_notes=k["spec_notes"])
               for k in doc["kernels"]}
    for rec in doc["records"]:
        results[(rec["file"], rec["kernel"])].records.append(rec)
    pairs = accuracy.estimate_records([r for r in doc["records"]])
    for r, e in pairs:
        results[(r["file"], r["kernel"])].pairs.append((r, e))
    return list(results.values()), doc["found"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], help="project(s) to run (default: all pinned)")
    ap.add_argument("--per-package", type=int, default=12, help="kernels sampled per package (0: all)")
    ap.add_argument("--configs", type=int, default=2, help="configs per kernel (at most 4)")
    ap.add_argument("--caps", default="90,100,80", help="compute capabilities")
    ap.add_argument("--budget", type=float, default=1080, help="seconds after which no new kernel starts")
    ap.add_argument("-j", "--jobs", type=int, default=1, choices=[1],
                    help="compiles run one at a time (one worker, with a watchdog); the CPU is shared")
    ap.add_argument("--python", default=None, help="interpreter with Triton 3.9 (default: this one)")
    ap.add_argument("--timeout", type=int, default=90, help="seconds per compile")
    ap.add_argument("--no-cache", action="store_true", help="compile everything again")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--report", type=Path, help="print the report of a saved run (estimates recomputed)")
    a = ap.parse_args(argv)
    a.configs = max(1, min(a.configs, 4))
    a.caps = tuple(int(c) for c in a.caps.split(","))
    if a.report:
        results, found = load(a.report)
    else:
        results, found, env = run(a)
        save(a.out, results, found, env, a.caps)
        print(f"wall {env['wall_s']} s; truth written to {a.out.relative_to(ROOT) if a.out.is_relative_to(ROOT) else a.out}")
    print(render(results, found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
