"""SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format), as read by GitHub code scanning.

Every registered rule becomes a `reportingDescriptor` in `tool.driver.rules` (built from its docstring);
each diagnostic becomes a `result` whose `ruleIndex` points into that list. URIs are relative to the
repository root and tagged with `uriBaseId` `%SRCROOT%` (SARIF §3.4.4, and what GitHub's upload maps onto
the checkout); source that is no file (`<stdin>` without `--stdin-filename`, `<string>`) has no base, only a
description saying so. Columns are 1-based Unicode code points (`columnKind` "unicodeCodePoints", §3.14.17),
which is what kernlint's spans count. The output is checked against the OASIS schema in the tests.
"""
from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from kernlint import __version__
from kernlint.pipeline.results import LintResult
from kernlint.core.diagnostic import Diagnostic, Severity
from kernlint.report import ReportContext, tool_errors
from kernlint.report.rule_docs import INTERNAL_ERROR_DOC, INTERNAL_ERROR_SUMMARY, rule_doc
from kernlint.pipeline.rule import Rule

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
SRCROOT = "%SRCROOT%"


def _artifact(path: str) -> dict[str, Any]:
    """A SARIF artifactLocation: a percent-encoded URI reference (RFC 3986; `#` would start a fragment,
    `%d` is an invalid escape), relative to %SRCROOT% inside the repository, an absolute file:// URI outside."""
    if path.startswith("/"):
        return {"uri": Path(path).as_uri()}
    if path.startswith("<"):
        # In-memory source (ReportContext.relpath keeps `<stdin>` as it is). Under %SRCROOT% it would name a
        # repository file that does not exist; without uriBaseId it is a bare reference, and the
        # artifactLocation's `description` (SARIF 2.1.0 §3.4) says that it names no file.
        what = "source read from standard input" if path == "<stdin>" else "source passed in memory"
        return {"uri": quote(path, safe="/"), "description": {"text": f"{what}, not a file"}}
    return {"uri": quote(path, safe="/"), "uriBaseId": SRCROOT}


def information_uri() -> str | None:
    """The project's home page from the installed package metadata (`[project.urls]`), if declared."""
    try:
        meta = metadata.metadata("kernlint")
    except metadata.PackageNotFoundError:
        return None
    for entry in meta.get_all("Project-URL") or []:
        label, _, url = str(entry).partition(",")
        if label.strip().lower() in ("homepage", "home", "documentation", "repository", "source"):
            return url.strip()
    home = meta["Home-page"]   # the Message API: None when the field is absent
    return str(home) if home else None


def descriptor(rule: type[Rule]) -> dict[str, Any]:
    doc = rule_doc(rule)
    return {
        "id": doc.code,
        "name": doc.name,
        "shortDescription": {"text": doc.summary},
        "fullDescription": {"text": doc.section("What it does") or doc.summary},
        "help": {"text": doc.full, "markdown": doc.full},
        "defaultConfiguration": {"level": LEVEL[rule.SEVERITY]},
        "properties": {"confidence": doc.confidence},
    }


def internal_error_descriptor() -> dict[str, Any]:
    """KL000 is no registered rule, but its results need a descriptor too: without one GitHub code scanning
    shows a bare id with no help, and `ruleIndex` could not point anywhere."""
    help_text = INTERNAL_ERROR_DOC.strip()
    return {"id": "KL000", "name": "InternalError", "shortDescription": {"text": INTERNAL_ERROR_SUMMARY},
            "fullDescription": {"text": help_text.partition("\n\n")[2]},
            "help": {"text": help_text, "markdown": help_text},
            "defaultConfiguration": {"level": "error"}, "properties": {"confidence": "exact"}}


def result_json(d: Diagnostic, ctx: ReportContext, index: dict[str, int]) -> dict[str, Any]:
    s, e = d.span.start, d.span.end
    out: dict[str, Any] = {"ruleId": d.code}
    if d.code in index:  # an unknown code (third-party pack not loaded) keeps only ruleId, which is valid
        out["ruleIndex"] = index[d.code]
    out["level"] = LEVEL[d.severity]
    out["message"] = {"text": d.message}
    out["locations"] = [{"physicalLocation": {
        "artifactLocation": _artifact(ctx.relpath(d.span.path)),
        "region": {"startLine": s.line, "startColumn": s.col + 1, "endLine": e.line, "endColumn": e.col + 1},
    }}]
    props = {"confidence": d.confidence.value, "kernel": d.kernel, "target": d.target, "config": d.config}
    out["properties"] = {k: v for k, v in props.items() if v is not None}
    return out


def sarif_log(result: LintResult, ctx: ReportContext, rules: tuple[type[Rule], ...] | None = None) -> dict[str, Any]:
    if rules is None:
        from kernlint.pipeline.registry import all_rules

        rules = all_rules()
    driver: dict[str, Any] = {"name": "kernlint", "version": __version__, "semanticVersion": __version__}
    uri = information_uri()
    if uri:
        driver["informationUri"] = uri
    driver["rules"] = [descriptor(r) for r in rules] + [internal_error_descriptor()]
    index = {r.CODE: i for i, r in enumerate(rules)}
    index["KL000"] = len(rules)
    # A path that could not be linted fails the run as an engine crash does (exit status 2): the invocation
    # object (SARIF 2.1.0 §3.20) says so with executionSuccessful false and the reasons as
    # toolExecutionNotifications, which is what a consumer that reads only the log sees.
    errors = tool_errors(result)
    invocation: dict[str, Any] = {"executionSuccessful": not errors}
    if errors:
        invocation["toolExecutionNotifications"] = [{"level": "error", "message": {"text": err}} for err in errors]
    run = {"tool": {"driver": driver}, "invocations": [invocation], "columnKind": "unicodeCodePoints",
           "results": [result_json(d, ctx, index) for d in result.diagnostics]}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(result: LintResult, out: TextIO, ctx: ReportContext) -> None:
    json.dump(sarif_log(result, ctx), out, indent=2, ensure_ascii=False)
    out.write("\n")
