"""Each rule's documented VALID/INVALID examples are its tests: markers must match exactly."""
from __future__ import annotations

import inspect

import pytest

from conftest import expected_markers
from kernlint.pipeline.api import Settings, lint_source
from kernlint.pipeline.registry import all_rules
from kernlint.pipeline.rule import REQUIRED_SECTIONS

CASES = [(rule, kind, i, case) for rule in all_rules()
         for kind, cases in (("VALID", rule.VALID), ("INVALID", rule.INVALID)) for i, case in enumerate(cases)]


@pytest.mark.parametrize("rule,kind,index,case", CASES, ids=[f"{r.CODE}-{k}-{i}" for r, k, i, _ in CASES])
def test_rule_case(rule, kind, index, case, tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings = Settings(targets=case.targets, select=(rule.CODE,))
    if case.files:  # extra files (a config store) live next to the case; its directory is the root
        for name, text in case.files:
            (tmp_path / name).write_text(text, encoding="utf-8")
        settings = Settings(targets=case.targets, select=(rule.CODE,), root=str(tmp_path))
    result = lint_source(case.source, "case.py", settings)
    found = {(d.span.start.line, d.code) for d in result.diagnostics}
    expected = {m for m in expected_markers(case.source) if m[1] == rule.CODE}
    assert found == expected
    if kind == "INVALID":
        assert expected, "an INVALID case must mark at least one line"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.CODE)
def test_rule_is_documented(rule) -> None:  # type: ignore[no-untyped-def]
    doc = inspect.cleandoc(rule.__doc__ or "")
    positions = [doc.find(section) for section in REQUIRED_SECTIONS]
    assert all(p >= 0 for p in positions), f"{rule.__name__} docstring misses a section"
    assert positions == sorted(positions), "sections out of order"
    assert rule.VALID and rule.INVALID


def test_codes_are_unique_and_well_formed() -> None:
    codes = [r.CODE for r in all_rules()]
    assert len(codes) == len(set(codes))
    assert all(len(c) == 5 and c.startswith("KL") and c[2:].isdigit() for c in codes)
    for code in ("KL001", "KL101", "KL201", "KL202", "KL301", "KL302", "KL303", "KL401"):
        assert code in codes


def test_kl303_names_the_expression_and_every_kernel_once() -> None:
    """An unnamed operand is printed as the code that made it, not as an internal value number, and a
    product inlined from one helper into two kernels is one finding naming both."""
    from rules.int32_offset_overflow import _HELPER

    from kernlint.pipeline.api import Settings, lint_source
    found = [d for d in lint_source(_HELPER, "helper.py", Settings()).files[0].diagnostics if d.code == "KL303"]
    assert len(found) == 1
    assert "`tl.program_id(1) * stride`" in found[0].message
    assert "`scale_rows` and 1 more kernel " in found[0].message
    assert "%" not in found[0].message.split("`")[1]
