"""Precision of kernlint's findings on real code: re-lint the corpus and score a labelled sample.

    python benchmarks/corpus.py                          # download and unpack the pinned packages once
    python benchmarks/finding_precision.py               # re-lint .corpus/src/*, score, print the tables
    python benchmarks/finding_precision.py --write       # ... and rewrite the committed summary
    python benchmarks/finding_precision.py --only fla_core --list KL303   # current findings of one rule

The labels (benchmarks/truth/finding_labels.jsonl) are findings kernlint reported on released packages,
each read (and, for resource findings, compiled where feasible) and labelled `right` (the problem is real
for some input a GPU can hold, or the config fails as stated) or `wrong`, with a one-line reason. A label
names the file relative to the unpacked archive, the line, the rule and a short hash of the flagged line's
text, so a label still finds its line when kernlint's own output changes. Scoring counts, per rule, the
labelled findings kernlint still reports at warning or error level: precision = right / (right + wrong)
among them. Labelled findings no longer reported are listed (a `right` one lost is a recall regression).

Warnings per kernel are warning- and error-level findings over kernels analysed, per package, with default
settings. Nothing from the corpus is imported or run: it is only read and linted.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / ".corpus" / "src"
LABELS = ROOT / "benchmarks" / "truth" / "finding_labels.jsonl"
SUMMARY = ROOT / "benchmarks" / "truth" / "finding_precision_summary.json"
TARGET_PRECISION = 0.90      # issue target: every warning/error rule
TARGET_PER_KERNEL = 0.10     # issue target: warnings per kernel on the development corpus


def line_hash(text: str) -> str:
    """Short hash of a source line, whitespace-insensitive: how a label re-finds its line."""
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Label:
    package: str        # the archive's directory name under .corpus/src
    file: str           # relative to that directory
    line: int
    rule: str
    hash: str
    label: str          # "right" | "wrong"
    reason: str
    config: str | None = None   # the finding's config label, for candidates of one comprehension on one line


def labels_digest(path: Path = LABELS) -> str:
    """sha256 of the labels file: the committed summary names the labels it scored."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_labels(path: Path = LABELS) -> list[Label]:
    out = []
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        if raw.strip():
            o = json.loads(raw)
            if o["label"] not in ("right", "wrong") or not o["reason"].strip():
                raise SystemExit(f"{path}:{n}: label must be right/wrong with a reason")
            out.append(Label(o["package"], o["file"], o["line"], o["rule"], o["hash"], o["label"], o["reason"],
                             o.get("config")))
    return out


@dataclass
class PackageRun:
    kernels: int
    skipped_vendor: int
    # (file relative to the package dir, line, code, severity, config label or None)
    findings: list[tuple[str, int, str, str, str | None]]


def lint_package(pkg_dir: Path) -> PackageRun:
    from kernlint.pipeline.runner import Options, run
    from kernlint.pipeline.settings import Resolver

    cwd = os.getcwd()
    os.chdir(pkg_dir)   # the package root, as a user would run `kernlint check .`
    try:
        result = run(["."], Resolver(), Options(jobs=1, cache=False))
    finally:
        os.chdir(cwd)
    return PackageRun(result.kernel_count, sum(getattr(f, "vendor_skipped", 0) for f in result.files),
                      [(os.path.normpath(d.span.path), d.span.start.line, d.code, d.severity.value, d.config)
                       for d in result.diagnostics])


def relocate(label: Label, lines: list[str]) -> int | None:
    """The line the label's hash is on now: the labelled number when it still matches, else the nearest."""
    if 0 < label.line <= len(lines) and line_hash(lines[label.line - 1]) == label.hash:
        return label.line
    hits = [i + 1 for i, t in enumerate(lines) if line_hash(t) == label.hash]
    return min(hits, key=lambda n: abs(n - label.line)) if hits else None


