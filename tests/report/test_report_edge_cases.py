"""Output formats on the inputs that broke them: long lines, odd paths, tool errors, closed pipes, stdin."""
from __future__ import annotations

import io
import json
import subprocess
import sys
import xml.dom.minidom
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import ROOT

from kernlint.pipeline.api import FileResult, LintResult
from kernlint.cli import main
from kernlint.core.diagnostic import Confidence, Diagnostic, Severity, Span
from kernlint.report import FORMATS, ReportContext, render

FIXTURES = "tests/report/fixtures"
CRASH = "internal error ValueError: boom (lower.py:12)"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def _render(fmt: str, result: LintResult, ctx: ReportContext | None = None) -> str:
    buf = io.StringIO()
    render(fmt, result, buf, ctx or ReportContext(root=ROOT))
    return buf.getvalue()


def _diag(path: str, line: int = 3, col: int = 4, end_col: int = 9, message: str = "m", code: str = "KL201",
          rule: str = "RegisterSpillRisk", severity: Severity = Severity.WARNING, **kw: str) -> Diagnostic:
    return Diagnostic(code, Span.at(path, line, col, line, end_col), message, severity, Confidence.ESTIMATE, rule, **kw)


# 1. rdjson columns ------------------------------------------------------------------------------------------

def test_rdjson_columns_past_the_excerpt_width_count_bytes_of_the_whole_line(tmp_path: Path) -> None:
    """The terminal excerpt is cut at 240 characters; converting on it clipped a column at 432 to 267 and
    made the end equal to the start."""
    line = "x = '" + "é" * 300 + "'; y = tl.arange(0, 48)"
    src = tmp_path / "long.py"
    src.write_text(f"a = 1\n{line}\n", encoding="utf-8")
    start = line.index("tl.arange")
    d = _diag(str(src), 2, start, start + len("tl.arange(0, 48)"))
    doc = json.loads(_render("rdjson", LintResult([FileResult(str(src), [d], [])]), ReportContext(root=tmp_path)))
    rng = doc["diagnostics"][0]["location"]["range"]
    assert rng["start"] == {"line": 2, "column": len(line[:start].encode("utf-8")) + 1}
    assert rng["end"]["column"] == rng["start"]["column"] + len("tl.arange(0, 48)")
    # the excerpt stays cut for the terminal
    assert len(ReportContext(root=tmp_path).lines(str(src))[1]) == 240


# 2 and 3. JUnit: well-formed XML, unique case names ----------------------------------------------------------

def test_junit_is_well_formed_with_control_characters_in_paths_and_messages() -> None:
    path = "odd/ctl\x01x.py"
    d = _diag(path, message="colour \x1b[31m, nul \x00, bad name \udcff, ok \t tab")
    out = _render("junit", LintResult([FileResult(path, [d], [], internal_error="crash \x02 here")], ["gone\x03.py: x"]))
    xml.dom.minidom.parseString(out.encode("utf-8"))   # raised ExpatError: not well-formed (invalid token)
    root = ET.fromstring(out)
    assert root.find("testsuite").get("name") == "odd/ctl\\x01x.py"   # visible, not silently dropped
    failure = root.find(".//failure")
    assert failure.get("message") == "colour \\x1b[31m, nul \\x00, bad name \\udcff, ok \t tab"


def test_junit_case_names_are_unique_per_config_target_and_column() -> None:
    path = "k.py"
    diags = [_diag(path, 16, 4, 9, kernel="mm", target=t, config=c) for t in ("h100", "b200") for c in ("A=1", "A=2")]
    diags += [_diag(path, 16, 8, 9, kernel="mm"), _diag(path, 16, 8, 9, kernel="mm", message="other")]
    root = ET.fromstring(_render("junit", LintResult([FileResult(path, diags, [])])))
    keys = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert len(set(keys)) == len(keys) == 6
    assert keys[0][1] == "KL201 RegisterSpillRisk in mm on h100 (A=1) at 16:5"
    assert keys[-1][1] == "KL201 RegisterSpillRisk in mm at 16:9 #2"   # equal in every field shown


def test_junit_case_names_on_the_examples_are_unique() -> None:
    out = io.StringIO()
    main(["check", "examples", "--output-format", "junit"], out)
    keys = [(c.get("classname"), c.get("name")) for c in ET.fromstring(out.getvalue()).iter("testcase")]
    assert len(keys) > 20 and len(set(keys)) == len(keys)


