"""Terminal output through rich: full (with a source snippet), concise, and the `explain` table."""
from __future__ import annotations

import os
from collections import Counter
from typing import TextIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kernlint.analysis.spill_band import BORDERLINE_PRESSURE
from kernlint.pipeline.results import LintResult
from kernlint.core.diagnostic import Diagnostic, Severity
from kernlint.report import ReportContext, tool_errors
from kernlint.pipeline.rule import KernelAnalysis

# below this many columns the config labels (often 70+ characters) move above the table as numbered lines
_WIDE_EXPLAIN = 160
_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def console_for(out: TextIO, color: bool | None = None, width: int | None = 120) -> Console:
    """`color` None leaves it to rich, which honours NO_COLOR, FORCE_COLOR and whether `out` is a terminal;
    False (--no-color, -o FILE) turns it off. Passing no_color=False would override the NO_COLOR variable."""
    return Console(file=out, highlight=False, soft_wrap=True, width=width,
                   force_terminal=color if color is not None else None,
                   no_color=True if color is False else None)


def explain_width(out: TextIO) -> int | None:
    """The terminal's width (or $COLUMNS) for `explain`'s table; a pipe without $COLUMNS keeps wide rows,
    so `explain ... | less -S` or grep sees one row per line."""
    isatty = getattr(out, "isatty", None)
    if "COLUMNS" in os.environ or (isatty is not None and isatty()):
        return None   # rich reads $COLUMNS, else asks the terminal
    return 200


def _header(d: Diagnostic) -> Text:
    t = Text()
    t.append(f"{d.span.path}:{d.span.start.line}:{d.span.start.col + 1}: ", style="bold")
    t.append(d.code, style=_STYLE[d.severity])
    t.append(f" {d.message}")
    return t


def render_concise(result: LintResult, console: Console) -> None:
    for d in result.diagnostics:
        console.print(_header(d))
    _summary(result, console)


def render_full(result: LintResult, console: Console, sources: dict[str, list[str]]) -> None:
    for d in result.diagnostics:
        console.print(_header(d))
        lines = sources.get(d.span.path, [])
        n = d.span.start.line
        if 0 < n <= len(lines):
            gutter = len(str(n + 1))
            for i in range(max(1, n - 1), min(len(lines), n + 1) + 1):
                marker = ">" if i == n else " "
                console.print(Text(f" {marker}{i:>{gutter}} | ", style="dim") + Text(lines[i - 1]))
        console.print(Text(f"   {d.severity.value}, {d.confidence.value}" + (f", {d.target}" if d.target else ""),
                           style="dim"))
        console.print()
    _summary(result, console)


def _summary(result: LintResult, console: Console) -> None:
    _vendor_line(result, console)
    for err in result.internal_errors:
        console.print(Text(f"error: {err}", style="bold red"))
    diags = result.diagnostics
    kernels, estimates = result.kernel_count, result.estimate_count  # also right for cached results
    # Path errors are written to stderr by the CLI (kernlint.cli.check.lint), so they are counted here, not repeated.
    errors = len(tool_errors(result))
    if not diags and errors:   # exit status 2: a file or path went unchecked, so nothing "passed"
        console.print(Text(f"No findings in {len(result.files)} file(s), but {errors} error(s) kept kernlint from "
                           f"checking everything; {kernels} kernel(s), {estimates} estimate(s).", style="bold red"))
        return
    unknown = [u for f in result.files for u in f.unknown_estimates]
    if not diags and unknown:   # `?` in every column is not a pass: say what was not estimated and why
        why = list(dict.fromkeys(unknown))
        console.print(Text(f"No findings in {len(result.files)} file(s), {kernels} kernel(s), but {len(unknown)} of "
                           f"{estimates} estimate(s) unknown: {'; '.join(why[:3])}"
                           + (f"; and {len(why) - 3} more" if len(why) > 3 else "") + ".", style="yellow"))
        return
    if not diags:
        console.print(Text(f"All checks passed: {len(result.files)} file(s), {kernels} kernel(s), "
                           f"{estimates} estimate(s).", style="green"))
        return
    by_sev = Counter(d.severity for d in diags)
    parts = ", ".join(f"{by_sev[s]} {s.value}{'s' if by_sev[s] != 1 else ''}" for s in Severity if by_sev[s])
    console.print(Text(f"Found {len(diags)} finding(s) ({parts}) in {len(result.files)} file(s); "
                       f"{kernels} kernel(s), {estimates} estimate(s)"
                       + (f", {len(unknown)} of them unknown" if unknown else "") + ".", style="bold"))


def _vendor_line(result: LintResult, console: Console) -> None:
    files = sum(1 for f in result.files if f.vendor_reason is not None)
    if files:
        console.print(Text(f"info: {result.vendor_skipped} kernel(s) in {files} file(s) of other vendors' backends "
                           "not checked against NVIDIA targets (set `vendor-backends = \"check\"` in "
                           "[tool.kernlint] to check them).", style="dim"))


