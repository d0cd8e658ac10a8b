"""JUnit XML, as consumed by CI test-report views (GitLab `artifacts:reports:junit`, Jenkins, Azure).

One `<testsuite>` per file and one `<testcase>` per finding, with a `<failure>` (info-level findings,
which never fail a run, pass with the message in `<system-out>`); a file without findings is one passing
`<testcase>`, an internal error an `<error>`, and paths that could not be linted are `<error>` cases of a
last suite. Passing cases are per file rather than per kernel because a cached result keeps findings but
not kernel analyses, and the report must not depend on the cache. No timestamps or durations, so the output
is stable.

Test-report views identify a case by classname + name and merge cases whose pair is equal, so a name says
everything that tells two findings apart: the kernel, target and config, the line and column; a repeat that
is still equal gets a ` #N` suffix. Text is sanitised to XML 1.0's `Char` production (XML 1.0 §2.2): a path
or message may hold control characters that no XML parser accepts, even as character references.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from typing import TextIO

from kernlint.pipeline.results import FileResult, LintResult
from kernlint.core.diagnostic import Diagnostic, Severity
from kernlint.report import ReportContext

# Everything outside XML 1.0 §2.2 `Char`: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
# (C0 controls, lone surrogates from undecodable file names, U+FFFE/U+FFFF).
_NOT_XML_CHAR = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """`text` with every character XML 1.0 forbids written as a visible `\\xNN` / `\\uNNNN` escape, so the
    file name or message stays recognisable (U+FFFD would hide which character it was)."""
    return _NOT_XML_CHAR.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)


def case_name(d: Diagnostic) -> str:
    """`KL201 RegisterSpillRisk in k on h100 (BLOCK_M=64, num_warps=4) at 16:5`: the same finding on another
    config or target is another test case, not a repeat of this one."""
    name = f"{d.code} {d.rule}" if d.rule else d.code
    name += f" in {d.kernel}" if d.kernel else ""
    name += f" on {d.target}" if d.target else ""
    name += f" ({d.config})" if d.config else ""
    return name + f" at {d.span.start.line}:{d.span.start.col + 1}"


def _suite(f: FileResult, ctx: ReportContext) -> ET.Element:
    path = ctx.relpath(f.path)
    suite = ET.Element("testsuite", name=path)
    tests = failures = errors = 0
    seen: Counter[str] = Counter()
    for d in f.diagnostics:
        where = f"{path}:{d.span.start.line}:{d.span.start.col + 1}"
        name = case_name(d)
        seen[name] += 1
        if seen[name] > 1:   # equal in every field shown (e.g. two messages on one span): keep both cases
            name += f" #{seen[name]}"
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
    return _counted(suite, tests, failures, errors)


def _path_errors(problems: list[str]) -> ET.Element:
    """Paths given that were not linted (missing, unreadable directory): they make the exit status 2."""
    suite = ET.Element("testsuite", name="kernlint paths")
    for i, problem in enumerate(problems, 1):
        case = ET.SubElement(suite, "testcase", name=f"path {i}: {problem}", classname="kernlint paths")
        ET.SubElement(case, "error", message=problem).text = problem
    return _counted(suite, len(problems), 0, len(problems))


def _counted(suite: ET.Element, tests: int, failures: int, errors: int) -> ET.Element:
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    return suite


def render(result: LintResult, out: TextIO, ctx: ReportContext) -> None:
    root = ET.Element("testsuites", name="kernlint")
    suites = [_suite(f, ctx) for f in result.files]
    if result.path_errors:
        suites.append(_path_errors(result.path_errors))
    for attr in ("tests", "failures", "errors"):
        root.set(attr, str(sum(int(s.get(attr, "0")) for s in suites)))
    root.extend(suites)
    for el in root.iter():   # one place for every attribute and text, so no field can be missed
        el.attrib = {k: xml_text(v) for k, v in el.attrib.items()}
        if el.text:
            el.text = xml_text(el.text)
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode"))
    out.write("\n")