# 4. Markdown ----------------------------------------------------------------------------------------------

def _markdown_html(text: str) -> str:
    markdown_it = pytest.importorskip("markdown_it")   # rich's own dependency: a CommonMark + GFM-tables parser
    return str(markdown_it.MarkdownIt("commonmark").enable("table").enable("strikethrough").render(text))


def test_markdown_cells_render_literally() -> None:
    paths = ["tick`x|y.py", "nl\nx.py", "a<b>&c.py"]
    message = "tile ptr<fp16> & `acc|x` *not bold* [no](link) back\\slash 2**31 ~~no~~ |pipe|"
    result = LintResult([FileResult(p, [_diag(p, message=message)], []) for p in paths])
    out = _render("markdown", result)
    html = _markdown_html(out)
    table = html.split("<table>")[2]   # the findings table
    rows = table.split("<tbody>")[1].split("</tr>")[:-1]
    assert len(rows) == 3 and all(r.count("<td>") == 4 for r in rows)   # no row broken, no cell split
    assert "<code>tick`x|y.py:3:5</code>" in rows[0]
    assert "<code>nl\\x0ax.py:3:5</code>" in rows[1]
    assert "<code>a&lt;b&gt;&amp;c.py:3:5</code>" in rows[2]
    expected = ("tile ptr&lt;fp16&gt; &amp; <code>acc|x</code> *not bold* [no](link) back\\slash 2**31 ~~no~~ "
                "|pipe|")
    assert all(expected in r for r in rows), rows[0]


def test_markdown_cell_keeps_code_spans_and_escapes_the_rest() -> None:
    from kernlint.report.markdown import cell, code

    assert cell("a | b\nc") == "a \\| b c"
    assert cell("`x<y>` then <tag>") == "`x<y>` then \\<tag\\>"
    assert code("a`b") == "``a`b``" and code("`a") == "`` `a ``" and code("p|q") == "`p\\|q`"


# 5. Tool errors in every format ---------------------------------------------------------------------------

def _crashed() -> LintResult:
    """A parse-stage crash: api.lint_parsed records `internal_error` and no KL000 diagnostic."""
    return LintResult([FileResult(f"{FIXTURES}/clean.py", [], [], internal_error=CRASH)])


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_carries_an_internal_error_and_claims_no_pass(fmt: str) -> None:
    out = _render(fmt, _crashed())
    assert "ValueError: boom" in out
    assert "All checks passed" not in out


def test_internal_error_records_in_finding_only_formats() -> None:
    (issue,) = json.loads(_render("gitlab", _crashed()))
    assert issue["severity"] == "blocker" and issue["check_name"] == "KL000"
    assert issue["location"] == {"path": f"{FIXTURES}/clean.py", "lines": {"begin": 1, "end": 1}}
    (diag,) = json.loads(_render("rdjson", _crashed()))["diagnostics"]
    assert diag["severity"] == "ERROR" and diag["code"]["value"] == "KL000"
    (line,) = _render("json-lines", _crashed()).splitlines()
    assert json.loads(line)["code"] == "KL000" and json.loads(line)["severity"] == "error"
    # a file that already carries the engine's KL000 is not reported twice
    kl000 = _diag(f"{FIXTURES}/clean.py", 1, 0, 0, "kernlint failed", "KL000", "InternalError", Severity.ERROR)
    twice = LintResult([FileResult(f"{FIXTURES}/clean.py", [kl000], [], internal_error=CRASH)])
    assert len(json.loads(_render("gitlab", twice))) == 1


@pytest.mark.parametrize("fmt", ["json", "sarif", "github", "junit", "markdown"])
def test_path_errors_reach_the_formats_with_a_place_for_them(fmt: str) -> None:
    result = LintResult([], ["nope.py: no such file or directory"])
    out = _render(fmt, result)
    assert "nope.py: no such file or directory" in out and "All checks passed" not in out


def test_missing_path_fails_the_sarif_run_and_is_in_the_json(capsys: pytest.CaptureFixture[str]) -> None:
    for fmt in ("sarif", "json"):
        out = io.StringIO()
        assert main(["check", f"{FIXTURES}/clean.py", "nope.py", "--no-cache", "--output-format", fmt], out) == 2
        doc = json.loads(out.getvalue())
        if fmt == "sarif":
            inv = doc["runs"][0]["invocations"][0]
            assert inv["executionSuccessful"] is False
            assert [n["message"]["text"] for n in inv["toolExecutionNotifications"]] == ["nope.py: no such file or directory"]
        else:
            assert doc["path_errors"] == ["nope.py: no such file or directory"]


