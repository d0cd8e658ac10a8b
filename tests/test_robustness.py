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
