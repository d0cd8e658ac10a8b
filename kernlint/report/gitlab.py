"""GitLab Code Quality report (a subset of the Code Climate issue format), for `artifacts:reports:codequality`.

GitLab requires `description`, `check_name`, `fingerprint`, `severity` (info, minor, major, critical,
blocker) and `location.path` + `location.lines.begin`; paths are relative to the repository root.
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any, TextIO

from kernlint.api import LintResult
from kernlint.diagnostic import Severity
from kernlint.report import ReportContext

# error: the kernel will not compile or computes wrong results; warning: wastes the hardware
SEVERITY = {Severity.ERROR: "critical", Severity.WARNING: "major", Severity.INFO: "info"}


def fingerprint(path: str, code: str, message: str, occurrence: int = 0) -> str:
    """Stable across runs and line moves: the line is deliberately not hashed, so GitLab's MR widget keeps
    tracking a finding when code above it changes. Identical findings in one file are told apart by
    their occurrence number, because GitLab collapses issues with equal fingerprints."""
    key = "\0".join((path, code, message) + ((str(occurrence),) if occurrence else ()))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def issues(result: LintResult, ctx: ReportContext) -> list[dict[str, Any]]:
    seen: Counter[tuple[str, str, str]] = Counter()
    out = []
    for d in result.diagnostics:
        path = ctx.relpath(d.span.path)
        key = (path, d.code, d.message)
        out.append({
            "type": "issue",
            "description": d.message,
            "check_name": d.code,
            "categories": ["Performance"] if d.severity is Severity.WARNING else ["Bug Risk"],
            "fingerprint": fingerprint(path, d.code, d.message, seen[key]),
            "severity": SEVERITY[d.severity],
            "location": {"path": path, "lines": {"begin": d.span.start.line, "end": d.span.end.line}},
        })
        seen[key] += 1
    return out


def render(result: LintResult, out: TextIO, ctx: ReportContext) -> None:
    json.dump(issues(result, ctx), out, indent=2, ensure_ascii=False)
    out.write("\n")
