"""Authors' shipped configs vs kernlint's pick vs an exhaustive grid, on released kernels (issue 32 item 5).

  python benchmarks/real_kernels.py stage          # here: copies the kernels' sources from .corpus/src into
                                                   #   .corpus/real_kernels (git-ignored; carried to the GPU)
  python benchmarks/real_kernels.py plan           # here: `kernlint recommend` per kernel × shape, as a user
                                                   #   runs it -> benchmarks/real_kernels/plan.json
  python3 benchmarks/real_kernels.py run OUTDIR    # on the GPU (triton + torch): times every config
  python benchmarks/real_kernels.py report RESULTS # here: benchmarks/gpu/real_kernels_h200.md from the results

On the device the kernel modules are imported from the staged copies of the released packages (never from
the lint path), and the `@triton.jit` function is launched directly with each config (autotune/heuristics
wrappers bypassed through `.fn`). Per kernel × shape the timed configs are: the author's (the launch code's
settings for this GPU; for an autotuned kernel every config of its list, the author's time being the best of
them, which is what their autotuner picks), kernlint's applied config (its store's top-1, or the author's
config where the store keeps it or kernlint gives nothing) and an exhaustive grid over the author's space
(BLOCK sizes where the kernel allows more than one, num_warps 1-32, num_stages 1/3; GEMM tiles 64-256 ×
BLOCK_K 32/64 × warps 4/8 × stages 3/4 plus the author's list). kernlint's first-ranked config is timed as
well, applied or not (the `top-1/author` column: what replacing the author's config would have given). Every
config is first checked against a torch reference with NaN-poisoned outputs; timing and the final re-timing
rounds are those of benchmarks/gpu_configs.py (benchmarks/gpu/timing.py).

plan.json records the kernlint revision it was made with (`kernlint`; KL_REV names it where the plan runs
in an exported tree without .git). The committed run (benchmarks/gpu/real_kernels_h200.json, 45 pairs) was made in four device calls (335 s,
265 s, 100 s and 77 s), carrying the staged .corpus/real_kernels:
  KL_ONLY=flag_gems.mm,flag_gems.softmax,... python3 benchmarks/real_kernels.py run $OUT
one for the first flag_gems/fla kernels, one for the liger/unsloth/mamba ones, one for gemlite (its N and K
are constexprs, so each config compiles once per shape) and one for flag_gems' host-TMA GEMM, rows merged in
plan order (same GPU, torch and Triton). KL_DEVICE=cpu TRITON_INTERPRET=1 runs a setup on the CPU for a dry run on small
shapes (the interpreter's bf16 `tl.dot` is wrong, so check the GEMM in fp16 there).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))   # a script: the repository root, for `benchmarks.*`
sys.path.insert(0, str(ROOT / "benchmarks" / "gpu"))   # timing.py, copied beside the script on the GPU host
from benchmarks.real_kernels.specs import KERNELS, STAGE, author_configs, grid_configs, kernlint_shape  # noqa: E402

PLAN = ROOT / "benchmarks" / "real_kernels" / "plan.json"
REPORT = ROOT / "benchmarks" / "gpu" / "real_kernels_h200.md"
ROUNDS = 5


def stage() -> None:
    from benchmarks.real_kernels.specs import stage as _stage
    _stage(ROOT)


def plan() -> None:
    """`kernlint recommend FILE --kernel K --target h200 --shape ... -o STORE`, as a user would run it. When it
    refuses because a tile size is computed at the launch site, it is run again with that size pinned (the
    value the author's launch code computes), as its message asks; the row says so."""
    import tempfile
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    out: dict[str, Any] = {"target": "h200", "kernlint": os.environ.get("KL_REV") or rev.stdout.strip() or None,
                           "pairs": []}
    for name, k in KERNELS.items():
        src = ROOT / ".corpus" / "src" / k["src"]
        for shape in k["shapes"]:
            tries = [(False, kernlint_shape(name, shape, pin=False)), (True, kernlint_shape(name, shape, pin=True))]
            if tries[1][1] == tries[0][1]:   # no block size the launch computes (an autotune list's tiles)
                tries = tries[:1]
            rec = None
            for pinned, sh in tries:
                with tempfile.TemporaryDirectory() as d:
                    store = Path(d) / "store.json"
                    cmd = [sys.executable, "-m", "kernlint", "recommend", str(src), "--kernel", k["kernel"],
                           "--target", "h200", "--shape", sh, "--top-k", "3", "-o", str(store)]
                    for a in k.get("args", []):
                        cmd += ["--arg", a]
                    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
                    entries = json.loads(store.read_text())["entries"] if store.exists() else []
                text = (p.stdout + p.stderr).replace(str(ROOT) + "/", "").replace(str(store), "store.json")
                rec = dict(pinned=pinned, shape_arg=sh, output=text.splitlines()[-12:], rc=p.returncode,
                           top1=_top1(text, k["tunable"]))
                if entries:
                    e = entries[0]
                    rec.update(config=e["config"], keep=e.get("keep"), space=e.get("space"))
                    break
                if pinned or "computed at the launch site" not in text:
                    break
            author = author_configs(name, shape)
            if rec and rec.get("config") and not rec.get("keep"):
                applied = dict(rec["config"])
                applied["kwargs"] = {kk: v for kk, v in applied["kwargs"].items() if kk in k["tunable"]}
                verdict = "replaced"
            else:
                applied = None   # nothing applied: the author's launch runs unchanged
                verdict = "kept" if rec and rec.get("keep") else "none"
            out["pairs"].append(dict(kernel=name, shape=shape, kernlint=rec, kernlint_applied=applied,
                                     kernlint_top1=rec.get("top1") if rec else None,
                                     kernlint_verdict=verdict, author=author, grid=grid_configs(name, shape)))
            print(name, shape, verdict, applied, flush=True)
    PLAN.write_text(json.dumps(out, indent=1) + "\n")


def _top1(text: str, tunable: list[str]) -> dict[str, Any] | None:
    """The first config kernlint ranked (`    1. BLOCK_SIZE=4096, num_warps=8, num_stages=1`), whether or not it
    was applied: timed too, so the table shows what replacing the author's config would have given."""
    for line in text.splitlines():
        m = re.match(r"\s+1\. (.*)$", line)
        if m:
            kv = dict(item.split("=", 1) for item in m.group(1).split(", ") if "=" in item)
            try:
                return dict(kwargs={kk: int(v) for kk, v in kv.items() if kk in tunable},
                            num_warps=int(kv["num_warps"]), num_stages=int(kv["num_stages"]))
            except (KeyError, ValueError):
                return None
    return None


def run(outdir: str) -> None:
    import torch
    import triton
    from timing import check_config, config_key, settle, time_config  # type: ignore[import-not-found]

    from benchmarks.real_kernels.setups import setup
    plan_ = json.loads(PLAN.read_text())
    only = os.environ.get("KL_ONLY")
    results: list[dict[str, Any]] = []
    for p in plan_["pairs"]:
        if only and p["kernel"] not in only.split(","):
            continue
        try:
            launch, outs, ref = setup(p["kernel"], p["shape"], ROOT / STAGE)
        except Exception as e:  # noqa: BLE001 - an import or setup failure is reported, not fatal
            results.append(dict(kernel=p["kernel"], shape=p["shape"], setup_error=f"{type(e).__name__}: {e}"[:300]))
            print(p["kernel"], "setup failed:", e, flush=True)
            _write(outdir, results)
            continue
        applied = p["kernlint_applied"]
        top1 = p.get("kernlint_top1")
        cfgs = {config_key(c): c for c in p["grid"] + p["author"] + [c for c in (applied, top1) if c]}
        times: dict[str, float] = {}
        errors: dict[str, str] = {}
        digests: dict[str, str | None] = {}
        for key, c in cfgs.items():
            err = check_config(launch, outs, ref, c, digests)
            if err:
                errors[key] = err
                continue
            times[key] = time_config(launch, c)
        auth_keys = [config_key(c) for c in p["author"]]
        auth = min((kk for kk in auth_keys if kk in times), key=lambda kk: times[kk], default=None)
        rec = config_key(applied) if applied else auth   # nothing applied: the author's config runs
        if not times:
            results.append(dict(kernel=p["kernel"], shape=p["shape"], setup_error="no config ran",
                                failed=errors))
            _write(outdir, results)
            continue
        best = min(times, key=lambda kk: times[kk])
        near = sorted((kk for kk in times if times[kk] <= 1.05 * times[best]), key=lambda kk: times[kk])[:6]
        top1_key = config_key(top1) if top1 else None
        finalists = [kk for kk in dict.fromkeys([rec, auth, top1_key, *near]) if kk in times]
        rounds: dict[str, list[float]] = {kk: [] for kk in finalists}
        for _ in range(ROUNDS):
            for kk in finalists:
                rounds[kk].append(time_config(launch, cfgs[kk]))
        for kk, v in rounds.items():
            times[kk] = sorted(v)[len(v) // 2]
        best = min(finalists, key=lambda kk: times[kk])
        final = settle(rec if rec in times else None, auth, best, digests,
                       lambda kk: time_config(launch, cfgs[kk]))
        times.update(final["us"])
        best = final["best"]
        row = dict(kernel=p["kernel"], shape=p["shape"], best=json.loads(best), best_us=round(times[best], 3),
                   author=json.loads(auth) if auth else None,
                   author_us=round(times[auth], 3) if auth else None,
                   kernlint_verdict=p["kernlint_verdict"], kernlint=json.loads(rec) if rec in times else None,
                   kernlint_us=round(times[rec], 3) if rec in times else None,
                   kernlint_error=errors.get(rec) if rec else None,
                   author_correct=auth is not None and all(kk not in errors for kk in auth_keys if kk == auth),
                   kernlint_correct=rec in times, n_timed=len(times), n_failed=len(errors),
                   failed=dict(sorted(errors.items())), all_us={kk: round(v, 3) for kk, v in sorted(times.items())},
                   same_program=final["merged"])
        if top1_key:   # kernlint's first-ranked config, applied or not (a finalist's median)
            tk = top1_key
            row.update(kernlint_top1=json.loads(tk), kernlint_top1_us=round(times[tk], 3) if tk in times else None,
                       kernlint_top1_error=errors.get(tk))
        results.append(row)
        _write(outdir, results)
        print(f"{p['kernel']:<22} {json.dumps(p['shape']):<40} best {row['best_us']:9.2f} µs  "
              f"author/best {row['best_us'] / row['author_us'] if row['author_us'] else float('nan'):.3f}  "
              f"kernlint/best {row['best_us'] / row['kernlint_us'] if row['kernlint_us'] else float('nan'):.3f} "
              f"({p['kernlint_verdict']}; {len(times)} timed, {len(errors)} failed)", flush=True)
    _write(outdir, results)
    print(f"torch {torch.__version__} triton {triton.__version__}")


def _write(outdir: str, results: list[dict[str, Any]]) -> None:
    import torch
    import triton
    Path(outdir).mkdir(parents=True, exist_ok=True)
    info = dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__, triton=triton.__version__)
    (Path(outdir) / "real_kernels_results.json").write_text(json.dumps(dict(info=info, rows=results), indent=1) + "\n")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "stage":
        stage()
    elif cmd == "plan":
        plan()
    elif cmd == "run":
        run(sys.argv[2] if len(sys.argv) > 2 else os.environ.get("OUT", "."))
    elif cmd == "report" and len(sys.argv) > 2:
        from benchmarks.real_kernels.report import render
        REPORT.write_text(render(json.loads(Path(sys.argv[2]).read_text()), json.loads(PLAN.read_text())))
        print(REPORT.read_text())
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
