"""Replay saved H200 timings against the time model: ranking quality without a GPU.

  python benchmarks/gpu/replay.py [RESULTS.json ...] [--kernels a,b] [--split fit|held|new|all]

For every kernel × shape pair in the results, every timed config is scored with the current model
(kernlint.recommend.model via core._evaluate) and the model's favourite *among the timed configs* is looked
up in the measured times: `pick/best` = best time / that config's time (1.000 = the model picks the fastest).
The author's timed configs (gpu_configs.author_configs) are the incumbent, as in `kernlint recommend`
(ranking.finish: kept unless the model predicts a gain above MODEL_ERROR; near-ties go to the config closest
to the author's); `--model-only` ranks by the model alone, without the author (the replay before that rule).
This measures ranking, not coverage: the live recommender also searches configs that were never timed,
which only a GPU run (benchmarks/gpu_configs.py) can check. Held-out split: the model's row-kernel and
stage terms were designed looking at shape index 0 and 2 of each kernel (`fit`); shape index 1 (`held`)
was not looked at while choosing them.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from collections.abc import Iterator
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))


def _kernels() -> dict[str, Any]:
    from launch_facts import analysed_kernels  # type: ignore[import-not-found]
    return analysed_kernels()


def saved_rows(paths: list[str], kernels: set[str] | None = None) -> Iterator[tuple[str, str, int, dict[str, Any],
                                                                             Any, Any, dict[str, Any], Any]]:
    """Every saved kernel × shape row: (file, kernel name, shape index or -1, row, analysed kernel, its
    source facts, bucket env, learnt space) — shared by replay() and fit_model.load()."""
    from gpu_configs import KERNELS, next_pow2  # type: ignore[import-not-found]

    from kernlint.recommend import core
    from kernlint.frontend.host_facts import read_kernel_source
    by = _kernels()
    for path in paths:
        for r in json.loads(Path(path).read_text())["rows"]:
            name = r["kernel"]
            if name not in KERNELS or (kernels and name not in kernels):
                continue
            shapes = KERNELS[name][2]
            idx = shapes.index(r["shape"]) if r["shape"] in shapes else -1
            k = by[name]
            src = read_kernel_source(k.jit.path, k.jit.name)
            bucket = dict(r["shape"])
            if name == "softmax":
                bucket["BLOCK_SIZE"] = next_pow2(r["shape"]["n_cols"])
            yield (Path(path).name, name, idx, r, k, src, core.bucket_env(k, src, bucket),
                   core.learn_space(k, src, bucket))


def replay(paths: list[str], kernels: set[str] | None = None, split: str = "all",
           model_only: bool = False) -> list[dict[str, Any]]:
    from gpu_configs import author_configs, split_of  # type: ignore[import-not-found]
    from timing import config_key  # type: ignore[import-not-found]

    from kernlint.hardware.specs import SPECS
    from kernlint.recommend import core, ranking
    spec = SPECS["h200"]
    out = []
    for file, name, idx, r, k, src, env, space in saved_rows(paths, kernels):
        if split != "all" and split_of(idx) != split:
            continue
        scored = []
        for key, us in r["all_us"].items():
            kw, w, s = json.loads(key)
            c = core._evaluate(k, src, spec, {**space.fixed, **dict(kw)}, w, s, env)
            if c is not None:
                scored.append((c, us, key))
        if not scored:
            continue
        if model_only:
            ranked = ranking.rank([c for c, _, _ in scored])
        else:
            authored = {config_key(c) for c in author_configs(name, r["shape"])}
            rec = core.Recommendation(name, "h200", dict(r["shape"]), kind=ranking.kernel_kind(k.ir),
                                      author_configs=[c for c, _, key in scored if key in authored])
            rec.author, rec.author_floor_us = ranking.incumbent(rec.author_configs)
            done = ranking.finish(rec, [c for c, _, _ in scored], top_k=len(scored))
            kept = done.ranked
            if done.kept_author and len(rec.author_configs) > 1:
                # kept for an autotuner: what runs is the author's candidate the autotuner measured fastest
                fastest = min((t for t in scored if t[2] in authored), key=lambda t: t[1])[0]
                kept = [fastest, *(c for c in kept if c is not fastest)]
            ids = {id(c) for c in kept}
            ranked = kept + [c for c in ranking.rank([c for c, _, _ in scored]) if id(c) not in ids]
        order = {id(c): i for i, c in enumerate(ranked)}
        scored.sort(key=lambda t: order[id(t[0])])
        best = min(us for _, us, _ in scored)
        out.append(dict(file=file, kernel=name, shape=r["shape"], split=split_of(idx),
                        pick=scored[0][2], pick_us=scored[0][1], best_us=best, ratio=best / scored[0][1],
                        top3=min(us for _, us, _ in scored[:3]) and best / min(us for _, us, _ in scored[:3])))
    return out


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv: list[str]) -> None:
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return
    paths = [a for a in argv if a.endswith(".json")] or [str(ROOT / "benchmarks/gpu/h200_results.json")]
    kern = next((a.split("=", 1)[1] for a in argv if a.startswith("--kernels=")), None)
    split = next((a.split("=", 1)[1] for a in argv if a.startswith("--split=")), "all")
    rows = replay(paths, set(kern.split(",")) if kern else None, split, "--model-only" in argv)
    for r in rows:
        shape = ",".join(f"{k}={v}" for k, v in r["shape"].items())
        print(f"{r['file'][:22]:<22} {r['split']:<4} {r['kernel']:<13} {shape:<48} pick/best {r['ratio']:.3f} "
              f"top3 {r['top3']:.3f}  {r['pick']}")
    for sp in ("fit", "held", "new", "fresh", "unseen"):
        xs = [r["ratio"] for r in rows if r["split"] == sp]
        if xs:
            print(f"{sp}: geomean pick/best {geomean(xs):.3f}, worst {min(xs):.3f} ({len(xs)} pairs)")
    xs = [r["ratio"] for r in rows]
    print(f"all: geomean pick/best {geomean(xs):.3f}, worst {min(xs):.3f} ({len(xs)} pairs)")


if __name__ == "__main__":
    main(sys.argv[1:])
