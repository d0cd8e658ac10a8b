"""GitLab Code Quality report (a subset of the Code Climate issue format), for `artifacts:reports:codequality`.

GitLab requires `description`, `check_name`, `fingerprint`, `severity` (info, minor, major, critical,
blocker) and `location.path` + `location.lines.begin`; paths are relative to the repository root.
A file the engine failed on is a `blocker` KL000 issue at its line 1: the report would otherwise show the
file as clean. Paths that could not be linted (`LintResult.path_errors`) have no file in the repository to
point at: they are on stderr and make the exit status 2.
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any, TextIO

from kernlint.pipeline.results import LintResult
from kernlint.core.diagnostic import Diagnostic, Severity
from kernlint.report import ReportContext, findings

# error: the kernel will not compile or computes wrong results; warning: wastes the hardware
SEVERITY = {Severity.ERROR: "critical", Severity.WARNING: "major", Severity.INFO: "info"}
BLOCKER = "KL000"   # the file was not checked at all: nothing below it can be trusted

# Categories from the Code Climate spec's list (codeclimate/platform spec/analyzers/SPEC.md, "Categories":
# Bug Risk, Clarity, Compatibility, Complexity, Duplication, Performance, Security, Style), chosen per rule
# by what its finding costs (`kernlint rule CODE`, "Why is this bad?").
CATEGORY = {
    "KL000": "Bug Risk",       # the engine failed: the file's kernels went unchecked
    "KL001": "Bug Risk",       # the file does not parse: Triton cannot compile it either
    "KL002": "Clarity",        # info: a construct the model cannot read, so its estimates are incomplete
    "KL003": "Style",          # an unused noqa comment: hygiene of the source, no runtime effect
    "KL101": "Bug Risk",       # OutOfResources: the launch fails
    "KL201": "Performance",    # register spills
    "KL202": "Performance",    # low occupancy
    "KL204": "Performance",    # mma.sync instead of wgmma
    "KL301": "Bug Risk",       # Triton refuses to compile a non-power-of-two arange
    "KL302": "Bug Risk",       # tl.dot rejects a dimension under 16
    "KL303": "Bug Risk",       # int32 offset overflow: wrong addresses, a correctness bug
    "KL310": "Bug Risk",       # unknown triton.language attribute: the kernel does not compile
    "KL311": "Compatibility",  # the API is missing in the targeted Triton release
    "KL312": "Bug Risk",       # a dtype called like a function: the kernel does not compile
    "KL313": "Bug Risk",       # an unknown keyword argument: the kernel does not compile
    "KL401": "Performance",    # the autotuner compiles the config, then skips it: slower tuning
    "KL402": "Duplication",    # the same config twice in one autotune list
    "KL406": "Performance",    # the tuned config silently stops applying: the author's config runs instead
    "KL501": "Performance",    # a persistent reduction of unstated size: register footprint unknown
}


def category(d: Diagnostic) -> str:
    """The rule's category; a code not in CATEGORY (a third-party rule pack) falls back on its severity."""
    return CATEGORY.get(d.code) or ("Performance" if d.severity is Severity.WARNING else "Bug Risk")


def fingerprint(path: str, code: str, message: str, occurrence: int = 0) -> str:
    """Stable across runs and line moves: the line is deliberately not hashed, so GitLab's MR widget keeps
    tracking a finding when code above it changes. Identical findings in one file are told apart by
    their occurrence number, because GitLab collapses issues with equal fingerprints."""
    key = "\0".join((path, code, message) + ((str(occurrence),) if occurrence else ()))
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()   # non-UTF-8 file names (PEP 383)


def issues(result: LintResult, ctx: ReportContext) -> list[dict[str, Any]]:
    seen: Counter[tuple[str, str, str]] = Counter()
    out = []
    for d in findings(result):
        path = ctx.relpath(d.span.path)
        key = (path, d.code, d.message)
        out.append({
            "type": "issue",
            "description": d.message,
            "check_name": d.code,
            "categories": [category(d)],
            "fingerprint": fingerprint(path, d.code, d.message, seen[key]),
            "severity": "blocker" if d.code == BLOCKER else SEVERITY[d.severity],
            "location": {"path": path, "lines": {"begin": d.span.start.line, "end": d.span.end.line}},
        })
        seen[key] += 1
    return out


def render(result: LintResult, out: TextIO, ctx: ReportContext) -> None:
    json.dump(issues(result, ctx), out, indent=2, ensure_ascii=False)
    out.write("\n")
