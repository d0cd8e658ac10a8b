"""Golden files for every --output-format, plus the format rules each consumer depends on."""
from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import ROOT, expected_markers
from snapshot import assert_snapshot

from kernlint.pipeline.api import LintResult, lint_paths, Settings
from kernlint.cli import main
from kernlint.core.diagnostic import Confidence, Diagnostic, Severity, Span
from kernlint.report import FORMATS, ReportContext, render
from kernlint.report.github import annotation

FIXTURES = "tests/report/fixtures"          # repo-relative, so paths in snapshots are stable
SELECT = "KL301,KL303,KL402"                # exact rules: findings do not move with the estimate model;
                                            # one per severity: KL301 error, KL402 warning, KL303 info
EXT = {"full": "txt", "concise": "txt", "json": "json", "json-lines": "jsonl", "github": "txt", "sarif": "sarif",
       "gitlab": "json", "rdjson": "json", "junit": "xml", "markdown": "md"}


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def check(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["check", FIXTURES, "--select", SELECT, "--no-color", *argv], out)
    return code, out.getvalue()


def _without_estimates(text: str) -> str:
    # The json format carries every estimate; those numbers belong to the model, not to this snapshot.
    doc = json.loads(text)
    for k in doc["kernels"]:
        k["estimates"] = f"<{len(k['estimates'])} estimates>"
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _sarif_for_snapshot(text: str) -> str:
    # `rules[]` holds every registered rule; keep only the ones the fixture hits so that adding or
    # re-documenting another rule does not churn this golden file. ruleIndex is checked, then dropped.
    doc = json.loads(text)
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    for r in run["results"]:
        assert rules[r.pop("ruleIndex")]["id"] == r["ruleId"]
    used = {r["ruleId"] for r in run["results"]}
    run["tool"]["driver"]["rules"] = [r for r in rules if r["id"] in used]
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


NORMALISE = {"json": _without_estimates, "sarif": _sarif_for_snapshot}


def test_fixture_findings_are_the_marked_ones() -> None:
    result = lint_paths([FIXTURES], Settings(select=tuple(SELECT.split(","))))
    text = (ROOT / FIXTURES / "findings.py").read_text(encoding="utf-8")
    assert {(d.span.start.line, d.code) for d in result.diagnostics} == expected_markers(text)


@pytest.mark.parametrize("fmt", FORMATS)
def test_golden(fmt: str) -> None:
    code, out = check("--output-format", fmt)
    assert code == 1
    assert_snapshot(f"report.{fmt}.{EXT[fmt]}", NORMALISE.get(fmt, str)(out))


def test_every_format_has_a_snapshot_extension() -> None:
    assert set(EXT) == set(FORMATS)


def test_output_file(tmp_path: Path) -> None:
    target = tmp_path / "kernlint.sarif"
    code, out = check("--output-format", "sarif", "--output-file", str(target))
    assert code == 1 and out == ""
    assert json.loads(target.read_text(encoding="utf-8"))["version"] == "2.1.0"
    assert main(["check", FIXTURES, "-o", str(tmp_path / "missing" / "x.txt")], io.StringIO()) == 2


def test_json_lines_one_diagnostic_per_line() -> None:
    _, out = check("--output-format", "json-lines")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["code"], r["location"]["row"]) for r in rows] == [("KL303", 11), ("KL303", 12), ("KL301", 16),
                                                                      ("KL402", 22)]


def _diag(message: str, start: tuple[int, int], end: tuple[int, int], path: str = "k.py",
          severity: Severity = Severity.ERROR) -> Diagnostic:
    return Diagnostic("KL101", Span.at(path, start[0], start[1], end[0], end[1]), message, severity,
                      Confidence.EXACT, "SharedMemoryOverflow")


def test_github_annotation_escaping_and_multiline_ranges() -> None:
    d = _diag("100% over\r\nlimit: 1,2", (3, 4), (3, 9))
    assert annotation(d, "dir,x/a:b.py") == (
        "::error file=dir%2Cx/a%3Ab.py,line=3,col=5,endLine=3,endColumn=10,"
        "title=KL101 (SharedMemoryOverflow)::100%25 over%0D%0Alimit: 1,2")
    multi = annotation(_diag("m", (3, 4), (5, 2), severity=Severity.INFO), "k.py")
    assert multi == "::notice file=k.py,line=3,endLine=5,title=KL101 (SharedMemoryOverflow)::m"


