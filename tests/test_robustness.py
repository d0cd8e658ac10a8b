"""Hostile inputs end in bounded time with a clear result: the static evaluator refuses values it would take
minutes or gigabytes to compute (it reports them as unknown instead)."""
from __future__ import annotations

import time

import libcst as cst
import pytest

from kernlint.frontend.kernels import collect_module_facts
from kernlint.ir.symbolic import MAX_INT_BITS, MAX_SEQUENCE, Unknown

HOSTILE = [
    "9 ** 9 ** 9",
    "2 ** 2 ** 40",
    "1 << 10 ** 10",
    "(1 << 4000) * (1 << 4000)",
    '"a" * 10 ** 12',
    "[0] * 10 ** 12",
    "10 ** 12 * [0]",
    "list(range(10 ** 12))",
    "[(a, b) for a in range(60000) for b in range(60000)]",
    "[x for a in range(4096) for b in range(4096) for x in range(4096) if False]",
    '"%0999999999d" % 1',
    "0x" + "f" * 200_000,
]


def _constants(source: str) -> dict[str, object]:
    facts, _ = collect_module_facts("m.py", cst.parse_module(source), text=source)
    return dict(facts.constants)


@pytest.mark.parametrize("expr", HOSTILE)
def test_hostile_constant_is_unknown_and_fast(expr: str) -> None:
    start = time.perf_counter()
    constants = _constants(f"B = {expr}\nC = 3\n")
    elapsed = time.perf_counter() - start
    assert elapsed < 5, f"{expr[:40]}: {elapsed:.1f} s"
    assert "B" not in constants or isinstance(constants["B"], Unknown)
    assert constants["C"] == 3   # the rest of the file is still evaluated


@pytest.mark.parametrize(("expr", "value"), [
    ("2 ** 64 - 1", 2 ** 64 - 1),                 # 64-bit masks are kept
    ("1 << 62", 1 << 62),
    ('"ab" * 3', "ababab"),
    ("[16, 32] * 2", [16, 32, 16, 32]),
    ("len(list(range(1000)))", 1000),
    (f"2 ** {MAX_INT_BITS - 1}", 2 ** (MAX_INT_BITS - 1)),   # just under the bound: still computed
])
def test_ordinary_constants_still_evaluate(expr: str, value: object) -> None:
    assert _constants(f"B = {expr}\n")["B"] == value


def test_sequence_bound_is_exact() -> None:
    assert _constants(f"B = [0] * {MAX_SEQUENCE}\n")["B"] == [0] * MAX_SEQUENCE
    assert "B" not in _constants(f"B = [0] * {MAX_SEQUENCE + 1}\n") or isinstance(
        _constants(f"B = [0] * {MAX_SEQUENCE + 1}\n")["B"], Unknown)


# -- issue 30: `match` statements and code nested as deep as CPython accepts ------------------------

KERNEL = """import triton
import triton.language as tl


@triton.jit
def k(X, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    y = {expr}
    tl.store(X + tl.arange(0, N), y)


def launch(x):
    k[(1,)](x, N=128)
"""


def _lint(src: str):  # type: ignore[no-untyped-def]
    from kernlint.api import lint_source

    result = lint_source(src, "m.py")
    assert not result.internal_errors, result.internal_errors
    assert "KL000" not in {d.code for d in result.diagnostics}
    return result


def test_match_in_host_code_is_linted() -> None:
    src = KERNEL.format(expr="x") + "\n\ndef host(v):\n    match v:\n        case 1:\n            return 2\n" \
                                    "        case _:\n            return 3\n"
    result = _lint(src)
    assert result.kernel_count == 1 and not result.diagnostics


def test_match_in_a_kernel_is_kl002_at_its_line() -> None:
    src = KERNEL.format(expr="x").replace("    y = x\n", "    match N:\n        case 1:\n            y = x\n"
                                          "        case _:\n            y = x * 2\n")
    result = _lint(src)
    found = [d for d in result.diagnostics if d.code == "KL002"]
    assert result.kernel_count == 1 and len(found) == 1
    assert found[0].span.start.line == 8 and "`match` statement" in found[0].message


def test_elif_chain_of_120_branches_in_host_code() -> None:
    branches = "".join(f"    elif v == {i}:\n        return {i}\n" for i in range(1, 120))
    src = KERNEL.format(expr="x") + "\n\ndef host(v):\n    if v == 0:\n        return 0\n" + branches
    assert _lint(src).kernel_count == 1


def test_sum_of_110_terms_in_host_code_and_kernel() -> None:
    src = KERNEL.format(expr=" + ".join(["x"] * 110)) + "\n\ndef f(a):\n    return " + "+".join(["a"] * 110) + "\n"
    result = _lint(src)
    assert result.kernel_count == 1 and "KL001" not in {d.code for d in result.diagnostics}


def test_150_nested_abs_calls_in_a_kernel() -> None:
    result = _lint(KERNEL.format(expr="tl.abs(" * 150 + "x" + ")" * 150))
    assert result.kernel_count == 1 and "KL001" not in {d.code for d in result.diagnostics}


def test_elif_chain_in_a_kernel_as_deep_as_cpython_accepts() -> None:
    import ast

    body = "".join(f"    elif N == {i}:\n        y = x + {i}\n" for i in range(1, 2984))
    src = KERNEL.format(expr="x").replace("    y = x\n", "    if N == 0:\n        y = x\n" + body + "    else:\n        y = x\n")
    ast.parse(src)
    result = _lint(src)
    assert result.kernel_count == 1 and "KL001" not in {d.code for d in result.diagnostics}
