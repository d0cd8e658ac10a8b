"""How far the time model overstates a gain over the author's config, per kernel kind, from saved H200 timings.

  python benchmarks/gpu/model_error.py [RESULTS.json ...]     # default: every benchmarks/gpu/h200_results*.json

Per saved kernel × shape row, every timed config is scored with the current model (as replay.py does); the
model's pick among them is compared with the author's incumbent (ranking.incumbent over the author's timed
configs, gpu_configs.author_configs): modelled gain = incumbent / pick modelled time − 1, measured gain the
same with the timings. The error of a kind (ranking.kernel_kind: dot / reduction / elementwise) is the
smallest modelled gain above which the pick measured slower than the incumbent (by more than NOISE) in at
most LOSS_SHARE of the pairs, and never below the smallest gain the runs tested (a modelled gain smaller than
any measured one is unproven: no dot pair was modelled closer than 5 %). `kernlint recommend` replaces an author's config only for a modelled gain above
it (ranking.MODEL_ERROR). The model overstates gains on average (median overstatement printed), so a bound
on the size of the error would keep nearly every author config, real 1.3x wins over untuned launches included;
this bounds how often a replacement loses instead.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "benchmarks" / "gpu")]
NOISE = 0.01        # run-to-run spread of one config's median on the H200 (timing.py re-times finalists)
LOSS_SHARE = 0.05   # a replacement may lose to the author's config in at most 1 pair of 20


def gains(paths: list[str]) -> dict[str, list[tuple[float, float]]]:
    from gpu_configs import author_configs  # type: ignore[import-not-found]
    from replay import saved_rows  # type: ignore[import-not-found]
    from timing import config_key  # type: ignore[import-not-found]

    from kernlint.hardware.specs import SPECS
    from kernlint.recommend import core, ranking
    spec = SPECS["h200"]
    out: dict[str, list[tuple[float, float]]] = {}
    for _, name, _, r, k, src, env, space in saved_rows(paths):
        authored = {config_key(c) for c in author_configs(name, r["shape"])}
        scored, authors = [], []
        for key, us in r["all_us"].items():
            kw, w, s = json.loads(key)
            c = core._evaluate(k, src, spec, {**space.fixed, **dict(kw)}, w, s, env)
            if c is None:
                continue
            scored.append((c, us))
            if key in authored:
                authors.append((c, us))
        if not scored or not authors:
            continue
        measured = {id(c): us for c, us in scored}
        pick = ranking.rank([c for c, _ in scored])[0]
        inc, _ = ranking.incumbent([c for c, _ in authors])
        assert inc is not None
        out.setdefault(ranking.kernel_kind(k.ir), []).append(
            (inc.score.time_us / pick.score.time_us - 1, measured[id(inc)] / measured[id(pick)] - 1))
    return out


def error(pairs: list[tuple[float, float]]) -> float:
    """The smallest modelled gain t such that pairs modelled more than t faster lost in <= LOSS_SHARE of them,
    at least the smallest gain (beyond a tie) that was measured at all."""
    from kernlint.recommend.ranking import NEAR_TIE
    tested = min((m for m, _ in pairs if m > NEAR_TIE), default=0.0)
    for t in sorted({0.0, *(m for m, _ in pairs)}):
        above = [real for m, real in pairs if m > t]
        if not above or sum(real < -NOISE for real in above) <= LOSS_SHARE * len(above):
            return max(t, tested)
    return max(m for m, _ in pairs)


def main(argv: list[str]) -> None:
    paths = [a for a in argv if a.endswith(".json")] or sorted(map(str, (ROOT / "benchmarks/gpu").glob(
        "h200_results*.json")))
    for kind, pairs in sorted(gains(paths).items()):
        over = sorted(math.log1p(m) - math.log1p(r) for m, r in pairs)
        lost = sum(r < -NOISE for _, r in pairs)
        print(f"{kind:<12} {len(pairs):>4} pairs: error {error(pairs):.3f} (pick lost in {lost}; median "
              f"overstatement of the gain {math.expm1(over[len(over) // 2]):+.3f})")


if __name__ == "__main__":
    main(sys.argv[1:])
