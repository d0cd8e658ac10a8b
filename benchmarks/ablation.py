"""Ablation of the model's passes: each mechanism of the register and shared-memory models
(`kernlint.analysis.registers.REGISTER_PASSES`, `kernlint.analysis.smem.SMEM_PASSES`) disabled alone, and what
that does to the accuracy on recorded truth, per target.

    python benchmarks/ablation.py [--source NAME ...] [--markdown docs/ablation.md]
                                  [--json benchmarks/truth/ablation.json]

Sources (DEFAULT_SOURCES): `development` (benchmarks/truth/triton-3.9.json + suite-triton-3.9.json, the set the
model was built on), `neighbourhood` (neighbours-triton-3.9.json + neighbours-b-triton-3.9.json: configs
next to the development ones) and `probes` (probes-triton-3.9.json: the probe kernels of tests/truth/);
`--source corpus` scores the corpus-scale truth of benchmarks/corpus_truth.py (benchmarks/truth/corpus/).
A source is a function returning (truth record, estimate, kernel graph) triples, records in record_truth.py's format (`regs`, `spill_store`, `shared`, `tmem`, `cap`, ...); another
truth plugs in by adding one to `SOURCES`.

Every pair is estimated again with `estimate(ir, config, target, disabled=frozenset({pass}))` and scored with
benchmarks/accuracy.py's `metrics`. A pass's *gain* on a metric is the accuracy with it minus the accuracy
without it, in points (register median error: without minus with): positive means the pass pays. Essential
passes (the skeleton: tile costs, the live-set sweep, the peak over loops) are not ablated. Before ablating,
every pair is estimated again with nothing disabled and must equal the pipeline's estimate.
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":   # run as `python benchmarks/ablation.py`: the repository root, for `benchmarks.*`
    sys.path.insert(0, str(ROOT))

from benchmarks.accuracy import estimate_records_with_ir, metrics  # noqa: E402

from kernlint.analysis.passes import Pass  # noqa: E402

Triple = tuple[dict[str, Any], Any, Any]     # (truth record, KernelEstimate, KernelIR)

# per target: (metric, label, error-like: lower is better)
REGISTER_METRICS = (("regs_median_abs_err", "median err", True), ("regs_within_20pct", "≤ 20 %", False),
                    ("spill_f1", "spill F1", False))
SMEM_METRICS = (("smem_exact", "exact", False), ("smem_within_2pct", "≤ 2 %", False), ("tmem_exact", "TMEM exact", False))
TARGETS = ("a100", "h100", "b200")


def truth_files(*names: str) -> Callable[[], list[Triple]]:
    def pair() -> list[Triple]:
        records = [r for n in names for r in json.loads((ROOT / "benchmarks" / "truth" / n).read_text())["records"]]
        out: list[Triple] = estimate_records_with_ir(records)
        return out
    pair.__doc__ = " + ".join(names)
    return pair


def corpus_truth(*projects: str) -> Callable[[], list[Triple]]:
    """The corpus-scale truth of benchmarks/corpus_truth.py (benchmarks/truth/corpus/<project>.json.gz, all
    projects when none are named): its compiled records, files under the package root, paired like the
    others. A project whose package is not downloaded (.corpus/by-project/, benchmarks/corpus.py) is left out
    and said so."""
    def pair() -> list[Triple]:
        records = []
        for path in sorted((ROOT / "benchmarks" / "truth" / "corpus").glob("*.json.gz")):
            doc = json.loads(gzip.decompress(path.read_bytes()))
            if projects and doc["project"] not in projects:
                continue
            if not (ROOT / doc["root"]).is_dir():
                print(f"ablation.py: {doc['project']}: no package at {doc['root']}, left out", file=sys.stderr)
                continue
            records += [{**r, "file": f"{doc['root']}/{r['file']}", "error": None} for r in doc["records"]
                        if r["outcome"] == "compiled" and r.get("regs") is not None]
        out: list[Triple] = estimate_records_with_ir(records)
        return out
    pair.__doc__ = "benchmarks/truth/corpus/" + ("{" + ",".join(projects) + "}" if projects else "*") + ".json.gz"
    return pair


# The sets scored by default. The corpus-scale truth is opt-in (`--source corpus`): pairing lints each
# kernel's package directory once per kernel, minutes per package.
DEFAULT_SOURCES = ("development", "neighbourhood", "probes")
SOURCES: dict[str, Callable[[], list[Triple]]] = {
    "development": truth_files("triton-3.9.json", "suite-triton-3.9.json"),
    "neighbourhood": truth_files("neighbours-triton-3.9.json", "neighbours-b-triton-3.9.json"),
    "probes": truth_files("probes-triton-3.9.json"),
    "corpus": corpus_truth(),
}


def score(pairs: list[tuple[dict[str, Any], Any]]) -> dict[str, dict[str, float]]:
    """accuracy.metrics plus tensor-memory columns exact (targets with tensor memory)."""
    table: dict[str, dict[str, float]] = metrics(pairs)
    for target, row in table.items():
        tm = [(r, e) for r, e in pairs if e.target.key == target and e.target.tmem_columns and r.get("tmem") is not None]
        row["tmem_exact"] = sum(e.smem.tmem_columns == r["tmem"] for r, e in tm) / len(tm) if tm else float("nan")
    return table


def ablate(triples: list[Triple], names: list[str], log: Callable[[str], None]) -> dict[str, Any]:
    from kernlint.analysis.estimate import estimate
    from kernlint.analysis.registers import REGISTER_PASSES
    from kernlint.analysis.smem import SMEM_PASSES

    passes: tuple[Pass[Any], ...] = (*REGISTER_PASSES, *SMEM_PASSES)
    by_name = {p.name: p for p in passes}

    again = [estimate(ir, e.config, e.target) for _, e, ir in triples]
    differ = sum(a != e for a, (_, e, _) in zip(again, triples))
    if differ:
        raise SystemExit(f"ablation.py: {differ} estimates differ when estimated again with nothing disabled")
    pairs = [(r, e) for r, e, _ in triples]
    base = score(pairs)
    out: dict[str, Any] = {"pairs": len(pairs), "baseline": base, "passes": {}}
    for name in names:
        start = time.perf_counter()
        disabled = frozenset({name})
        applies = by_name[name].targets.applies   # elsewhere the pass does not run: the estimate stands
        redone = [(r, estimate(ir, e.config, e.target, disabled) if applies(e.target) else e) for r, e, ir in triples]
        changed: dict[str, int] = {}
        for (r, e), (_, x) in zip(pairs, redone):
            if (x.registers, x.smem) != (e.registers, e.smem):
                changed[e.target.key] = changed.get(e.target.key, 0) + 1
        table = score([(r, x) for r, x in redone if x.estimated])
        out["passes"][name] = {"changed": changed, "metrics": table}
        log(f"  {name}: {sum(changed.values())} estimates changed ({time.perf_counter() - start:.1f} s)")
    return out


def gain(base: float, without: float, error_like: bool) -> float:
    """What the pass earns, in points (see the module docstring)."""
    if base != base or without != without:   # NaN: no records for the metric
        return 0.0
    return 100 * ((without - base) if error_like else (base - without))


def _cell(g: float) -> str:
    return "0" if abs(g) < 0.05 else f"{g:+.1f}"


def markdown(doc: dict[str, Any]) -> str:
    """The table of docs/ablation.md, from the compact results (`compact`, benchmarks/truth/ablation.json)."""
    from kernlint.analysis.registers import REGISTER_PASSES
    from kernlint.analysis.smem import SMEM_PASSES

    lines = ["# Ablation of the model's passes", "",
             "Generated by `python benchmarks/ablation.py --markdown docs/ablation.md --json "
             "benchmarks/truth/ablation.json`",
             "— do not edit. Each mechanism (one pass of `REGISTER_PASSES` in kernlint/analysis/registers.py or",
             "`SMEM_PASSES` in kernlint/analysis/smem.py) is disabled alone and the recorded truth is scored again.",
             "A cell is the pass's **gain** in points: accuracy with the pass minus accuracy without it (for the",
             "register median error: the error without it minus the error with it), so a positive number means the",
             "pass pays, a negative one that the set is scored better without it; 0 means it moved no metric by",
             "0.05 points. *changed* counts the estimates the pass moves at all (all targets). Essential passes",
             "(the skeleton the mechanisms adjust) are not ablated. On a small set one config moves a share by",
             "100 / its configs per target points (probes: 15 per target, 6.7 points). The declarations",
             "(mechanism, targets, constants and their provenance) follow the tables.", ""]
    for source, res in doc["sources"].items():
        base = res["baseline"]
        targets = [t for t in TARGETS if t in base]
        lines += [f"## {source}: {res['files']}", "",
                  f"{res['pairs']} compiled configs paired with an estimate. Baseline (all passes):", "",
                  "| target | reg median err | ≤ 20 % | spill F1 | smem exact | ≤ 2 % | TMEM exact |",
                  "|---|---|---|---|---|---|---|"]
        for t in targets:
            b = base[t]
            tm = "–" if b["tmem_exact"] is None else f"{100 * b['tmem_exact']:.1f} %"
            lines.append(f"| {t} | {100 * b['regs_median_abs_err']:.1f} % | {100 * b['regs_within_20pct']:.1f} % | "
                         f"{b['spill_f1']:.3f} | {100 * b['smem_exact']:.1f} % | {100 * b['smem_within_2pct']:.1f} % "
                         f"| {tm} |")
        for title, passes, mets in (("Register passes", REGISTER_PASSES, REGISTER_METRICS),
                                    ("Shared-memory passes", SMEM_PASSES, SMEM_METRICS)):
            cols = [(t, m, label) for t in targets for m, label, _ in mets
                    if base[t][m] is not None]   # None: no such memory on the target
            lines += ["", f"### {title}", "",
                      "| pass | targets | changed | " + " | ".join(f"{t} {label}" for t, _, label in cols)
                      + " |", "|---|---|---|" + "---|" * len(cols)]
            for p in passes:
                row = res["passes"].get(p.name)
                if p.essential or row is None:   # not ablated (--only)
                    continue
                cells = [_cell(row["gain"].get(t, {}).get(m, 0.0)) for t, m, _ in cols]
                lines.append(f"| {p.name} | {p.targets.describe()} | {sum(row['changed'].values())} | "
                             + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## Declarations", "",
              "| model | # | pass | mechanism | module | targets | constants |", "|---|---|---|---|---|---|---|"]
    models: tuple[tuple[str, tuple[Pass[Any], ...]], ...] = (("registers", REGISTER_PASSES),
                                                              ("shared memory", SMEM_PASSES))
    for model, declared in models:
        for i, p in enumerate(declared, 1):
            consts = "; ".join(f"`{c.name}` = {c.value} {c.unit} ({c.provenance})" for c in p.constants)
            name = f"{p.name} (essential)" if p.essential else p.name
            lines.append(f"| {model} | {i} | {name} | {p.mechanism} | `{p.module}.py` | {p.targets.describe()} | "
                         f"{consts} |")
    lines.append("")
    return "\n".join(lines)


def compact(results: dict[str, Any]) -> dict[str, Any]:
    """The JSON kept in the repository: baselines and each pass's gains, rounded."""
    def r4(x: float) -> float | None:
        return None if x != x else round(x, 4)

    keep = [m for m, _, _ in REGISTER_METRICS + SMEM_METRICS]
    errs = {m for m, _, err in REGISTER_METRICS + SMEM_METRICS if err}
    out: dict[str, Any] = {"generated_by": "benchmarks/ablation.py", "gain": "accuracy with the pass minus "
                           "without it, in points (median error: without minus with); 0 left out", "sources": {}}
    for source, res in results.items():
        out["sources"][source] = {
            "files": res["files"], "pairs": res["pairs"],
            "baseline": {t: {m: r4(row[m]) for m in keep} for t, row in res["baseline"].items()},
            "passes": {name: {"changed": row["changed"],
                              "gain": {t: {m: round(gain(res["baseline"][t][m], row["metrics"].get(t, {}).get(m, float("nan")),
                                                         m in errs), 2) for m in keep}
                                       for t in res["baseline"]}}
                       for name, row in res["passes"].items()}}
    return sparse(out)


