"""The H200 table of benchmarks/gpu_configs.py: `python benchmarks/gpu_configs.py report RESULTS.json`.

Writes benchmarks/gpu/h200_configs.md (kernel, shape, best, recommended/best, author/best, seeded-search
count, geomeans) from one run's results; everything below NOTES_MARK in the existing file is kept.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOTES_MARK = "<!-- notes on the runs: kept when the table is regenerated -->"


def report(path: str, out: Path | None = None) -> None:
    data = json.loads(Path(path).read_text())
    rows = data["rows"]
    lines = [f"# Config quality on {data['info']['gpu']} (Triton {data['info']['triton']}, torch {data['info']['torch']})",
             "", "Speed relative to the best timed config (best time / config time: 1.000 = as fast as the best, "
             "higher is better). Produced by `benchmarks/gpu_configs.py`; recommendations from `plan.json`.", "",
             "| kernel | shape | best µs | best config | kernlint rec | rec/best | author/best | seeded: configs to ≤5% |",
             "|---|---|---:|---|---|---:|---:|---:|"]
    rr, ar, seeds = [], [], []

    def lab(c: dict[str, Any] | None) -> str:
        if not c:
            return "—"
        kw = "".join(f"{k.replace('BLOCK_', '').replace('SIZE', 'B')}{v}·" for k, v in c[0] if k != "GROUP_M")
        return f"{kw}w{c[1]}s{c[2]}"
    for r in rows:
        rec = r["best_us"] / r["rec_us"] if r["rec_us"] else None
        au = r["best_us"] / r["author_us"] if r["author_us"] else None
        if rec:
            rr.append(rec)
        if au:
            ar.append(au)
        seeds.append(r["seeded_within_5pct"] or 99)
        shape = ",".join(f"{k}={v}" for k, v in r["shape"].items())
        lines.append(f"| {r['kernel']} | {shape} | {r['best_us']:.1f} | {lab(r['best'])} | {lab(r['rec'])} | "
                     f"{rec:.3f} | {au:.3f} | {r['seeded_within_5pct'] or '>5'} |" if rec and au else
                     f"| {r['kernel']} | {shape} | {r['best_us']:.1f} | {lab(r['best'])} | {r.get('rec_error')} | — | — | — |")
    g = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
    seeds.sort()
    lines += ["", f"Geomean rec/best **{g(rr):.3f}** (worst {min(rr):.3f}); author/best **{g(ar):.3f}** "
              f"(worst {min(ar):.3f}); rec vs author **{g(rr) / g(ar):.3f}×**; seeded search: median "
              f"{seeds[len(seeds) // 2]} config(s) to get within 5% of the best ({len(rows)} kernel×shape pairs)."]
    out = out or ROOT / "benchmarks" / "gpu" / "h200_configs.md"
    # the hand-written notes on the runs (below NOTES_MARK) survive a regenerated table
    old = out.read_text() if out.exists() else ""
    notes = old[old.index(NOTES_MARK):] if NOTES_MARK in old else NOTES_MARK + "\n"
    out.write_text("\n".join(lines) + "\n\n" + notes)
    print("\n".join(lines))
