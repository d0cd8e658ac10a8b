"""The shim's check of an in-space entry against the autotuner's configs as they are at run time."""
from __future__ import annotations

from types import SimpleNamespace

from kernlint.shim.author_space import outside_authors


def _configs(*kwargs: dict[str, int]) -> list[SimpleNamespace]:
    return [SimpleNamespace(kwargs=k) for k in kwargs]   # what the shim reads of a triton.Config


CAUSAL = _configs({"BLOCK_M": 64, "BLOCK_N": 64}, {"BLOCK_M": 64, "BLOCK_N": 128}, {"BLOCK_M": 128, "BLOCK_N": 128})


def test_values_and_relations_of_the_authors_configs_are_inside() -> None:
    assert outside_authors({"BLOCK_M": 64, "BLOCK_N": 128}, CAUSAL) is None
    assert outside_authors({"BLOCK_M": 128, "BLOCK_N": 64}, _configs(*[{"BLOCK_M": 128, "BLOCK_N": 64}])) is None


def test_a_value_the_author_dropped_is_outside() -> None:
    why = outside_authors({"BLOCK_M": 32, "BLOCK_N": 128}, CAUSAL)
    assert why == "BLOCK_M=32 is not among the autotuner's values (64/128)"


def test_a_relation_every_author_config_keeps_is_enforced() -> None:
    # every config has BLOCK_N >= BLOCK_M (causal attention's assumption); 128/64 uses only the author's values
    why = outside_authors({"BLOCK_M": 128, "BLOCK_N": 64}, CAUSAL)
    assert why is not None and "BLOCK_N >= BLOCK_M" in why


def test_keys_not_set_by_every_config_and_no_configs_are_not_compared() -> None:
    assert outside_authors({"BLOCK": 512, "GROUP": 4}, _configs({"BLOCK": 512}, {"BLOCK": 512, "GROUP": 8})) is None
    assert outside_authors({"BLOCK": 512}, []) is None
