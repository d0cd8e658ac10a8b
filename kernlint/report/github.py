"""GitHub Actions workflow commands: one `::error|warning|notice …::message` annotation per finding.

Syntax and escaping follow GitHub's "Workflow commands for GitHub Actions" docs and the reference
implementation in actions/toolkit (packages/core/src/command.ts): the message escapes `%`, CR and LF;
property values additionally escape `:` and `,`, which would otherwise end the value.
"""
from __future__ import annotations

from typing import TextIO

from kernlint.pipeline.results import LintResult
from kernlint.core.diagnostic import Diagnostic, Severity
from kernlint.report import ReportContext

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    # `%` first, or the escapes added below would be escaped again
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(d: Diagnostic, path: str) -> str:
    s, e = d.span.start, d.span.end
    props = [("file", path), ("line", str(s.line))]
    # GitHub renders col/endColumn only for single-line ranges; on a multi-line range they would be
    # read as columns of the first line, so they are left out there.
    if s.line == e.line:
        props.append(("col", str(s.col + 1)))
        props += [("endLine", str(e.line)), ("endColumn", str(e.col + 1))]
    else:
        props.append(("endLine", str(e.line)))
    props.append(("title", f"{d.code} ({d.rule})" if d.rule else d.code))
    joined = ",".join(f"{k}={escape_property(v)}" for k, v in props)
    return f"::{COMMAND[d.severity]} {joined}::{escape_data(d.message)}"


def render(result: LintResult, out: TextIO, ctx: ReportContext) -> None:
    for d in result.diagnostics:
        out.write(annotation(d, ctx.relpath(d.span.path)) + "\n")
    for err in result.internal_errors:
        out.write(f"::error title=kernlint internal error::{escape_data(err)}\n")
    for err in result.path_errors:   # not linted at all: the run's exit status is 2, and the job log says why
        out.write(f"::error title=kernlint path error::{escape_data(err)}\n")