@pytest.mark.parametrize("fmt", ["concise", "full"])
def test_terminal_summary_does_not_pass_a_run_with_tool_errors(fmt: str) -> None:
    out = _render(fmt, LintResult([FileResult(f"{FIXTURES}/clean.py", [], [])], ["nope.py: no such file or directory"]))
    assert "All checks passed" not in out and "1 error(s)" in out
    assert "All checks passed" in _render(fmt, LintResult([FileResult(f"{FIXTURES}/clean.py", [], [])]))


# 6. A closed pipe ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_closed_pipe_exits_quietly_in_every_format(fmt: str) -> None:
    """`kernlint check ... | head`: the reader is gone before kernlint writes; no traceback, no
    "Exception ignored" from the interpreter's final flush."""
    proc = subprocess.Popen([sys.executable, "-m", "kernlint", "check", FIXTURES, "--select", "KL301,KL303",
                             "--no-cache", "--output-format", fmt],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()   # before the child has linted anything: its first write hits EPIPE
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err


@pytest.mark.parametrize("argv", [["rule", "--all"], ["check", FIXTURES, "--statistics", "--no-cache"]])
def test_closed_pipe_exits_quietly_in_other_commands(argv: list[str]) -> None:
    """Output that does not go through a report format (`rule --all | head`, `--statistics`) stops the same way."""
    proc = subprocess.Popen([sys.executable, "-m", "kernlint", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err


# 7. GitLab categories -----------------------------------------------------------------------------------

def test_gitlab_categories_follow_the_rule() -> None:
    from kernlint.pipeline.registry import all_rules
    from kernlint.report.gitlab import CATEGORY

    allowed = {"Bug Risk", "Clarity", "Compatibility", "Complexity", "Duplication", "Performance", "Security", "Style"}
    assert {r.CODE for r in all_rules()} | {"KL000"} <= set(CATEGORY) and set(CATEGORY.values()) <= allowed
    cases = {"KL303": ("Int32OffsetOverflow", Severity.WARNING), "KL003": ("UnusedSuppression", Severity.WARNING),
             "KL001": ("ParseError", Severity.ERROR), "KL402": ("DuplicateAutotuneConfig", Severity.WARNING),
             "KL201": ("RegisterSpillRisk", Severity.WARNING)}
    diags = [_diag("k.py", code=c, rule=r, severity=s) for c, (r, s) in cases.items()]
    got = {i["check_name"]: i["categories"] for i in json.loads(_render("gitlab", LintResult([FileResult("k.py", diags, [])])))}
    assert got == {"KL303": ["Bug Risk"], "KL003": ["Style"], "KL001": ["Bug Risk"], "KL402": ["Duplication"],
                   "KL201": ["Performance"]}


# 8. SARIF for stdin -------------------------------------------------------------------------------------

def _sarif_from_stdin(monkeypatch: pytest.MonkeyPatch, *argv: str) -> dict[str, object]:
    source = (ROOT / FIXTURES / "findings.py").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(source)))
    out = io.StringIO()
    assert main(["check", "-", "--select", "KL301", "--no-cache", "--output-format", "sarif", *argv], out) == 1
    loc = json.loads(out.getvalue())["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    return loc["artifactLocation"]  # type: ignore[no-any-return]


def test_sarif_stdin_without_a_filename_has_no_srcroot_base(monkeypatch: pytest.MonkeyPatch) -> None:
    artifact = _sarif_from_stdin(monkeypatch)
    assert "uriBaseId" not in artifact and artifact["uri"] == "%3Cstdin%3E"
    assert artifact["description"] == {"text": "source read from standard input, not a file"}


def test_sarif_stdin_filename_is_repo_relative(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = {"uri": f"{FIXTURES}/findings.py", "uriBaseId": "%SRCROOT%"}
    assert _sarif_from_stdin(monkeypatch, "--stdin-filename", f"{FIXTURES}/findings.py") == expected
    monkeypatch.chdir(ROOT / "tests")   # from a subdirectory the name is relative to it; the URI to the root
    assert _sarif_from_stdin(monkeypatch, "--stdin-filename", "report/fixtures/findings.py") == expected