def test_rdjson_columns_are_utf8_bytes() -> None:
    _, out = check("--output-format", "rdjson")
    diags = json.loads(out)["diagnostics"]
    line12 = (ROOT / FIXTURES / "findings.py").read_text(encoding="utf-8").splitlines()[11]
    span = next(d for d in diags if d["location"]["range"]["start"]["line"] == 12)["location"]["range"]
    # the finding marks `row * stride`, after `ŷ` (2 UTF-8 bytes): columns count bytes, 1-based, end exclusive
    before = line12[:line12.index("row * stride")]
    assert span["start"] == {"line": 12, "column": len(before.encode("utf-8")) + 1}
    assert span["end"] == {"line": 12, "column": len(before.encode("utf-8")) + len("row * stride") + 1}
    assert len(before.encode("utf-8")) > len(before)
    assert all("suggestions" not in d for d in diags)  # no rule carries a fix yet


def test_gitlab_required_fields_and_distinct_fingerprints() -> None:
    _, out = check("--output-format", "gitlab")
    issues = json.loads(out)
    assert len(issues) == 4
    for issue in issues:
        assert {"description", "check_name", "fingerprint", "severity", "location"} <= issue.keys()
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert issue["location"]["path"] == f"{FIXTURES}/findings.py"
    # the two KL303 findings share path, code and message; GitLab would merge equal fingerprints
    assert len({i["fingerprint"] for i in issues}) == 4
    assert check("--output-format", "gitlab")[1] == out  # stable across runs


def test_junit_counts_and_passing_files() -> None:
    _, out = check("--output-format", "junit")
    root = ET.fromstring(out)
    # 4 findings + 1 clean file; the error and the warning fail, the two infos pass with their text as output
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("5", "2", "0")
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {f"{FIXTURES}/clean.py", f"{FIXTURES}/findings.py"}
    clean = suites[f"{FIXTURES}/clean.py"].findall("testcase")
    assert [c.get("name") for c in clean] == ["kernlint check"] and clean[0].find("failure") is None
    cases = suites[f"{FIXTURES}/findings.py"].findall("testcase")
    failed = {c.get("name").split()[0]: c.find("failure") for c in cases if c.find("failure") is not None}
    assert sorted(failed) == ["KL301", "KL402"] and all(f.get("message") for f in failed.values())
    assert failed["KL301"].get("type") == "KL301 (error)" and failed["KL402"].get("type") == "KL402 (warning)"
    infos = [c for c in cases if c.find("failure") is None]
    assert [c.get("name").split()[0] for c in infos] == ["KL303", "KL303"]
    assert all("KL303" in (c.findtext("system-out") or "") for c in infos)


def test_markdown_summary_counts_and_escapes_pipes() -> None:
    _, out = check("--output-format", "markdown")
    assert "**4 finding(s)** (1 error, 1 warning, 2 info)" in out
    assert "| `KL301` | NonPowerOfTwoBlock | 🔴 error | 1 |" in out
    assert "| `KL402` | DuplicateAutotuneConfig | 🟡 warning | 1 |" in out
    assert "| `KL303` | Int32OffsetOverflow | 🔵 info | 2 |" in out
    buf = io.StringIO()
    result = LintResult([])
    render("markdown", result, buf, ReportContext(root=ROOT))
    assert "All checks passed" in buf.getvalue()
    from kernlint.report.markdown import cell

    assert cell("a | b\nc") == "a \\| b c"


def test_machine_formats_do_not_import_rich() -> None:
    # cold start budget (docs/design.md): CI formats need neither rich nor anything GPU-related
    import subprocess
    import sys

    code = ("import io, sys\nfrom kernlint.cli import main\n"
            "for f in ('github', 'sarif', 'gitlab', 'rdjson', 'junit', 'json-lines', 'markdown'):\n"
            f"    main(['check', {FIXTURES!r}, '--output-format', f], io.StringIO())\n"
            "print(sorted(m for m in ('rich', 'triton', 'torch', 'pygls') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
