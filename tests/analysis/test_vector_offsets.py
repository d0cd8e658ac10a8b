"""int64 offset tiles of vectorised accesses (kernlint/analysis/register_access.py: vectorised_offset_costs)
against ptxas for tests/truth/vector_offsets.py (Triton 3.9.0, num_stages 1; the same counts on sm_80, sm_90
and sm_100), recorded here and re-measured live when Triton is installed. Charged 2 registers per 4 int64
offsets, kernlint said 45 / 76 / 144 / 76 for these four configs."""
from __future__ import annotations

from typing import Any

import pytest
from conftest import ROOT, import_probe

from kernlint.pipeline.api import Settings, lint_paths

FILE = ROOT / "tests/truth/vector_offsets.py"
ARGS = {"X": "*fp16", "S": "*fp16", "Y": "*fp16", "M": "i32", "N": "i32"}
# (BLOCK, num_warps) → ptxas registers; fp16 elements per thread: 32, 64, 128, 64
PTXAS = {(64, 4): 32, (128, 8): 59, (128, 4): 111, (64, 2): 56}


@pytest.mark.parametrize("target", ["a100", "h100", "b200"])
def test_one_offset_per_vector(target: str) -> None:
    cfgs = tuple({"BLOCK": b, "num_warps": w, "num_stages": 1} for b, w in PTXAS)
    res = lint_paths([str(FILE)], Settings(targets=(target,), cli_configs=cfgs, arg_types=ARGS))
    est = {(e.config.constexprs["BLOCK"], e.config.num_warps): e.registers for f in res.files for k in f.kernels
           for e in k.estimates if e.config.origin == "cli"}
    for key, regs in PTXAS.items():
        assert est[key].spill_bytes == 0
        assert abs(est[key].allocated - regs) <= 0.2 * regs, (target, key, est[key].allocated, regs)


def test_recorded_ptxas_counts_are_real() -> None:
    pytest.importorskip("triton", reason="needs the kernlint[triton] extra")
    from kernlint.calibrate.triton_compile import compile_jit, unwrap

    mod: Any = import_probe(FILE)
    for (block, warps), regs in list(PTXAS.items())[:2]:
        out = compile_jit(unwrap(mod.scale_block), ARGS, {}, {"BLOCK": block, "num_warps": warps, "num_stages": 1},
                          90, 600)
        assert out.get("error") is None, out.get("error")
        assert abs(out["regs"] - regs) <= 2, (block, warps, out["regs"])
