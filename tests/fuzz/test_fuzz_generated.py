"""Grammar-generated Triton kernels: no crash, finite non-negative estimates, deterministic results,
shared memory non-decreasing in num_stages and in each block size.

`KERNLINT_FUZZ_EXAMPLES` scales the case counts (CI default keeps this file around 30 s on 2 cores);
`benchmarks/fuzz.py` runs the same grammar 10,000+ times with a fixed seed.
"""
from __future__ import annotations

import os

from fuzz_grammar import DataChooser, bump, generate_kernel
from fuzz_invariants import lint_checked, monotonic_violations
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernlint.pipeline.api import Settings

SCALE = float(os.environ.get("KERNLINT_FUZZ_EXAMPLES", "1"))
# derandomize: CI sees the same cases every run (no flaky reds); the benchmark explores new seeds.
FUZZ = settings(max_examples=int(150 * SCALE), deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(st.data())
def test_generated_kernels_lint_cleanly(data: st.DataObject) -> None:
    gk = generate_kernel(DataChooser(data))
    s = Settings(targets=gk.targets, cli_configs=(gk.config,), arg_types={"*": gk.pointee})
    result, problems = lint_checked(gk.source, s)
    assert not problems, "\n".join(problems) + "\n" + gk.source
    # the generated kernel is found and analysed under the --config point on every target
    kernels = [k for f in result.files for k in f.kernels if k.jit.name == gk.name]
    assert kernels and any(e.config.origin == "cli" for e in kernels[0].estimates)


@settings(FUZZ, max_examples=int(100 * SCALE))
@given(st.data())
def test_shared_memory_is_monotonic(data: st.DataObject) -> None:
    ch = DataChooser(data)
    gk = generate_kernel(ch)
    knob = ch.choice(gk.knobs)
    bigger = bump(gk.config, knob)
    if bigger is None:
        return
    s = Settings(targets=gk.targets, arg_types={"*": gk.pointee})
    problems = monotonic_violations(gk.source, gk.name, gk.config, bigger, knob, s)
    assert not problems, "\n".join(problems) + "\n" + gk.source
