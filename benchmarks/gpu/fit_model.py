"""Fit the time model's constants to saved H200 timings, validated on held-out shapes (issue 4).

  python benchmarks/gpu/fit_model.py [RESULTS.json ...] [--rounds 3]

The time model (kernlint/recommend/model.py) ranks configs; its constants started as datasheet leads
(bandwidths, latencies). This script measures how well each constant setting ranks the configs that were
really timed on the H200 (benchmarks/gpu/h200_results*.json, every run), the same measure as replay.py:
per kernel × shape, best time / time of the model's favourite among the timed configs.

The estimates and work summaries are computed once per config and only `score()` is re-run per setting,
so one setting costs milliseconds. Coordinate descent over a multiplicative grid per constant maximises
the geomean on the `fit` split (shape index 0 and 2 of each kernel); the `held` split (shape index 1) is
only reported, never optimised, so its number says whether a setting generalises. It prints the
constants; copying them into model.py is a deliberate, reviewed step.
"""
from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "benchmarks" / "gpu"))

# constants of kernlint.recommend.model searched, with the multiplicative steps tried around the current value
SEARCHED = ("DRAM_LATENCY_US", "L2_OVER_DRAM", "SOFT_MAX_P", "ITER_BASE_US", "ITER_PER_ELEM_US",
            "CTA_OVERHEAD_US", "L1_WAVEFRONTS_PER_CLK", "LAUNCH_US")
STEPS = (0.1, 0.25, 0.5, 0.7, 0.85, 1.0, 1.2, 1.4, 2.0, 4.0)


@dataclass
class Timed:
    group: int          # one kernel × shape × results file
    split: str          # fit | held | new (gpu_configs.split_of)
    us: float
    est: Any
    work: Any
    ctas: int | None
    spill: int
    stages: int
    warps: int
    label: str = ""


def load(paths: list[str]) -> list[Timed]:
    import replay  # type: ignore[import-not-found]
    from gpu_configs import split_of  # type: ignore[import-not-found]

    from kernlint.analysis.configs import ConfigPoint
    from kernlint.analysis.estimate import estimate
    from kernlint.hardware.specs import SPECS
    from kernlint.recommend import core
    from kernlint.recommend.model import kernel_work
    from kernlint.frontend.host_facts import evaluate_grid
    spec = SPECS["h200"]
    out: list[Timed] = []
    group = 0
    for _, name, idx, r, k, src, env0, space in replay.saved_rows(paths):
        if idx < 0:
            continue
        group += 1
        for key, us in r["all_us"].items():
            kw, w, s = json.loads(key)
            values = {**space.fixed, **dict(kw)}
            est = estimate(k.ir, ConfigPoint(values, w, s, "cli", k.jit.line), spec)
            if core.infeasible_reason(est):
                continue
            env = {**env0, **values}
            out.append(Timed(group, split_of(idx), us, est, kernel_work(k.ir, src, env, s, w),
                             evaluate_grid(src, env), est.registers.spill_bytes if est.registers else 0, s, w,
                             f"{name} {','.join(f'{a}={b}' for a, b in r['shape'].items())}"))
    return out


def evaluate(rows: list[Timed], show: bool = False) -> dict[str, tuple[float, float]]:
    """Per split: (geomean best/pick, worst best/pick) with the model constants as they are now."""
    from kernlint.hardware.specs import SPECS
    from kernlint.recommend.model import score
    spec = SPECS["h200"]
    groups: dict[int, list[tuple[tuple[Any, ...], float, str]]] = {}
    for t in rows:
        sc = score(t.est, t.work, spec, t.ctas)
        groups.setdefault(t.group, []).append(((t.spill > 0, round(sc.time_us, 3), t.spill, t.stages, t.warps),
                                               t.us, t.split))
    ratios: dict[str, list[float]] = {"fit": [], "held": [], "new": [], "fresh": [], "unseen": []}
    for gid, items in groups.items():
        best = min(us for _, us, _ in items)
        pick = min(items, key=lambda x: x[0])
        ratios[pick[2]].append(best / pick[1])
        if show:
            t = next(t for t in rows if t.group == gid and t.us == pick[1])
            print(f"  {best / pick[1]:.3f} {pick[2]:<4} {t.label:<40} {t.est.config.constexprs} w{t.warps} s{t.stages} "
                  f"({pick[1]:.1f} µs vs best {best:.1f})")
    out = {}
    for split, xs in ratios.items():
        if xs:
            out[split] = (math.exp(sum(map(math.log, xs)) / len(xs)), min(xs))
    return out


def fit(rows: list[Timed], rounds: int) -> dict[str, float]:
    from kernlint.recommend import model
    for rnd in range(rounds):
        changed = False
        for name in SEARCHED:
            base = getattr(model, name)
            best_v, best_s = base, evaluate(rows)["fit"]
            for step in STEPS:
                setattr(model, name, base * step)
                s = evaluate(rows)["fit"]
                if s > best_s:  # geomean first, worst case breaks ties
                    best_v, best_s = base * step, s
            setattr(model, name, best_v)
            changed |= best_v != base
            print(f"round {rnd + 1} {name:<24} {base:.4g} → {best_v:.4g}  fit {best_s[0]:.4f} (worst {best_s[1]:.3f})")
        if not changed:
            break
    return {n: getattr(model, n) for n in SEARCHED}


def main(argv: list[str]) -> None:
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return
    paths = [a for a in argv if a.endswith(".json")] or sorted(str(p) for p in (ROOT / "benchmarks/gpu").glob("h200_results*.json"))
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    rows = load(paths)
    before = evaluate(rows)
    print(f"{len(rows)} timed configs; before: " + ", ".join(f"{k} {g:.4f} (worst {w:.3f})" for k, (g, w) in before.items()))
    consts = fit(rows, rounds)
    after = evaluate(rows, show="--show" in argv)
    print("after: " + ", ".join(f"{k} {g:.4f} (worst {w:.3f})" for k, (g, w) in after.items()))
    print(json.dumps(consts, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
