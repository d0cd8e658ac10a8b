"""`kernlint calibrate --anchor`: compile one config per target, correct the static estimates of the rest
of the sweep from it (anchor.py), and — with --verify — compile the rest too and report static vs anchored.

The anchor is the first config (in the order the plain table shows them) that compiles, fits in shared
memory and does not spill, trying at most ``MAX_TRIES`` per target; ``--anchor-config`` names it instead.
"""
from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kernlint.calibrate import session
from kernlint.calibrate.anchor import Anchor, Corrected, Measured, Static, fit
from kernlint.calibrate.session import Calibration, Row
from kernlint.hardware.specs import GpuSpec

MAX_TRIES = 4  # a sweep whose first four configs all fail or spill is better anchored by hand


@dataclass
class TargetAnchor:
    target: GpuSpec
    row: Row | None                  # the compiled anchor row (None: nothing usable compiled)
    anchor: Anchor | None
    tried: int
    note: str = ""


def _matches(row: Row, want: dict[str, Any]) -> bool:
    p = row.point
    launch = {"num_warps": p.num_warps, "num_stages": p.num_stages, "maxnreg": p.maxnreg}
    return all((launch[k] if k in launch else p.constexprs.get(k)) == v for k, v in want.items())


def run(kernel_spec: str, targets: tuple[str, ...], configs: tuple[dict[str, Any], ...], sweep: bool,
        arg_specs: dict[str, str], jobs: int, python: str | None, cache_dir: Path | None, max_configs: int,
        timeout_s: int, anchor_config: dict[str, Any] | None, verify: bool,
        progress: Callable[[int, int], None] | None = None) -> tuple[Calibration, list[TargetAnchor]]:
    if anchor_config:  # make sure the named config is a row even when no other source lists it
        configs = (anchor_config, *configs)
    cal, work = session.prepare(kernel_spec, targets, configs, sweep, arg_specs, max_configs)
    cal.rows = [row for row, _ in work]
    by_target: dict[str, list[tuple[Row, dict[str, Any] | None]]] = {}
    for row, task in work:
        by_target.setdefault(row.target.key, []).append((row, task))
    queues: dict[str, list[tuple[Row, dict[str, Any]]]] = {}
    for key, items in by_target.items():
        cands = [(r, t) for r, t in items if t is not None]
        if anchor_config:
            cands = [(r, t) for r, t in cands if _matches(r, anchor_config)][:1]
        queues[key] = cands[:MAX_TRIES]
    result: dict[str, TargetAnchor] = {k: TargetAnchor(items[0][0].target, None, None, 0)
                                       for k, items in by_target.items()}
    fallback: dict[str, Row] = {}
    # One batch per round (all targets together) so a pool start is shared; most sweeps stop after one.
    for _ in range(MAX_TRIES):
        batch = [(k, q.pop(0)) for k, q in queues.items() if q and result[k].anchor is None]
        if not batch:
            break
        session.compile_work(cal, [item for _, item in batch], jobs, python, cache_dir, timeout_s, progress)
        for k, (row, _) in batch:
            ta = result[k]
            ta.tried += 1
            static, truth = (Static.from_estimate(row.estimate) if row.estimate else None,
                             Measured.from_truth(row.truth) if row.truth else None)
            if static is None or truth is None:
                continue
            candidate = fit(static, truth)
            if candidate.usable_for_registers:
                ta.row, ta.anchor = row, candidate
            elif not candidate.oor:
                fallback.setdefault(k, row)
    for k, ta in result.items():
        if ta.anchor is None and k in fallback:  # spilled: its shared memory still corrects, registers do not
            row = fallback[k]
            assert row.estimate is not None and row.truth is not None
            s, t = Static.from_estimate(row.estimate), Measured.from_truth(row.truth)
            if s is not None and t is not None:
                ta.row, ta.anchor = row, fit(s, t)
                ta.note = "the anchor spilled, so its registers say nothing: only shared memory corrected"
        elif ta.anchor is None:
            ta.note = (f"no config compiled cleanly in {ta.tried} tries"
                       + ("" if anchor_config else "; name one with --anchor-config"))
    if verify:
        rest = [(r, t) for r, t in work if t is not None and r.truth is None and r.error is None]
        session.compile_work(cal, rest, jobs, python, cache_dir, timeout_s, progress)
    return cal, list(result.values())


def corrected_rows(cal: Calibration, anchors: list[TargetAnchor]) -> list[tuple[Row, Static | None,
                                                                              Corrected | None, bool]]:
    """(row, static, anchored, is_anchor) for every row."""
    by_target = {a.target.key: a for a in anchors}
    out: list[tuple[Row, Static | None, Corrected | None, bool]] = []
    for row in cal.rows:
        ta = by_target.get(row.target.key)
        static = Static.from_estimate(row.estimate) if row.estimate else None
        corr = ta.anchor.correct(static) if ta and ta.anchor and static else None
        out.append((row, static, corr, bool(ta and row is ta.row)))
    return out


