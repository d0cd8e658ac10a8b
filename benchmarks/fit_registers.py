"""Fit the register model's per-architecture constants (base, data_scale) to recorded ptxas truth.

    python benchmarks/fit_registers.py [benchmarks/truth/triton-3.9.json]

For every non-spilling truth record it takes kernlint's register breakdown at the peak (data tiles vs
address/index/scalar registers) and grid-searches the pair (data_scale, base) per tensor-core family that
minimises the median absolute % error of min(budget, data_scale·data + index + base). The printed values
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


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import accuracy
    from kernlint.analysis import registers

    path = Path(argv[0]) if argv else ROOT / "benchmarks" / "truth" / "triton-3.9.json"
    doc = json.loads(path.read_text())
    pairs = accuracy.estimate_records(doc["records"])
    by_family: dict[str, list[tuple[float, float, int, int]]] = defaultdict(list)
    for r, e in pairs:
        if r["spill_store"] or r["shared"] > e.target.smem_per_cta_optin or not r.get("regs"):
            continue
        model = registers.MODELS[e.target.tensor_core]
        by_family[e.target.tensor_core].append(
            (e.registers.data_regs, e.registers.index_regs, e.registers.budget, r["regs"]))
        _ = model
    for family, rows in sorted(by_family.items()):
        best = None
        for scale in [x / 20 for x in range(6, 25)]:
            for base in range(0, 64, 2):
                errs = [abs(min(budget, math.ceil(scale * d + i + base)) - t) / t for d, i, budget, t in rows]
                score = (statistics.median(errs), sum(errs) / len(errs))
                if best is None or score < best[0]:
                    best = (score, scale, base)
        assert best is not None
        (median, mean), scale, base = best
        print(f"{family:9s} n={len(rows):4d}  data_scale={scale:.2f}  base={base:2d}  "
              f"median abs err {median:.1%}  mean {mean:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
