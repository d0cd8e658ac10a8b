"""Estimator accuracy against recorded Triton/ptxas truth (benchmarks/truth/*.json, record_truth.py).

    python benchmarks/accuracy.py [benchmarks/truth/triton-3.9.json ...]   (several files: records pooled)

Prints, per target: shared-memory exact-match and within-2% rates, OutOfResources precision/recall,
register median absolute % error and share within 20%, spill precision/recall/F1, and static vs anchored
registers (kernlint/calibrate/anchor.py: one compiled record per (kernel, args, target) corrects the
estimates of the others). Run from the repo root.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CAP_TO_TARGET = {80: "a100", 90: "h100", 100: "b200"}
LAUNCH = ("num_warps", "num_stages", "maxnreg")


def estimate_records(records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Any]]:
    """Pair every compiled truth record with kernlint's estimate for the same kernel, config and target."""
    return [(r, e) for r, e, _ in estimate_records_with_ir(records)]


def estimate_records_with_ir(records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Any, Any]]:
    """`estimate_records` with each estimate's kernel graph, so the pair can be estimated again with other
    settings (benchmarks/ablation.py: `kernlint.analysis.estimate.estimate(ir, e.config, e.target, disabled)`)."""
    from kernlint.pipeline.api import Settings, lint_paths

    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if r.get("error") is None and r["cap"] in CAP_TO_TARGET:
            groups[(r["file"], r["kernel"], json.dumps(r["args"], sort_keys=True))].append(r)
    cwd = os.getcwd()
    os.chdir(ROOT)
    out: list[tuple[dict[str, Any], Any, Any]] = []
    try:
        for (file, kernel, args_json), recs in sorted(groups.items()):
            args = {k: str(v) for k, v in json.loads(args_json).items()}
            configs = []
            for r in recs:
                cfg = {**r.get("constexprs", {}), **r["config"]}
                if cfg not in configs:
                    configs.append(cfg)
            targets = tuple(sorted({CAP_TO_TARGET[r["cap"]] for r in recs}))
            # lint the file with its package so cross-file helpers resolve
            paths = sorted({file, *(str(p.relative_to(ROOT)) for p in (ROOT / Path(file).parent).glob("*.py"))})
            result = lint_paths(paths, Settings(targets=targets, cli_configs=tuple(configs), arg_types=args))
            analyses = [k for f in result.files if f.path == file for k in f.kernels if k.jit.qualname == kernel]
            if not analyses:
                continue
            by_key = {}
            for e in analyses[0].estimates:
                if e.config.origin == "cli":
                    by_key[(e.target.key, e.config.num_warps, e.config.num_stages,
                            tuple(sorted((k, v) for k, v in e.config.constexprs.items())))] = e
            for r in recs:
                cfg = {**r.get("constexprs", {}), **r["config"]}
                cx = {k: v for k, v in cfg.items() if k not in LAUNCH}
                key = (CAP_TO_TARGET[r["cap"]], cfg.get("num_warps", 4), cfg.get("num_stages", 3),
                       tuple(sorted(cx.items())))
                e = by_key.get(key)
                if e is None:  # constexpr defaults not in the record: match on the subset
                    e = next((v for k, v in by_key.items() if k[:3] == key[:3]
                              and all(dict(k[3]).get(n) == val for n, val in cx.items())), None)
                if e is not None and e.estimated:
                    out.append((r, e, analyses[0].ir))
    finally:
        os.chdir(cwd)
    return out


def anchored_errors(pairs: list[tuple[dict[str, Any], Any]]) -> dict[str, tuple[list[float], list[float]]]:
    """Per target: (static, anchored) register abs % errors on every record except the anchor of its group.

    The anchor is the group's first record that compiled, fits in shared memory and did not spill (what
    `kernlint calibrate --anchor` compiles first); groups are (file, kernel, args, target) in record order.
    Only records that fit in shared memory are scored, as in the static register column."""
    from kernlint.calibrate.anchor import Measured, Static, fit, pick_anchor

    groups: dict[tuple[str, str, str, int], list[tuple[dict[str, Any], Any]]] = defaultdict(list)
    for r, e in pairs:
        groups[(r["file"], r["kernel"], json.dumps(r["args"], sort_keys=True), r["cap"])].append((r, e))
    out: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for recs in groups.values():
        cands = [(Static.from_estimate(e), Measured.from_truth(r)) for r, e in recs]
        i = pick_anchor(cands)
        if i is None:
            continue
        static, truth = cands[i]
        assert static is not None and truth is not None
        anchor = fit(static, truth)
        for j, ((r, e), (s, _)) in enumerate(zip(recs, cands)):
            if j == i or s is None or not r.get("regs") or r["shared"] > e.target.smem_per_cta_optin:
                continue
            st, an = out[e.target.key]
            st.append(abs(s.allocated - r["regs"]) / r["regs"])
            an.append(abs(anchor.correct(s).regs - r["regs"]) / r["regs"])
    return dict(out)


