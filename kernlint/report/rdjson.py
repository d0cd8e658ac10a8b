"""reviewdog Diagnostic Format, JSON wire format of `DiagnosticResult` (reviewdog's proto/rdf/reviewdog.proto).

Positions are 1-based lines and 1-based columns counted in UTF-8 bytes, with an exclusive end; kernlint's
spans count code points, so columns are converted through the whole source line (not the terminal excerpt,
which is cut at EXCERPT_WIDTH characters). A file the engine failed on is an ERROR diagnostic (KL000) at
its line 1, so reviewdog does not take it for clean. Suggested edits
(`suggestions`) would come from a diagnostic's fix; no kernlint diagnostic carries a fix yet, so none are
emitted.
"""
from __future__ import annotations

import json
from typing import Any, TextIO

from kernlint.pipeline.results import LintResult
from kernlint.core.diagnostic import Diagnostic, Severity
from kernlint.report import ReportContext, findings

SEVERITY = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING", Severity.INFO: "INFO"}


def utf8_column(line_text: str | None, col: int) -> int:
    """1-based UTF-8 byte column of 0-based code-point column `col` (code points when the line is unknown)."""
    if line_text is None:
        return col + 1
    return len(line_text[:col].encode("utf-8")) + 1


def _position(lines: list[str], line: int, col: int) -> dict[str, int]:
    text = lines[line - 1] if 0 < line <= len(lines) else None
    return {"line": line, "column": utf8_column(text, col)}


def diagnostic_json(d: Diagnostic, ctx: ReportContext) -> dict[str, Any]:
    lines = ctx.full_lines(d.span.path)
    return {
        "message": d.message,
        "location": {"path": ctx.relpath(d.span.path), "range": {
            "start": _position(lines, d.span.start.line, d.span.start.col),
            "end": _position(lines, d.span.end.line, d.span.end.col)}},
        "severity": SEVERITY[d.severity],
        "code": {"value": d.code},
    }


def render(result: LintResult, out: TextIO, ctx: ReportContext) -> None:
    doc = {"source": {"name": "kernlint"},
           "diagnostics": [diagnostic_json(d, ctx) for d in findings(result)]}
    json.dump(doc, out, indent=2, ensure_ascii=False)
    out.write("\n")
