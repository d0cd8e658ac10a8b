"""The rules' example configs agree with what ptxas/Triton really do (benchmarks/truth/rules-triton-3.9.json,
recorded with `record_truth.py --specs benchmarks/truth_specs_rules.py --caps 90,100`)."""
from __future__ import annotations

import json

from conftest import ROOT
from kernlint.analysis.occupancy import compute_occupancy
from kernlint.hardware.specs import SPECS

TRUTH = json.loads((ROOT / "benchmarks/truth/rules-triton-3.9.json").read_text())["records"]


def _record(kernel: str, cap: int, **config: int) -> dict:  # type: ignore[type-arg]
    return next(r for r in TRUTH if r["kernel"] == kernel and r["cap"] == cap
                and all(r["config"][k] == v for k, v in config.items()))


def test_kl202_invalid_row_kernel_is_really_register_limited_below_25_percent() -> None:
    r = _record("scale_rows", 90, BLOCK=65536, num_warps=8)
    occ = compute_occupancy(SPECS["h100"], 8, r["regs"], r["shared"])
    assert r["spill_store"] == 0 and occ.limiter == "registers" and occ.occupancy < 0.25
    valid = _record("scale_rows", 90, BLOCK=1024, num_warps=4)
    assert compute_occupancy(SPECS["h100"], 4, valid["regs"], valid["shared"]).occupancy >= 0.25


def test_kl201_cases_match_real_spills() -> None:
    assert _record("matmul_kernel", 90, BLOCK_M=256, BLOCK_N=256, num_warps=4)["spill_store"] > 0   # INVALID
    assert _record("matmul_kernel", 90, BLOCK_M=128, BLOCK_N=256, num_warps=8)["spill_store"] == 0  # VALID


def test_kl101_and_kl401_cases_match_real_shared_memory() -> None:
    limit = SPECS["h100"].smem_per_cta_optin
    assert _record("matmul_kernel", 90, BLOCK_M=256, BLOCK_N=256, num_warps=8, num_stages=4)["shared"] > limit
    assert _record("matmul_kernel", 90, BLOCK_M=128, BLOCK_N=128, num_warps=8, num_stages=4)["shared"] <= limit