def metrics(pairs: list[tuple[dict[str, Any], Any]]) -> dict[str, dict[str, float]]:
    from kernlint.analysis.spill_band import BORDERLINE_PRESSURE
    by_target: dict[str, list[tuple[dict[str, Any], Any]]] = defaultdict(list)
    for r, e in pairs:
        by_target[e.target.key].append((r, e))
    table: dict[str, dict[str, float]] = {}
    anchored = anchored_errors(pairs)
    for target, rows in sorted(by_target.items()):
        limit = rows[0][1].target.smem_per_cta_optin
        smem_exact = sum(e.smem.total == r["shared"] for r, e in rows) / len(rows)
        smem_2pct = sum(abs(e.smem.total - r["shared"]) <= 0.02 * max(r["shared"], 1) for r, e in rows) / len(rows)
        oor_true = [r["shared"] > limit for r, _ in rows]
        oor_pred = [e.smem.total > limit for _, e in rows]
        tp = sum(a and b for a, b in zip(oor_true, oor_pred))
        oor_recall = tp / sum(oor_true) if any(oor_true) else 1.0
        oor_precision = tp / sum(oor_pred) if any(oor_pred) else 1.0
        fits = [(r, e) for r, e in rows if r["shared"] <= limit]
        errors = [abs(e.registers.allocated - r["regs"]) / r["regs"] for r, e in fits if r.get("regs")]
        # where ptxas spilled, its register count is the cap it chose, not the demand (it reports as few as
        # 32 registers next to kilobytes of spills): those records are scored by the spill columns
        calm = [abs(e.registers.allocated - r["regs"]) / r["regs"] for r, e in fits
                if r.get("regs") and not (r["spill_store"] or 0)]
        spill_true = [(r["spill_store"] or 0) > 0 for r, _ in fits]
        # how often ptxas spilled just over the budget vs further over (rules/register_spill_risk.py quotes it)
        near = [(r["spill_store"] or 0) > 0 for r, e in fits
                if e.registers.budget < e.registers.demand <= BORDERLINE_PRESSURE * e.registers.budget]
        far = [(r["spill_store"] or 0) > 0 for r, e in fits
               if e.registers.demand > BORDERLINE_PRESSURE * e.registers.budget]
        spill_pred = [e.registers.demand > e.registers.budget for _, e in fits]
        stp = sum(a and b for a, b in zip(spill_true, spill_pred))
        sp = stp / sum(spill_pred) if any(spill_pred) else 1.0
        sr = stp / sum(spill_true) if any(spill_true) else 1.0
        table[target] = {
            "pairs": len(rows), "smem_exact": smem_exact, "smem_within_2pct": smem_2pct,
            "oor_precision": oor_precision, "oor_recall": oor_recall,
            "regs_median_abs_err": statistics.median(errors) if errors else 0.0,
            "regs_within_20pct": sum(x <= 0.2 for x in errors) / len(errors) if errors else 1.0,
            "regs_median_no_spill": statistics.median(calm) if calm else 0.0,
            "spill_precision": sp, "spill_recall": sr, "spill_f1": 2 * sp * sr / (sp + sr) if sp + sr else 0.0,
            "spill_near_n": len(near), "spill_near_rate": sum(near) / len(near) if near else 0.0,
            "spill_far_n": len(far), "spill_far_rate": sum(far) / len(far) if far else 0.0,
        }
        st, an = anchored.get(target, ([], []))
        # static and anchored on the same records (the anchors themselves excluded), so they compare
        table[target]["regs_static_no_anchor"] = statistics.median(st) if st else 0.0
        table[target]["regs_anchored"] = statistics.median(an) if an else 0.0
        table[target]["regs_anchored_within_20pct"] = sum(x <= 0.2 for x in an) / len(an) if an else 1.0
    return table


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return 0
    paths = [Path(a) for a in argv] or [ROOT / "benchmarks" / "truth" / "triton-3.9.json"]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        print(f"accuracy.py: no such truth file: {', '.join(missing)}", file=sys.stderr)
        return 2
    docs = [json.loads(p.read_text()) for p in paths]  # several truth files: their records are pooled
    records = [r for d in docs for r in d["records"]]
    pairs = estimate_records(records)
    print(f"truth: {', '.join(p.name for p in paths)} (Triton "
          f"{', '.join(sorted({str(d.get('triton_version')) for d in docs}))}, {len(records)} records, "
          f"{len(pairs)} compared)")
    cols = ["pairs", "smem_exact", "smem_within_2pct", "oor_precision", "oor_recall", "regs_median_abs_err",
            "regs_within_20pct", "regs_median_no_spill", "spill_precision", "spill_recall", "spill_f1", "regs_static_no_anchor",
            "regs_anchored", "regs_anchored_within_20pct"]
    print("target  " + "  ".join(f"{c:>18}" for c in cols))
    table = metrics(pairs)
    for target, row in table.items():
        print(f"{target:<7} " + "  ".join(f"{row[c]:>18.3f}" if c != "pairs" else f"{int(row[c]):>18}" for c in cols))
    worst = sorted(((abs(e.registers.allocated - r["regs"]) / r["regs"], r, e) for r, e in pairs
                    if r.get("regs") and r["shared"] <= e.target.smem_per_cta_optin), key=lambda t: -t[0])[:10]
    print("\nlargest register misses:")
    for err, r, e in worst:
        print(f"  {err:6.0%}  {e.target.key} {r['kernel']} {r['config']}: est {e.registers.allocated}, ptxas {r['regs']}")
    print("\nptxas spilled, by estimated demand over the budget (rules/register_spill_risk.py quotes the first):")
    for target, row in table.items():
        print(f"  {target}: 1.0-1.2x {round(row['spill_near_rate'] * row['spill_near_n'])}/{row['spill_near_n']}, "
              f"over 1.2x {round(row['spill_far_rate'] * row['spill_far_n'])}/{row['spill_far_n']}")
    smem_miss = [(r, e) for r, e in pairs if e.smem.total != r["shared"]]
    print(f"\nshared-memory misses: {len(smem_miss)}")
    for r, e in smem_miss[:12]:
        print(f"  {e.target.key} {r['kernel']} {r['config']}: est {e.smem.total:,}, Triton {r['shared']:,}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main(sys.argv[1:]))
