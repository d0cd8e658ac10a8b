"""Differential fuzzing: kernlint's shared-memory estimate against Triton's compiler on generated kernels.

    python benchmarks/fuzz_truth.py                    # 60 generated kernels, seed 0, sm_80/sm_90/sm_100
    python benchmarks/fuzz_truth.py --kernels 200 --seed 3 --save /tmp/mismatches

The kernels come from the fuzz grammar of tests/fuzz/ (loads, reductions, dots, loops, helpers, autotune
lists). Each one is compiled through `kernlint calibrate --json` (a scratch module, never an import) at its
one config on every target, and kernlint's estimate made under the same assumptions is compared with
Triton's `metadata.shared`. Kernels Triton rejects (dtype mismatches the grammar allows) are counted and
skipped. Needs Triton (`pip install 'kernlint[triton]'`); no GPU.

What it found so far (2026-11-30, each now a rule with its own test): loads whose inner stride is a run-time
value are not vectorised, stores convert the narrower side of their cast, loads of the same tile in every
iteration are not pipelined, and dead values cost nothing.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))

from fuzz_grammar import RandomChooser, generate_kernel  # noqa: E402


def calibrate(path: Path, name: str, config: dict[str, object], pointee: str, targets: str,
              python: str) -> dict[str, object] | None:
    cfg = ",".join(f"{k}={int(v) if isinstance(v, bool) else v}" for k, v in config.items())
    cmd = [python, "-m", "kernlint", "calibrate", f"{path}::{name}", "--target", targets, "--config", cfg,
           "--arg", f"*={pointee}", "--json", "--no-progress", "--no-cache", "--timeout", "120", "-j", "1"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        return None


def run(kernels: int, seed: int, targets: str, python: str, save: Path | None) -> Counter[str]:
    ch = RandomChooser(random.Random(seed))
    counts: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="kernlint_fuzz_truth_") as tmp:
        for i in range(kernels):
            gk = generate_kernel(ch)
            path = Path(tmp) / f"seed{seed}_{i}.py"
            path.write_text(gk.source)
            doc = calibrate(path, gk.name, gk.config, gk.pointee, targets, python)
            counts["kernels"] += 1
            if doc is None:
                counts["no result"] += 1
                continue
            for row in doc.get("rows", []):
                if row.get("origin") != "cli":
                    continue
                truth, est = row.get("truth"), row.get("estimate") or {}
                if not truth:
                    counts["rejected by Triton"] += 1
                    continue
                counts["compared"] += 1
                if truth.get("smem") == est.get("smem"):
                    counts["smem exact"] += 1
                else:
                    print(f"mismatch {path.name} {row['target']} {gk.config} {gk.pointee}: "
                          f"estimate {est.get('smem')} B, Triton {truth.get('smem')} B", flush=True)
                    if save is not None:
                        save.mkdir(parents=True, exist_ok=True)
                        (save / path.name).write_text(gk.source)
                counts["oor agree"] += truth.get("oor") == est.get("oor")
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--targets", default="h100,b200,a100")
    ap.add_argument("--python", default=sys.executable, help="interpreter with Triton installed")
    ap.add_argument("--save", type=Path, default=None, help="write each mismatching kernel here")
    a = ap.parse_args()
    c = run(a.kernels, a.seed, a.targets, a.python, a.save)
    n = max(1, c["compared"])
    print(f"seed {a.seed}: {c['kernels']} kernels, {c['compared']} (kernel, target) compiles compared, "
          f"{c['rejected by Triton']} rejected by Triton, {c['no result']} without a result; shared memory exact "
          f"{c['smem exact']}/{c['compared']} ({100 * c['smem exact'] / n:.1f} %), OutOfResources agrees "
          f"{c['oor agree']}/{c['compared']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
