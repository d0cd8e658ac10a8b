"""Element-by-element addresses are rematerialised under register pressure (kernlint/analysis/registers.py).

Recorded ptxas truth (benchmarks/truth/triton-3.9.json, Triton 3.9.0, sm_90) of examples/persistent_matmul.py,
whose B offsets are `tl.where`-clamped so B is loaded one element per instruction with its own address:
configs whose held addresses alone would put the live set over 255 registers compile without spilling,
while a config over the budget even without those addresses still spills.
"""
from __future__ import annotations

import json

from conftest import ROOT


def _pairs(configs: list[tuple[int, int, int, int, int]]):  # type: ignore[no-untyped-def]
    from benchmarks import accuracy

    records = [r for r in json.loads((ROOT / "benchmarks/truth/triton-3.9.json").read_text())["records"]
               if r["kernel"] == "persistent_matmul_kernel" and r["cap"] == 90
               and tuple(r["config"][k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"))
               in configs]
    assert len(records) == len(configs)
    return accuracy.estimate_records(records)


def test_addresses_are_recomputed_instead_of_spilled() -> None:
    # (BM, BN, BK, warps, stages): ptxas 245 and 241 registers, no spill; the held addresses (2 per B element,
    # 64 B elements per thread: 128 registers) put the live set at 261. (128x256x64 w8, ptxas 228 without
    # spilling, is still predicted to spill 28 B: what remains without the addresses is 262.)
    for record, est in _pairs([(64, 128, 64, 4, 3), (64, 128, 64, 4, 4)]):
        assert not record["spill_store"]
        assert est.registers.demand <= est.registers.budget, (record["config"], est.registers)
        assert abs(est.registers.allocated - record["regs"]) <= 0.2 * record["regs"]


def test_a_live_set_over_budget_without_addresses_still_spills() -> None:
    # 128x256x64 with 4 warps: a 256-word fp32 accumulator per thread alone exceeds 255; ptxas spills 2428 B
    [(record, est)] = _pairs([(128, 256, 64, 4, 3)])
    assert record["spill_store"] > 0
    assert est.registers.demand > est.registers.budget and est.registers.spill_bytes > 0
