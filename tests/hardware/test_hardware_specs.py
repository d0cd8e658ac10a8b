"""The per-GPU records of kernlint/hardware/specs.py: the numbers the time model reads agree with what the
records show, and each is of the kind its field says."""
from __future__ import annotations

import re

import pytest

from kernlint.hardware.specs import SPECS, GpuSpec


@pytest.mark.parametrize("spec", SPECS.values(), ids=list(SPECS))
def test_the_shown_bandwidth_is_the_number_the_model_reads(spec: GpuSpec) -> None:
    """`memory` ("80 GB HBM3, 3.35 TB/s") is for display; `dram_gbps` rounds to what it shows."""
    m = re.search(r"([\d.]+)\s*(TB|GB)/s", spec.memory)
    assert m is not None
    shown = float(m.group(1)) * (1000 if m.group(2) == "TB" else 1)
    decimals = len(m.group(1).partition(".")[2])
    scale = 1000 if m.group(2) == "TB" else 1
    assert round(spec.dram_gbps / scale, decimals) * scale == pytest.approx(shown)


@pytest.mark.parametrize("spec", SPECS.values(), ids=list(SPECS))
def test_time_model_numbers_are_plausible(spec: GpuSpec) -> None:
    tc = spec.tensor_tflops
    # dense FP32-accumulate peaks: TF32 runs at half the FP16 rate and FP8 (where there is one) at twice it
    # on every architecture in the table (data sheets round: B200's TF32 is given as 1.1 PFLOPS, not 1.125)
    assert tc.tf32 == pytest.approx(tc.fp16 / 2, rel=0.03)
    assert tc.fp8 == 0.0 or tc.fp8 == pytest.approx(2 * tc.fp16, rel=0.03)
    assert 1.0 < spec.boost_clock_ghz < 3.0
    assert 30 <= spec.l2_mb <= 128
    assert 500 <= spec.dram_gbps <= 10000


def test_the_time_model_reads_the_record() -> None:
    """Doubling the record's clock halves the issue and L1 terms of `recommend`'s time model; the DRAM rate
    it uses is the record's (the model kept a second table by capability and parsed `memory` before)."""
    import dataclasses
    from pathlib import Path

    from kernlint.analysis.configs import ConfigPoint
    from kernlint.analysis.estimate import estimate
    from kernlint.pipeline.api import Settings, lint_paths
    from kernlint.frontend.host_facts import read_kernel_source
    from kernlint.recommend.core import bucket_env
    from kernlint.recommend.model import dram_bytes_per_s, kernel_work, score

    root = Path(__file__).resolve().parents[2]
    res = lint_paths([str(root / "examples/rmsnorm.py")], Settings(targets=("h200",)))
    k = next(k for f in res.files for k in f.kernels if k.jit.name == "rmsnorm_fwd_kernel")
    src = read_kernel_source(k.jit.path, k.jit.name)
    env = {**bucket_env(k, src, {"n_rows": 4096, "n_cols": 8192}), "BLOCK_SIZE": 1024}
    work = kernel_work(k.ir, src, env, 1, 4)
    spec = SPECS["h200"]
    fast = dataclasses.replace(spec, boost_clock_ghz=2 * spec.boost_clock_ghz)
    est = estimate(k.ir, ConfigPoint({"BLOCK_SIZE": 1024}, 4, 1, "cli", k.jit.line), spec)
    base, quick = score(est, work, spec, 4096).terms, score(est, work, fast, 4096).terms
    assert base["issue"] > 0 and base["l1"] > 0
    assert quick["issue"] == pytest.approx(base["issue"] / 2) and quick["l1"] == pytest.approx(base["l1"] / 2)
    assert quick["memory"] == pytest.approx(base["memory"])
    assert dram_bytes_per_s(spec) == spec.dram_gbps * 1e9