def _fits(row: Row) -> bool:
    return bool(row.truth and row.truth.get("regs") and not row.truth_oor)


def errors(cal: Calibration, anchors: list[TargetAnchor], target: GpuSpec) -> tuple[list[float], list[float]]:
    """Static and anchored register abs % errors on the compiled rows of ``target`` other than the anchor."""
    st: list[float] = []
    an: list[float] = []
    for row, s, c, is_anchor in corrected_rows(cal, anchors):
        if row.target is not target or is_anchor or s is None or c is None or not _fits(row):
            continue
        assert row.truth is not None
        t = row.truth["regs"]
        st.append(abs(s.allocated - t) / t)
        an.append(abs(c.regs - t) / t)
    return st, an


def render(cal: Calibration, anchors: list[TargetAnchor], console: Console) -> None:
    env = cal.env
    console.print(f"[bold]{cal.path}::{cal.kernel}[/bold]  static → anchored (Triton {env.get('triton_version')}, "
                  f"ptxas {env.get('ptxas_version')}); one compile per target, the rest are not compiled"
                  + (" (--verify: compiled to check)" if any(r.truth and not _is_anchor(r, anchors)
                                                             for r in cal.rows) else ""))
    rows = corrected_rows(cal, anchors)
    for ta in anchors:
        table = Table(title=f"{ta.target.name} ({ta.target.arch})", title_justify="left")
        for col in ("config", "regs static → anchored", "ptxas", "spill", "shared B static → anchored",
                    "Triton", "OutOfRes"):
            table.add_column(col, justify="left" if col == "config" else "right", no_wrap=col != "config")
        for row, s, c, is_anchor in rows:
            if row.target is not ta.target:
                continue
            label = Text(row.config_label + ("  ← anchor" if is_anchor else ""), style="bold" if is_anchor else "")
            if s is None:
                table.add_row(label, Text(row.error or "not estimated", style="yellow"), *[""] * 5)
                continue
            t = row.truth or {}
            regs = f"{s.allocated} → {c.regs}" if c else f"{s.allocated}"
            smem = f"{s.smem:,} → {c.smem:,}" if c else f"{s.smem:,}"
            spill = ("yes" if c.spills else "no") if c else ("yes" if s.demand > s.budget else "no")
            oor = (c.smem_over if c else bool(s.smem_limit and s.smem > s.smem_limit))
            truth_regs = Text(str(t["regs"]) if t.get("regs") is not None else ("-" if not row.error else "failed"),
                              style="bold" if is_anchor else "")
            table.add_row(label, regs, truth_regs, spill, smem,
                          f"{t['shared']:,}" if t.get("shared") is not None else "-", "yes" if oor else "no")
        console.print(table)
        if ta.anchor is not None and ta.row is not None:
            a = ta.anchor
            console.print(f"  anchor {ta.row.config_label}: ptxas {a.truth.regs} registers vs demand "
                          f"{a.static.demand} → ratio {a.reg_ratio:.3f} (full at num_warps={a.static.num_warps}, "
                          f"damped with the num_warps distance); shared memory offset {a.smem_offset:+,} B "
                          f"(added at num_stages={a.static.num_stages}, scaled otherwise)")
        if ta.note:
            console.print(f"  [yellow]{ta.note}[/yellow]")
        st, an = errors(cal, anchors, ta.target)
        if st:
            console.print(f"  registers median abs error on {len(st)} other compiled configs: static "
                          f"{statistics.median(st):.1%}, anchored {statistics.median(an):.1%}; within 20 %: "
                          f"{sum(x <= .2 for x in st)}/{len(st)} → {sum(x <= .2 for x in an)}/{len(an)}")
    for note in cal.notes:   # what --sweep held or left out, as the plain table says it
        console.print(Text(note, style="yellow"))


def _is_anchor(row: Row, anchors: list[TargetAnchor]) -> bool:
    return any(row is a.row for a in anchors)


def to_json(cal: Calibration, anchors: list[TargetAnchor]) -> dict[str, Any]:
    from kernlint.calibrate import table

    doc = table.to_json(cal)
    for out_row, (row, s, c, is_anchor) in zip(doc["rows"], corrected_rows(cal, anchors)):
        out_row["anchor"] = is_anchor
        out_row["anchored"] = None if c is None else {
            "regs": c.regs, "demand": round(c.demand, 1), "budget": c.budget, "spills": c.spills, "smem": c.smem,
            "oor": c.smem_over, "reg_weight": round(c.reg_weight, 3), "smem_rule": c.smem_rule}
    doc["anchors"] = []
    for ta in anchors:
        st, an = errors(cal, anchors, ta.target)
        a = ta.anchor
        doc["anchors"].append({
            "target": ta.target.key, "config": ta.row.config_label if ta.row else None, "tried": ta.tried,
            "note": ta.note or None,
            "reg_ratio": round(a.reg_ratio, 4) if a else None, "smem_offset": a.smem_offset if a else None,
            "verified": len(st),
            "regs_median_abs_err": {"static": statistics.median(st), "anchored": statistics.median(an)} if st else None})
    return doc

