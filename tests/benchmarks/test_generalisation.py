"""The leave-packages-out refit of the register constants (benchmarks/generalisation.py) on the committed corpus
truth: its outputs are up to date, and the refit reproduces the shipped model where nothing changes."""
from __future__ import annotations

import json
from pathlib import Path

from benchmarks import generalisation as gen

ROOT = Path(__file__).resolve().parents[2]


def test_outputs_are_regenerated_identically() -> None:
    assert gen.main(["--check"]) == 0, "python benchmarks/generalisation.py"


def test_the_split_is_disjoint_and_covers_the_corpus_packages() -> None:
    from benchmarks import corpus_truth as ct

    a, b = set(gen.SPLIT["A"]), set(gen.SPLIT["B"])
    assert not a & b and a | b == set(ct.PROJECTS)


def test_the_shipped_constants_reproduce_the_recorded_estimates() -> None:
    # demand = ceil(s·data + a·acc + index + base + offset) with the shipped constants is the recorded demand by
    # construction of the offset; min(budget, demand) is the allocation below the budget
    row = (10.0, 4.0, 7.0, 0.6, 128, 30, False)
    s, a, b = 0.95, 1.2, 6.0
    demand = 0.95 * 10 + 1.2 * 4 + 7 + 6 + 0.6          # 27.9 -> 28
    assert gen.score([row], s, a, b)["median"] == abs(28 - 30) / 30
    res = json.loads(gen.OUT.read_text())
    for target, per in res["targets"].items():
        for half in per.values():
            if half["configs"]:
                assert half["fitted_here"]["objective"] <= half["shipped"]["objective"] + 1e-9, target
    assert demand > 27