def score(labels: list[Label], runs: dict[str, PackageRun]) -> dict[str, object]:
    per_rule: dict[str, Counter[str]] = defaultdict(Counter)
    gone: list[str] = []
    for lab in labels:
        run_ = runs.get(lab.package)
        if run_ is None:
            continue
        path = CORPUS / lab.package / lab.file
        line = relocate(lab, path.read_text(errors="replace").splitlines()) if path.exists() else None
        reported = line is not None and any(
            f == os.path.normpath(lab.file) and n == line and c == lab.rule and s != "info"
            and (lab.config is None or lab.config == cfg)
            for f, n, c, s, cfg in run_.findings)
        c = per_rule[lab.rule]
        c["labels"] += 1
        c[f"labelled_{lab.label}"] += 1
        if reported:
            c[lab.label] += 1
        else:
            gone.append(f"{lab.rule} {lab.label}: {lab.package}/{lab.file}:{lab.line} ({lab.reason})")
    table = {rule: {"labels": c["labels"], "labelled_right": c["labelled_right"],
                    "labelled_wrong": c["labelled_wrong"], "reported_right": c["right"],
                    "reported_wrong": c["wrong"],
                    "precision": round(c["right"] / (c["right"] + c["wrong"]), 3) if c["right"] + c["wrong"] else None}
             for rule, c in sorted(per_rule.items())}
    packages = {}
    for name, r in sorted(runs.items()):
        warn = Counter(c for _, _, c, s, _ in r.findings if s != "info")
        packages[name] = {"kernels": r.kernels, "vendor_skipped_kernels": r.skipped_vendor,
                          "warnings": sum(warn.values()), "by_rule": dict(sorted(warn.items())),
                          "info_by_rule": dict(sorted(Counter(c for _, _, c, s, _ in r.findings
                                                              if s == "info").items())),
                          "per_kernel": round(sum(warn.values()) / r.kernels, 4) if r.kernels else 0.0}
    kernels = sum(p["kernels"] for p in packages.values())
    warnings = sum(p["warnings"] for p in packages.values())
    return {"labels_sha256": labels_digest(), "targets": {"precision": TARGET_PRECISION,
                                                           "per_kernel": TARGET_PER_KERNEL},
            "rules": table, "packages": packages, "no_longer_reported": gone,
            "corpus": {"kernels": kernels, "warnings": warnings,
                       "per_kernel": round(warnings / kernels, 4) if kernels else 0.0,
                       "by_rule": dict(sorted(sum((Counter(p["by_rule"]) for p in packages.values()), Counter()).items()))}}


def render(summary: dict[str, object]) -> str:
    out = ["rule    labels  right/wrong  reported right/wrong  precision"]
    for rule, r in summary["rules"].items():  # type: ignore[union-attr]
        p = "-" if r["precision"] is None else f"{r['precision']:.0%}"
        out.append(f"{rule:<7} {r['labels']:>6}  {r['labelled_right']:>5}/{r['labelled_wrong']:<5} "
                   f"{r['reported_right']:>9}/{r['reported_wrong']:<10} {p:>9}")
    out.append("")
    out.append("package                                           kernels  skipped(vendor)  warnings  per kernel")
    for name, p in summary["packages"].items():  # type: ignore[union-attr]
        out.append(f"{name:<50} {p['kernels']:>7}  {p['vendor_skipped_kernels']:>15}  {p['warnings']:>8}  "
                   f"{p['per_kernel']:>10.3f}  {p['by_rule']}")
    c = summary["corpus"]
    out.append(f"corpus: {c['kernels']} kernels, {c['warnings']} warnings, {c['per_kernel']:.3f} per kernel; "  # type: ignore[index]
               f"{c['by_rule']}")  # type: ignore[index]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], help="package directory name prefix(es) under .corpus/src")
    ap.add_argument("--dump", type=Path, help="write every current finding here, one JSON object a line (for labelling)")
    ap.add_argument("--write", action="store_true", help=f"rewrite {SUMMARY.relative_to(ROOT)}")
    ap.add_argument("--json", type=Path, help="write the summary here too")
    ap.add_argument("--save-runs", type=Path, help="write each package's kernels and findings here")
    ap.add_argument("--runs", type=Path, action="append", default=[],
                    help="score the runs saved by --save-runs instead of linting again (after labelling); "
                         "repeatable, a later file's packages replace an earlier's")
    args = ap.parse_args()
    if not CORPUS.is_dir():
        print("no corpus: run `python benchmarks/corpus.py` first", file=sys.stderr)
        return 2
    dirs = sorted(d for d in CORPUS.iterdir() if d.is_dir() and (not args.only or any(d.name.startswith(o) for o in args.only)))
    runs = {}
    for saved in args.runs:
        runs.update({name: PackageRun(r["kernels"], r["skipped_vendor"],
                                      [(*f[:4], f[4] if len(f) > 4 else None) for f in r["findings"]])
                     for name, r in json.loads(saved.read_text()).items()})
        dirs = []
    dump = args.dump.open("w") if args.dump else None
    for d in dirs:
        runs[d.name] = lint_package(d)
        for f, n, c, s, cfg in runs[d.name].findings if dump else ():
            lines = (d / f).read_text(errors="replace").splitlines()
            text = lines[n - 1] if 0 < n <= len(lines) else ""
            dump.write(json.dumps({"package": d.name, "file": f, "line": n, "rule": c, "severity": s, "config": cfg,
                                   "hash": line_hash(text), "text": text.strip()[:160]}) + "\n")
            dump.flush()
    if args.save_runs:
        args.save_runs.write_text(json.dumps({n: {"kernels": r.kernels, "skipped_vendor": r.skipped_vendor,
                                                  "findings": r.findings} for n, r in runs.items()}))
    summary = score(load_labels(), runs)
    print(render(summary))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")
    if args.write:
        SUMMARY.write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
