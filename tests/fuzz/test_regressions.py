"""Minimal reproducers of crashes found by fuzzing and the corpus run.

Fixed ones stay as regression tests; ones whose fix belongs to another module's owner are strict
xfails with the reason, so the fix turns them into a visible XPASS failure to be promoted.
"""
from __future__ import annotations

import pytest
from fuzz_invariants import crash_violations

from kernlint.api import lint_source, lint_sources

HEAD = "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n"


@pytest.mark.parametrize("terms", [325, 1_000, 8_000, 100_000])
def test_long_operator_chain_is_a_parse_error_not_a_crash(terms: int) -> None:
    # Found by the long-line mutation: libcst's native parser segfaulted at ~8,000 terms (the whole
    # process died) and its visitors hit RecursionError (KL000) from ~300 terms. Fixed in parse.py.
    src = HEAD + "    y = " + " + ".join(["x_ptr"] * terms) + "\n    tl.store(x_ptr, y)\n"
    result = lint_source(src)
    assert not crash_violations(result)
    assert [d.code for d in result.diagnostics] == ["KL001"]


def test_deeply_nested_calls_are_a_parse_error_not_a_crash() -> None:
    # 140 nested calls stayed under the 150-bracket limit but overflowed the recursion limit.
    src = HEAD + "    y = " + "tl.abs(" * 140 + "x_ptr" + ")" * 140 + "\n    tl.store(x_ptr, y)\n"
    result = lint_source(src)
    assert not crash_violations(result) and [d.code for d in result.diagnostics] == ["KL001"]


def test_moderate_chains_are_still_linted() -> None:
    # The depth limit must not reject ordinary long expressions.
    src = HEAD + "    y = " + " + ".join(["x_ptr"] * 60) + "\n    tl.store(x_ptr, y)\n"
    result = lint_source(src)
    assert not crash_violations(result) and "KL001" not in {d.code for d in result.diagnostics}
    assert result.files[0].kernels


@pytest.mark.xfail(strict=True, raises=UnicodeEncodeError,
                   reason="api.lint_source encodes text with strict UTF-8: a lone surrogate (possible in "
                          "LSP/JSON text) raises UnicodeEncodeError out of the API instead of a KL001")
def test_lone_surrogate_in_lint_source_is_a_diagnostic() -> None:
    result = lint_source(HEAD + "    tl.store(x_ptr, 1)  # \ud800\n")
    assert not crash_violations(result)


def test_surrogate_escaped_bytes_are_a_diagnostic() -> None:
    # The same bad input as bytes (what a file on disk gives) is handled: KL001, no crash.
    result = lint_sources([("bad.py", b"x = 1  # \xed\xa0\x80\n")])
    assert not crash_violations(result) and [d.code for d in result.diagnostics] == ["KL001"]