def render_statistics(result: LintResult, console: Console) -> None:
    counts = Counter((d.code, d.rule) for d in result.diagnostics)
    for (code, rule), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        console.print(f"{n:>5}\t{code}\t{rule}")


def _pct_style(ratio: float) -> str:
    return "red" if ratio > 1.0 else "yellow" if ratio > 0.9 else "green"


def render_explain(k: KernelAnalysis, path: str, console: Console) -> None:
    """One row per config × target: the Nsight-Compute-like occupancy picture before any compile. In a
    terminal narrower than the wide table, configs are numbered above it and rows name them by number, so
    the table fits the width instead of cutting every cell short."""
    console.print(Text(f"{path}:{k.jit.line} {k.jit.qualname}", style="bold"))
    if k.ir.assumptions:
        console.print(Text("assumes: " + "; ".join(k.ir.assumptions), style="dim"), soft_wrap=False)
    for note in dict.fromkeys(p.source_note for p in k.points if p.source_note):   # configs not read
        console.print(Text(note, style="yellow"), soft_wrap=False)
    for u in k.ir.unmodelled:
        console.print(Text(f"not modelled: line {u.line}: {u.construct}", style="cyan"), soft_wrap=False)
    narrow = console.width < _WIDE_EXPLAIN
    labels = list(dict.fromkeys((e.config.label(), f"{e.config.origin}:{e.config.line}") for e in k.estimates))
    if narrow:   # the config and its confidence above the table, each once
        for i, key in enumerate(labels, 1):
            conf = "/".join(dict.fromkeys(e.confidence.value for e in k.estimates
                                          if (e.config.label(), f"{e.config.origin}:{e.config.line}") == key))
            console.print(Text(f"[{i}] {key[0]} ({key[1]}; {conf})"), soft_wrap=False)
    table = Table(show_lines=False, header_style="bold", box=box.SIMPLE_HEAD if narrow else box.HEAVY_HEAD,
                  pad_edge=not narrow, padding=(0, 1) if not narrow else (0, 0), show_edge=not narrow)
    columns: tuple[str, ...]
    if narrow:
        columns = ("#", "target", "regs", "spill", "shared memory", "tmem", "CTAs/SM", "occ", "limiter")
    else:
        columns = ("config", "origin", "target", "regs/thread", "spill", "shared memory", "tmem", "CTAs/SM",
                   "occupancy", "limiter", "confidence")
    for col in columns:
        # numbers stay on one line; text cells (the buffer list, "shared memory" as limiter) wrap at spaces
        table.add_column(col, justify="right" if col in ("regs", "regs/thread", "CTAs/SM", "occ", "occupancy")
                         else "left", no_wrap=col not in ("shared memory", "limiter"),
                         min_width=9 if col == "shared memory" else None)
    for e in k.estimates:
        key = (e.config.label(), f"{e.config.origin}:{e.config.line}")
        lead = (f"[{labels.index(key) + 1}]",) if narrow else key
        tail = () if narrow else (e.confidence.value,)
        if not e.estimated:
            table.add_row(*lead, e.target.key, "?", "?", e.not_estimated_because, "", "", "", "", *tail)
            continue
        r, s, o = e.registers, e.smem, e.occupancy
        assert r is not None and s is not None and o is not None
        regs = Text(f"{r.demand} / {r.budget}", style=_pct_style(r.pressure))
        # within 20 % over the budget ptxas spills about 6 times in 10 (rules/register_spill_risk.py): a maybe
        maybe = r.spill_bytes and r.demand <= BORDERLINE_PRESSURE * r.budget
        spill = Text(f"≈{r.spill_bytes:,} B?" if maybe else f"≈{r.spill_bytes:,} B" if r.spill_bytes else "-",
                     style="yellow" if maybe else "red" if r.spill_bytes else "green")
        smem_ratio = s.total / e.target.smem_per_cta_optin
        smem = Text(f"{s.total:,} B" + (f" ({', '.join(b.label for b in s.buffers)})" if s.buffers else ""),
                    style=_pct_style(smem_ratio))
        tmem = f"{s.tmem_columns}/{e.target.tmem_columns}" if e.target.tmem_columns else "-"
        occ = Text(f"{o.occupancy:.0%}", style="red" if o.ctas_per_sm == 0 else "yellow" if o.occupancy < 0.25 else "green")
        table.add_row(*lead, e.target.key, regs, spill, smem, tmem, str(o.ctas_per_sm), occ, o.limiter, *tail)
    console.print(table)


def render_full_to(result: LintResult, out: TextIO, ctx: ReportContext) -> None:
    sources = {f.path: ctx.lines(f.path) for f in result.files if f.diagnostics}
    render_full(result, console_for(out, ctx.color), sources)


def render_concise_to(result: LintResult, out: TextIO, ctx: ReportContext) -> None:
    render_concise(result, console_for(out, ctx.color))
