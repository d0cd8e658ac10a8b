"""Estimate vs truth: a rich table per target (terminal) or one JSON document."""
from __future__ import annotations

import json
import statistics
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kernlint.calibrate.session import Calibration, Row


def _est(row: Row) -> dict[str, Any]:
    e = row.estimate
    if e is None or not e.estimated or e.registers is None or e.smem is None:
        return {}
    return {"regs": e.registers.allocated, "demand": e.registers.demand, "budget": e.registers.budget,
            "spill_bytes": e.registers.spill_bytes, "smem": e.smem.total, "tmem": e.smem.tmem_columns,
            "oor": e.smem_over or e.tmem_over, "ctas": e.occupancy.ctas_per_sm if e.occupancy else None}


def _truth(row: Row) -> dict[str, Any]:
    t = row.truth
    if not t:
        return {}
    return {"regs": t.get("regs"), "spill_store": t.get("spill_store"), "spill_load": t.get("spill_load"),
            "stack": t.get("stack"), "smem": t.get("shared"), "tmem": t.get("tmem"), "oor": row.truth_oor,
            "ctas": row.truth_ctas, "compile_s": t.get("compile_s"), "ptxas_log": t.get("ptxas_log")}


def _pair(est: Any, true: Any, bad: bool = False, fmt: str = "{:,}") -> Text:
    def show(v: Any) -> str:
        if v is None:
            return "-"
        if isinstance(v, bool):
            return "yes" if v else "no"
        return fmt.format(v)
    text = Text(f"{show(est)} / ")
    text.append(show(true), style="bold red" if bad else "bold")
    return text


def _reg_error(e: dict[str, Any], t: dict[str, Any]) -> float | None:
    if e.get("regs") is None or not t.get("regs") or t.get("oor"):
        return None
    return abs(e["regs"] - t["regs"]) / t["regs"]


def render(cal: Calibration, console: Console) -> None:
    env = cal.env
    console.print(f"[bold]{cal.path}::{cal.kernel}[/bold]  estimate / [bold]truth[/bold] "
                  f"(Triton {env.get('triton_version')}, ptxas {env.get('ptxas_version')}"
                  + (f", ptxas-blackwell {env['ptxas_blackwell_version']}" if env.get("ptxas_blackwell_version") else "")
                  + ")")
    for target in dict.fromkeys(r.target for r in cal.rows):
        rows = [r for r in cal.rows if r.target is target]
        has_tmem = bool(target.tmem_columns)
        table = Table(title=f"{target.name} ({target.arch})", title_justify="left", show_lines=False)
        for col in ("config", "from", "regs", "spill B", "stack", "shared B", *(["tmem cols"] if has_tmem else []),
                    "OutOfRes", "CTAs/SM", "compile"):
            table.add_column(col, justify="left" if col in ("config", "from") else "right", no_wrap=col != "config")
        errors: list[float] = []
        failures: list[tuple[int, Row]] = []
        for r in rows:
            e, t = _est(r), _truth(r)
            if r.error:
                # a short marker in the row and the message under the table: a long Triton message in a
                # no-wrap cell squeezed the config column to nothing
                failures.append((len(failures) + 1, r))
                table.add_row(r.config_label, r.origin, Text(f"failed [{len(failures)}]", style="yellow"),
                              *[""] * (6 + has_tmem))
                continue
            err = _reg_error(e, t)
            if err is not None:
                errors.append(err)
            spill_t = t.get("spill_store")
            cells = [_pair(e.get("regs"), t.get("regs"), err is not None and err > 0.2),
                     _pair(e.get("spill_bytes"), spill_t, bool(e.get("spill_bytes")) != bool(spill_t)),
                     Text(str(t.get("stack", "-"))),
                     _pair(e.get("smem"), t.get("smem"), e.get("smem") != t.get("smem"))]
            if has_tmem:
                cells.append(_pair(e.get("tmem"), t.get("tmem"), e.get("tmem") != (t.get("tmem") or 0)))
            cells += [_pair(e.get("oor"), t.get("oor"), e.get("oor") != t.get("oor")),
                      _pair(e.get("ctas"), t.get("ctas"), e.get("ctas") != t.get("ctas")),
                      Text("cached" if r.cached else f"{t.get('compile_s') or 0:.2f}s", style="dim")]
            table.add_row(r.config_label, r.origin, *cells)
        console.print(table)
        for n, r in failures:
            prefix = "" if r.error.startswith("not compiled") else "Triton: "
            console.print(Text(f"  [{n}] {r.config_label}: {prefix}{r.error}", style="yellow"))
        compiled = [r for r in rows if r.truth]
        smem_exact = sum(_est(r).get("smem") == _truth(r).get("smem") for r in compiled)
        oor_agree = sum(_est(r).get("oor") == _truth(r).get("oor") for r in compiled)
        summary = f"  {len(compiled)}/{len(rows)} compiled"
        if compiled:
            summary += (f"; shared memory exact {smem_exact}/{len(compiled)}; OutOfResources agrees "
                        f"{oor_agree}/{len(compiled)}")
        if errors:
            summary += (f"; registers median abs error {statistics.median(errors):.0%}, "
                        f"within 20 % {sum(x <= 0.2 for x in errors)}/{len(errors)}")
        console.print(summary)
    for note in cal.notes:   # what --sweep held or left out: a shorter sweep than asked is said, not silent
        console.print(Text(note, style="yellow"))
    console.print("[dim]arguments: " + "; ".join(a.describe() for a in cal.signature if a.kind != "constexpr") + "[/dim]")
    console.print(f"[dim]compiled from a scratch module built from {', '.join(cal.scratch.files)} "
                  f"(kernel, jit helpers, constexpr globals); the module itself was not imported[/dim]")
    if cal.scratch.missing:
        console.print(f"[dim]globals not copied into the scratch module: {', '.join(cal.scratch.missing)}[/dim]")
    for assumed in cal.scratch.assumed:  # a constant the module binds per condition: calibrate took one branch
        console.print(f"[yellow]assumed[/yellow] {assumed}")


def to_json(cal: Calibration) -> dict[str, Any]:
    return {
        "kernel": cal.kernel, "path": cal.path, "environment": cal.env,
        "signature": [{"name": a.name, "kind": a.kind, "spec": a.value, "source": a.source} for a in cal.signature],
        "assumptions": [a.describe() for a in cal.signature if a.source.startswith("default")] + cal.assumptions
        + list(cal.scratch.assumed),
        "scratch": {"files": list(cal.scratch.files), "missing": list(cal.scratch.missing),
                    "sha256": cal.scratch.sha256},
        "notes": list(cal.notes),
        "rows": [{"target": r.target.key, "capability": r.target.capability, "origin": r.origin,
                  "config": {"constexprs": dict(r.point.constexprs), "num_warps": r.point.num_warps,
                             "num_stages": r.point.num_stages, "maxnreg": r.point.maxnreg},
                  "estimate": _est(r), "truth": _truth(r) or None, "error": r.error, "cached": r.cached}
                 for r in cal.rows],
    }


def render_json(cal: Calibration, out: TextIO) -> None:
    json.dump(to_json(cal), out, indent=1, default=repr)
    out.write("\n")
