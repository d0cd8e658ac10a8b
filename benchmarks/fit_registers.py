"""Fit the register model's per-architecture constants (base, data_scale) to recorded ptxas truth.

    python benchmarks/fit_registers.py [TRUTH.json ...]   (default: benchmarks/truth/triton-3.9.json)

For every non-spilling truth record it takes kernlint's register breakdown at the peak (data tiles vs
address/index/scalar registers) and grid-searches the pair (data_scale, base) per tensor-core family that
minimises the median absolute % error of min(budget, data_scale·data + acc_scale·acc + index + base)
on non-spilling records plus 0.25 × (1 − spill F1) over all records. The printed values
go into kernlint/analysis/registers.py MODELS (with the truth file and Triton version they came from).
"""
from __future__ import annotations

import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _score(rows: list[tuple[float, float, float, int, int, bool]], scale: float, acc_scale: float,
           base: int) -> tuple[float, float, float]:
    """Median register error on non-spilling records plus a penalty for misclassified spills: a model
    that fits medians by under-counting big tiles would stop warning about real spills."""
    errs, tp, fp, fn = [], 0, 0, 0
    for d, a, i, budget, truth, spilled in rows:
        demand = math.ceil(scale * d + acc_scale * a + i + base)
        predicted = demand > budget
        tp += predicted and spilled
        fp += predicted and not spilled
        fn += spilled and not predicted
        if not spilled:
            errs.append(abs(min(budget, demand) - truth) / truth)
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    median = statistics.median(errs) if errs else 0.0
    return (median + 0.25 * (1 - f1), median, f1)


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return 0
    sys.path.insert(0, str(ROOT))   # run as a script: the repository root, for `benchmarks.*`
    from benchmarks import accuracy

    paths = [Path(a) for a in argv] or [ROOT / "benchmarks" / "truth" / "triton-3.9.json"]
    records = [r for p in paths for r in json.loads(p.read_text())["records"]]  # several files are pooled
    pairs = accuracy.estimate_records(records)
    by_family: dict[str, list[tuple[float, float, int, int]]] = defaultdict(list)
    for r, e in pairs:
        if r["shared"] > e.target.smem_per_cta_optin or not r.get("regs"):
            continue
        by_family[e.target.tensor_core].append(
            (e.registers.data_regs, e.registers.acc_regs, e.registers.index_regs, e.registers.budget, r["regs"],
             bool(r["spill_store"])))
    for family, rows in sorted(by_family.items()):
        best = None
        for scale in [x / 20 for x in range(10, 29)]:
            for acc_scale in [x / 20 for x in range(16, 29)]:
                for base in range(0, 48, 2):
                    score = _score(rows, scale, acc_scale, base)
                    if best is None or score < best[0]:
                        best = (score, scale, acc_scale, base)
        assert best is not None
        (_, median, f1), scale, acc_scale, base = best
        print(f"{family:9s} n={len(rows):4d}  data_scale={scale:.2f}  acc_scale={acc_scale:.2f}  base={base:2d}  "
              f"median abs err {median:.1%}  spill F1 {f1:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
