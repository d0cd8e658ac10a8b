"""JUnit XML, as consumed by CI test-report views (GitLab `artifacts:reports:junit`, Jenkins, Azure).

One `<testsuite>` per file and one `<testcase>` per finding, with a `<failure>` (info-level findings,
which never fail a run, pass with the message in `<system-out>`); a file without findings is one passing
`<testcase>`, an internal error an `<error>`. Passing cases are per file rather than per kernel because a
cached result keeps findings but not kernel analyses, and the report must not depend on the cache. No
timestamps or durations, so the output is stable.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TextIO

from kernlint.api import FileResult, LintResult
from kernlint.diagnostic import Severity
from kernlint.report import ReportContext


def _suite(f: FileResult, ctx: ReportContext) -> ET.Element:
    path = ctx.relpath(f.path)
    suite = ET.Element("testsuite", name=path)
    tests = failures = errors = 0
    for d in f.diagnostics:
        where = f"{path}:{d.span.start.line}:{d.span.start.col + 1}"
        name = f"{d.code} {d.rule}" + (f" in {d.kernel}" if d.kernel else "") + f" at line {d.span.start.line}"
        case = ET.SubElement(suite, "testcase", name=name, classname=path, file=path, line=str(d.span.start.line))
        text = f"{where}: {d.code} {d.message}"
        if d.severity is Severity.INFO:
            ET.SubElement(case, "system-out").text = text
        else:
            failure = ET.SubElement(case, "failure", message=d.message, type=f"{d.code} ({d.severity.value})")
            failure.text = text
            failures += 1
        tests += 1
    if f.internal_error:
        case = ET.SubElement(suite, "testcase", name="kernlint", classname=path, file=path)
        ET.SubElement(case, "error", message=f.internal_error).text = f.internal_error
        tests, errors = tests + 1, errors + 1
    if tests == 0:
        ET.SubElement(suite, "testcase", name="kernlint check", classname=path, file=path)
        tests = 1
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    return suite


def render(result: LintResult, out: TextIO, ctx: ReportContext) -> None:
    root = ET.Element("testsuites", name="kernlint")
    suites = [_suite(f, ctx) for f in result.files]
    for attr in ("tests", "failures", "errors"):
        root.set(attr, str(sum(int(s.get(attr, "0")) for s in suites)))
    root.extend(suites)
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode"))
    out.write("\n")
