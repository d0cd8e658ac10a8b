"""The table of model constants (docs/model-constants.md, written by benchmarks/model_constants.py): every
constant a pass declares has its unit, provenance and gating test, every gate names a test that exists, and
the committed table is the generator's output."""
from __future__ import annotations

import ast

import pytest

from benchmarks.model_constants import render, rows
from conftest import ROOT

CONSTANTS = [(p.name, c) for _, p, c in rows()]


def test_there_are_constants_of_both_models() -> None:
    assert {model for model, _, _ in rows()} == {"registers", "shared memory"}


@pytest.mark.parametrize("pass_name, constant", CONSTANTS, ids=[f"{n}:{c.name}" for n, c in CONSTANTS])
def test_every_constant_has_unit_provenance_and_gate(pass_name: str, constant) -> None:  # type: ignore[no-untyped-def]
    assert constant.unit.strip(), (pass_name, constant.name, "no unit")
    assert constant.provenance.strip(), (pass_name, constant.name, "no provenance")
    assert constant.gate.strip(), (pass_name, constant.name, "no gating test")


def _test_functions(path: str) -> set[str]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


@pytest.mark.parametrize("pass_name, constant", CONSTANTS, ids=[f"{n}:{c.name}" for n, c in CONSTANTS])
def test_every_gate_names_an_existing_test(pass_name: str, constant) -> None:  # type: ignore[no-untyped-def]
    path, sep, function = constant.gate.partition("::")
    assert sep and path.startswith("tests/") and path.endswith(".py"), (constant.name, constant.gate)
    assert function.startswith("test_") and "::" not in function, (constant.name, constant.gate)
    assert (ROOT / path).is_file(), (constant.name, f"{path} does not exist")
    assert function.split("[")[0] in _test_functions(path), (constant.name, f"{path} defines no {function}")


def test_the_committed_table_is_the_generators_output() -> None:
    committed = (ROOT / "docs" / "model-constants.md").read_text(encoding="utf-8")
    assert committed == render(), ("docs/model-constants.md is stale: run "
                                   "python benchmarks/model_constants.py --markdown docs/model-constants.md")
