"""The report of benchmarks/public_accuracy.py: coverage per package and accuracy.py's metrics per package
and target, the largest misses, failed compiles with Triton's error class, skipped kernels and why."""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from benchmarks import accuracy


# -- report -------------------------------------------------------------------------------------------
def error_class(message: str) -> str:
    if message.startswith("timed out"):   # the watchdog's own messages (worker killed / not tried)
        return "CompileTimeout"
    return message.split(":", 1)[0].strip() or "unknown"


def coverage(results: list[Any], found: dict[str, int]) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for project, n in found.items():
        mine = [r for r in results if r.cand.project == project]
        compiled = [r for r in mine if any(rec.get("error") is None for rec in r.records)]
        failed = [r for r in mine if r.records and not any(rec.get("error") is None for rec in r.records)]
        errors = Counter(error_class(rec["error"]) for r in mine for rec in r.records if rec.get("error"))
        skips = Counter((r.skip or "").split(":")[0] for r in mine if r.skip)
        table[project] = {
            "found": n, "sampled": len(mine), "spec": sum(r.skip is None for r in mine),
            "compiled": len(compiled), "failed": len(failed),
            "records": sum(len(r.records) for r in mine),
            "records_failed": sum(1 for r in mine for rec in r.records if rec.get("error")),
            "pairs": sum(len(r.pairs) for r in mine), "error_classes": dict(errors), "skipped": dict(skips)}
    return table


def render(results: list[Any], found: dict[str, int]) -> str:
    cols = ["pairs", "smem_exact", "smem_within_2pct", "oor_precision", "oor_recall", "regs_median_abs_err",
            "regs_within_20pct", "spill_precision", "spill_recall", "spill_f1", "regs_static_no_anchor",
            "regs_anchored", "regs_anchored_within_20pct"]
    out = ["coverage: kernels found / sampled / with a derived spec / compiled (>= 1 config) / failed (all "
           "configs) / skipped; compile records (failed)"]
    for project, c in coverage(results, found).items():
        out.append(f"  {project:13} {c['found']:4d} / {c['sampled']:3d} / {c['spec']:3d} / {c['compiled']:3d} / "
                   f"{c['failed']:3d} / {sum(c['skipped'].values()):3d};  {c['records']} ({c['records_failed']})")
        if c["error_classes"]:
            out.append("      errors: " + ", ".join(f"{k} {v}" for k, v in sorted(c["error_classes"].items())))
        if c["skipped"]:
            out.append("      skipped: " + ", ".join(f"{k} {v}" for k, v in sorted(c["skipped"].items())))
    groups: dict[str, list[tuple[dict[str, Any], Any]]] = defaultdict(list)
    for r in results:
        groups[r.cand.project] += r.pairs
    groups["all"] = [p for r in results for p in r.pairs]
    out.append("\npackage        target  " + "  ".join(f"{c[:10]:>10}" for c in cols))
    for project, pairs in groups.items():
        if not pairs:
            continue
        for target, row in accuracy.metrics(pairs).items():
            out.append(f"{project:14} {target:<7} " + "  ".join(
                f"{int(row[c]):>10}" if c == "pairs" else f"{row[c]:>10.3f}" for c in cols))
    pairs = groups["all"]
    worst = sorted(((abs(e.registers.allocated - r["regs"]) / r["regs"], r, e) for r, e in pairs
                    if r.get("regs") and r["shared"] <= e.target.smem_per_cta_optin), key=lambda t: -t[0])[:12]
    out.append("\nlargest register misses:")
    out += [f"  {err:6.0%}  {e.target.key} {r['file']}::{r['kernel']} {r['config']} {r['constexprs']}: est "
            f"{e.registers.allocated} (demand {e.registers.demand}), ptxas {r['regs']} spill {r['spill_store']}"
            for err, r, e in worst]
    smem = sorted(((abs(e.smem.total - r["shared"]), r, e) for r, e in pairs if e.smem.total != r["shared"]),
                  key=lambda t: -t[0])
    out.append(f"\nshared-memory misses: {len(smem)} of {len(pairs)}")
    out += [f"  {e.target.key} {r['file']}::{r['kernel']} {r['config']}: est {e.smem.total:,}, Triton {r['shared']:,}"
            for _, r, e in smem[:15]]
    failing = [(r, next(rec for rec in r.records if rec.get("error"))) for r in results
               if any(rec.get("error") for rec in r.records)]
    out.append(f"\nkernels with failed compiles ({len(failing)}), first error each:")
    out += [f"  {r.cand.label}::{r.cand.qualname}: {rec['error'][:200]}" for r, rec in failing[:30]]
    skipped = [r for r in results if r.skip]
    out.append(f"\nskipped kernels ({len(skipped)}):")
    out += [f"  {r.cand.label}::{r.cand.qualname}: {r.skip}" for r in skipped[:30]]
    return "\n".join(out)
