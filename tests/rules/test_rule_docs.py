"""docs/rules.md is generated from the rule docstrings and must not go stale."""
from __future__ import annotations

import io

from conftest import ROOT

from kernlint.cli import main
from kernlint.pipeline.registry import all_rules
from kernlint.report.rule_docs import rule_doc

DOCS = ROOT / "docs" / "rules.md"
REGENERATE = "kernlint rule --all --format markdown > docs/rules.md"


def _generated() -> str:
    out = io.StringIO()
    assert main(["rule", "--all", "--format", "markdown"], out) == 0
    return out.getvalue()


def test_docs_rules_md_is_up_to_date() -> None:
    assert DOCS.read_text(encoding="utf-8") == _generated(), f"docs/rules.md is out of date; run `{REGENERATE}`"


def test_every_rule_is_documented_with_sections_and_examples() -> None:
    text = _generated()
    for rule in all_rules():
        doc = rule_doc(rule)
        assert f"## {rule.CODE}: {rule.name()}" in text
        assert doc.summary in text
        for title, _ in doc.sections:
            assert f"### {title}" in text
    # the first INVALID example is shown with its marker turned into a plain comment
    assert "BLOCK=1000" in text and "# expect:" not in text


def test_single_rule_markdown_and_text() -> None:
    out = io.StringIO()
    assert main(["rule", "KL303", "--format", "markdown"], out) == 0
    assert out.getvalue().startswith("# KL303: Int32OffsetOverflow\n")
    assert "## Why is this bad?" in out.getvalue() and "```python" in out.getvalue()
