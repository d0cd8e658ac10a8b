"""Performance benchmarks against the budgets of docs/design.md; prints one table.

    python benchmarks/speed.py                    # full sizes
    python benchmarks/speed.py --small            # seconds; what the CI smoke test runs

Rows: µs per estimate (kernel, config, target) for examples/matmul.py; a full config sweep of that
kernel (hundreds of `--config`s × 3 targets, via Settings(cli_configs=...)); files/s with `kernlint
check -j 2 --no-cache` over the corpus (.corpus/src, when benchmarks/corpus.py has run) or examples/;
`kernlint check` cold start (subprocess, small file, best of N); peak memory (getrusage); and, when
/work/venv-triton exists, one real Triton compile of the same matmul config vs one estimate.
"""
from __future__ import annotations

import argparse
import itertools
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kernlint.analysis.estimate import estimate
from kernlint.pipeline.api import Settings, lint_paths
from kernlint.hardware.specs import resolve_targets

ROOT = Path(__file__).resolve().parents[1]
MATMUL = ROOT / "examples" / "matmul.py"
TRITON_PY = Path("/work/venv-triton/bin/python")
SMALL_FILE = "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n" \
             "    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, tl.load(x_ptr + offs))\n"
# One compile of the first MATMUL_CONFIGS entry on sm_90, run inside the Triton venv (kernlint's
# calibrate helper needs only the standard library there). Prints the compile's wall seconds.
COMPILE = """
import json, sys, time
sys.path.insert(0, {root!r})
from kernlint.calibrate.triton_compile import compile_jit, unwrap
import importlib.util
spec = importlib.util.spec_from_file_location("speed_matmul", {path!r})
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
args = {{"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
        "stride_am": "i32", "stride_ak": 1, "stride_bk": "i32", "stride_bn": 1, "stride_cm": "i32", "stride_cn": 1}}
t = time.perf_counter()
rec = compile_jit(unwrap(mod.matmul_kernel), args, {{}}, {config!r}, 90, 300)
print(json.dumps({{"seconds": time.perf_counter() - t, "error": rec.get("error"), "shared": rec.get("shared")}}))
"""
CONFIG = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}


def sweep_configs(limit: int) -> tuple[dict[str, int], ...]:
    grid = itertools.product((32, 64, 128, 256), (32, 64, 128, 256), (32, 64, 128), (2, 4, 8), (2, 3, 4, 5))
    return tuple({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "num_warps": w, "num_stages": s}
                 for m, n, k, w, s in itertools.islice(grid, limit))


def per_estimate_us(repeat: int) -> float:
    """Time `estimate()` alone over the sweep's (config, target) pairs (the frontend runs once)."""
    result = lint_paths([str(MATMUL)], Settings(targets=("h100",), cli_configs=sweep_configs(64)))
    k = result.files[0].kernels[0]
    targets = resolve_targets(("h100", "b200", "a100"))
    pairs = [(p, t) for p in k.points for t in targets]
    start = time.perf_counter()
    for _ in range(repeat):
        for p, t in pairs:
            estimate(k.ir, p, t)
    return (time.perf_counter() - start) / (repeat * len(pairs)) * 1e6


def full_sweep(n_configs: int) -> tuple[float, int]:
    settings = Settings(targets=("h100", "b200", "a100"), cli_configs=sweep_configs(n_configs))
    start = time.perf_counter()
    result = lint_paths([str(MATMUL)], settings)
    seconds = time.perf_counter() - start
    return seconds, sum(len(k.estimates) for f in result.files for k in f.kernels)


def files_per_second(tree: Path, jobs: int) -> tuple[float, int]:
    """Files per second as kernlint itself counts them (its summary line): run from inside the tree so a
    hidden parent such as `.corpus/` does not trip the default excludes (an earlier version timed 0 files)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kernlint", "check", ".", "-j", str(jobs), "--no-cache",
                           "--exit-zero", "--output-format", "concise"], capture_output=True, text=True,
                          check=False, cwd=tree)
    seconds = time.perf_counter() - start
    match = re.search(r"in (\d+) file", done.stdout + done.stderr)
    linted = int(match.group(1)) if match else 0
    return (linted / seconds if linted else 0.0), linted


def cold_start_ms(runs: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "small.py"
        f.write_text(SMALL_FILE)
        best = float("inf")
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "kernlint", "check", str(f), "--no-cache"],
                           capture_output=True, check=False, cwd=tmp)
            best = min(best, time.perf_counter() - start)
    return best * 1e3


def triton_compile_s() -> dict[str, object] | None:
    if not TRITON_PY.exists():
        return None
    with tempfile.TemporaryDirectory() as cache:
        code = COMPILE.format(root=str(ROOT), path=str(MATMUL), config=CONFIG)
        proc = subprocess.run([str(TRITON_PY), "-c", code], capture_output=True, text=True, check=False,
                              env={"TRITON_CACHE_DIR": cache, "PATH": "/usr/bin:/bin", "HOME": cache}, timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    return json.loads(lines[-1]) if lines else {"seconds": None, "error": proc.stderr.strip()[-300:]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="tiny sizes (CI smoke test)")
    ap.add_argument("--no-compile", action="store_true", help="skip the Triton compile comparison")
    ap.add_argument("--tree", type=Path, default=None, help="directory for files/s (default: corpus or examples)")
    a = ap.parse_args()
    small = a.small
    rows: list[tuple[str, str, str]] = []
    us = per_estimate_us(1 if small else 20)
    rows.append(("one estimate (matmul, config, target)", f"{us:,.0f} µs", "well under 1 ms"))
    n = 8 if small else 384
    secs, count = full_sweep(n)
    rows.append((f"full sweep: matmul × {n} configs × 3 targets ({count} estimates)", f"{secs:.2f} s", "< 1 s"))
    corpus = ROOT / ".corpus" / "src"
    tree = a.tree or (corpus if corpus.exists() and not small else ROOT / "examples")
    fps, nfiles = files_per_second(tree, 2)
    rows.append((f"check -j 2 --no-cache over {tree.relative_to(ROOT) if tree.is_relative_to(ROOT) else tree} "
                 f"({nfiles} files)", f"{fps:,.1f} files/s", "thousands/min = 17+/s"))
    rows.append(("`kernlint check` cold start (small file, best)", f"{cold_start_ms(1 if small else 5):,.0f} ms", "≤ 300 ms"))
    peak_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peak_kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    rows.append(("peak memory: this process / largest child", f"{peak_self:,.0f} / {peak_kids:,.0f} MiB", ""))
    if not (small or a.no_compile):
        rec = triton_compile_s()
        if rec is None:
            rows.append(("Triton compile of the same config", "skipped (no /work/venv-triton)", ""))
        elif rec.get("seconds") is None or rec.get("error"):
            rows.append(("Triton compile of the same config", f"failed: {rec.get('error')}", ""))
        else:
            compile_s = float(rec["seconds"])  # type: ignore[arg-type]
            rows.append(("Triton compile, same config (sm_90, no GPU)", f"{compile_s:.2f} s", ""))
            rows.append(("compile / estimate", f"{compile_s / (us / 1e6):,.0f}×", "≥ 1000×"))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':{width}}  {'result':>22}  budget")
    for name, value, budget in rows:
        print(f"{name:{width}}  {value:>22}  {budget}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
