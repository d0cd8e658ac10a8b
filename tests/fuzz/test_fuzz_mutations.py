"""Mutated example files (deleted lines, swapped tokens, truncation, odd unicode, invalid UTF-8, CRLF,
tabs, very long lines, deep nesting): every failure is a diagnostic, never an exception or KL000."""
from __future__ import annotations

import os

from fuzz_grammar import DataChooser
from fuzz_invariants import lint_checked
from fuzz_mutations import EXAMPLES, MUTATIONS, example_texts, mutate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernlint.pipeline.api import Settings

SCALE = float(os.environ.get("KERNLINT_FUZZ_EXAMPLES", "1"))
TEXTS = example_texts()
SETTINGS = Settings(targets=("h100", "b200", "a100"))


@settings(max_examples=int(200 * SCALE), deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_mutated_examples_never_crash(data: st.DataObject) -> None:
    ch = DataChooser(data)
    name, kinds, mutated = mutate(ch, TEXTS)
    # Determinism on a quarter of the cases keeps the CI share small; the benchmark checks them all.
    _, problems = lint_checked(mutated, SETTINGS, path=name, twice=ch.flag(0.25))
    assert not problems, f"{name} after {kinds}:\n" + "\n".join(problems)


def test_every_mutation_applies_to_every_example() -> None:
    """Each mutation runs once on each example (so none silently stops applying as examples change)."""
    import random

    from fuzz_grammar import RandomChooser

    assert len(EXAMPLES) >= 5
    ch = RandomChooser(random.Random(7))
    for ex, text in TEXTS.items():
        for kind, fn in MUTATIONS.items():
            _, problems = lint_checked(fn(ch, text), SETTINGS, path=ex, twice=False)
            assert not problems, f"{ex} after {kind}:\n" + "\n".join(problems)


def test_hostile_inputs_end_in_bounded_time() -> None:
    """Every kind of the `hostile` mutation (huge constants, match statements, long elif and operator chains):
    no crash and at most 60 s a file on this 2-core machine (each used to hang, explode or crash)."""
    import random
    import time

    from fuzz_grammar import RandomChooser

    text = TEXTS[sorted(TEXTS)[0]]
    for seed in range(12):
        mutated = MUTATIONS["hostile"](RandomChooser(random.Random(seed)), text)
        start = time.perf_counter()
        _, problems = lint_checked(mutated, SETTINGS, path="hostile.py", twice=False)
        assert not problems, f"seed {seed}:\n" + "\n".join(problems)
        assert time.perf_counter() - start < 60, f"seed {seed}: {time.perf_counter() - start:.0f} s"
