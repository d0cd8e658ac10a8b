"""Element-by-element addresses recomputed rather than held past an occupancy step (the register pass
"addresses recomputed for occupancy"; GpuSpec.same_occupancy_registers).

Truth: tests/truth/strided_loads.py::k_strided compiled with Triton 3.9 (ptxas 12.9, sm_90), 4 warps, num_stages 3,
fp16 pointers, BLOCK 512 / 1024 / 2048 / 4096 (4 / 8 / 16 / 32 elements a thread): 16 / 21 / 28 / 32 registers.
Holding one 64-bit address per element asks 17 / 25 / 41 / 73.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from kernlint.analysis.estimate import estimate
from kernlint.hardware.specs import resolve_targets
from kernlint.pipeline.api import Settings, lint_paths

PROBE = Path(__file__).parents[1] / "truth" / "strided_loads.py"
BLOCKS = (512, 1024, 2048, 4096)
TRUTH_SM90 = (16, 21, 28, 32)
PASS = "addresses recomputed for occupancy"


@pytest.fixture(scope="module")
def kernel() -> object:
    configs = tuple({"BLOCK": b, "num_warps": 4, "num_stages": 3} for b in BLOCKS)
    result = lint_paths([str(PROBE)], Settings(targets=("h100",), cli_configs=configs, arg_types={"*": "*fp16"}))
    return next(k for f in result.files for k in f.kernels if k.jit.name == "k_strided")


def _regs(kernel: object, disabled: frozenset[str] = frozenset()) -> list[int]:
    spec = resolve_targets(("h100",))[0]
    points = sorted((p for p in kernel.points if p.origin == "cli"),  # type: ignore[attr-defined]
                    key=lambda p: p.constexprs["BLOCK"])
    return [estimate(kernel.ir, p, spec, disabled=disabled).registers.allocated  # type: ignore[attr-defined]
            for p in points]


def test_strided_addresses_stop_at_an_occupancy_step(kernel: object) -> None:
    with_pass, without = _regs(kernel), _regs(kernel, frozenset({PASS}))
    # 16 and 32 elements a thread: held addresses ask 41 and 73, ptxas takes 28 and 32
    assert without[2] >= 40 and without[3] >= 70, without
    for i in (2, 3):
        assert abs(with_pass[i] - TRUTH_SM90[i]) / TRUTH_SM90[i] <= 0.25, with_pass
    # where the addresses fit under the step the rest reaches, nothing changes
    assert with_pass[:2] == without[:2]


def test_occupancy_steps_of_a_128_thread_cta() -> None:
    spec = resolve_targets(("h100",))[0]
    # 65,536 registers; 16 CTAs of 128 threads at <= 32 registers, 12 at <= 40, 10 at <= 48, 8 at <= 64
    assert [spec.same_occupancy_registers(128, r) for r in (20, 32, 33, 40, 41, 64, 65)] == [
        32, 32, 65536 // (12 * 128) // 8 * 8, 40, 65536 // (10 * 128) // 8 * 8, 64, 65536 // (7 * 128) // 8 * 8]
    assert spec.same_occupancy_registers(128, 255) == 65536 // (2 * 128) - 1   # the 255-register ceiling
