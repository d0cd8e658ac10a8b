"""A Markdown summary for a CI job page (`>> $GITHUB_STEP_SUMMARY`): counts per rule and a findings table."""
from __future__ import annotations

from collections import Counter
from typing import TextIO

from kernlint.api import LintResult
from kernlint.diagnostic import Severity
from kernlint.report import ReportContext, kernel_count

MAX_ROWS = 200  # GitHub caps a step summary at 1 MiB; a long table is unreadable well before that
_ICON = {Severity.ERROR: "🔴 error", Severity.WARNING: "🟡 warning", Severity.INFO: "🔵 info"}


def cell(text: str) -> str:
    """Make text safe inside a table cell: pipes would split it, newlines would end the row."""
    return " ".join(text.replace("|", "\\|").split())


def render(result: LintResult, out: TextIO, ctx: ReportContext) -> None:
    diags = result.diagnostics
    files = len(result.files)
    kernels = sum(kernel_count(f) for f in result.files)
    lines = ["## kernlint", ""]
    if not diags:
        lines.append(f"✅ All checks passed: {files} file(s), {kernels} kernel(s) on {', '.join(ctx.targets)}.")
    else:
        by_sev = Counter(d.severity for d in diags)
        parts = ", ".join(f"{by_sev[s]} {s.value}" for s in Severity if by_sev[s])
        lines += [f"**{len(diags)} finding(s)** ({parts}) in {files} file(s), {kernels} kernel(s), "
                  f"targets: {', '.join(ctx.targets)}.", "",
                  "| code | rule | severity | count |", "|---|---|---|---:|"]
        counts = Counter((d.code, d.rule, d.severity) for d in diags)
        for (code, rule, sev), n in sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            lines.append(f"| `{code}` | {rule} | {_ICON[sev]} | {n} |")
        lines += ["", "| location | code | severity | message |", "|---|---|---|---|"]
        for d in diags[:MAX_ROWS]:
            where = f"`{ctx.relpath(d.span.path)}:{d.span.start.line}:{d.span.start.col + 1}`"
            lines.append(f"| {where} | `{d.code}` | {_ICON[d.severity]} | {cell(d.message)} |")
        if len(diags) > MAX_ROWS:
            lines += ["", f"… and {len(diags) - MAX_ROWS} more; run `kernlint check` locally for all of them."]
    for err in result.internal_errors:
        lines += ["", f"> ⚠️ {cell(err)}"]
    out.write("\n".join(lines) + "\n")