def sparse(doc: dict[str, Any]) -> dict[str, Any]:
    """Leave out the gains that are 0 (a missing target or metric reads as no gain)."""
    for res in doc["sources"].values():
        for row in res["passes"].values():
            row["gain"] = {t: kept for t, g in row["gain"].items() if (kept := {m: v for m, v in g.items() if v})}
    return doc


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", action="append", choices=sorted(SOURCES),
                    help=f"truth to score (default: {', '.join(DEFAULT_SOURCES)})")
    ap.add_argument("--markdown", type=Path, help="write the table here (docs/ablation.md)")
    ap.add_argument("--json", type=Path, help="write the compact results here (benchmarks/truth/ablation.json)")
    ap.add_argument("--only", action="append", help="ablate only these passes (default: every mechanism)")
    ap.add_argument("--from-json", type=Path, help="render the table from results written by --json (no estimates)")
    ap.add_argument("--corpus-project", action="append", help="--source corpus: only these projects")
    ap.add_argument("--update", action="store_true",
                    help="keep the sources already in the --json file that this run does not score")
    args = ap.parse_args(argv)
    if args.corpus_project:
        SOURCES["corpus"] = corpus_truth(*args.corpus_project)
    if args.from_json:
        text = markdown(json.loads(args.from_json.read_text()))
        if args.markdown:
            args.markdown.write_text(text)
        else:
            print(text)
        return 0
    from kernlint.analysis.registers import REGISTER_PASSES
    from kernlint.analysis.smem import SMEM_PASSES

    passes: tuple[Pass[Any], ...] = (*REGISTER_PASSES, *SMEM_PASSES)
    names = [p.name for p in passes if not p.essential]
    if args.only:
        unknown = sorted(set(args.only) - set(names))
        if unknown:
            print(f"ablation.py: not a mechanism pass: {', '.join(unknown)}", file=sys.stderr)
            return 2
        names = [n for n in names if n in args.only]
    results: dict[str, Any] = {}
    for source in args.source or DEFAULT_SOURCES:
        start = time.perf_counter()
        triples = SOURCES[source]()
        print(f"{source}: {len(triples)} pairs ({time.perf_counter() - start:.1f} s)", file=sys.stderr)
        res = ablate(triples, names, lambda s: print(s, file=sys.stderr))
        res["files"] = SOURCES[source].__doc__ or source
        results[source] = res
    doc = compact(results)
    if args.update and args.json and args.json.is_file():
        kept = json.loads(args.json.read_text())["sources"]
        doc["sources"] = {**{k: v for k, v in kept.items() if k not in doc["sources"]}, **doc["sources"]}
    text = markdown(doc)
    if args.markdown:
        args.markdown.write_text(text)
    else:
        print(text)
    if args.json:
        args.json.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
