"""A loop whose constexpr bounds give one iteration is folded before pipelining (MLIR scf.for
canonicalisation): its dot operands get one buffer each. Expected bytes: Triton 3.9 compiles of
tests/truth/one_trip_loop.py (num_warps=4, num_stages=3, BT=BV=64, fp16 operands of 64×64 = 8,192 B each)."""
from __future__ import annotations

import pytest

from kernlint.pipeline.api import Settings, lint_paths

from conftest import ROOT

ARGS = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"}
# (V, target, metadata.shared): V = 64 → one trip; V = 128 → two trips, pipelined as usual
TRUTH = [
    (64, "a100", 16384), (64, "h100", 16384), (64, "b200", 16392),   # 2 × 8,192 (+ one 8-B barrier)
    (128, "a100", 32768), (128, "h100", 49152), (128, "b200", 49168),  # (stages − 1) / stages × 16,384
]


@pytest.mark.parametrize("v,target,shared", TRUTH)
def test_single_trip_loop_is_not_multi_buffered(v: int, target: str, shared: int) -> None:
    cfg = {"V": v, "BV": 64, "BT": 64, "num_warps": 4, "num_stages": 3}
    res = lint_paths([str(ROOT / "tests/truth/one_trip_loop.py")],
                     Settings(targets=(target,), cli_configs=(cfg,), arg_types=ARGS))
    est = next(e for e in res.files[0].kernels[0].estimates if e.config.origin == "cli")
    assert est.smem.total == shared
