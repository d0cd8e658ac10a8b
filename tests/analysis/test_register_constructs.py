"""Register estimates for the constructs of kernlint/analysis/register_access.py, register_unroll.py, the
scan rule of register_streams.py and the Philox rule of registers.py, against ptxas register counts recorded in
benchmarks/truth/suite-triton-3.9.json and triton-3.9.json (Triton 3.9)."""
from __future__ import annotations

import json

from conftest import ROOT

from benchmarks import accuracy

# (kernel, target, config subset): each a construct the earlier model missed by 30-60 % (estimates 31, 55, 94).
CASES = [
    # tl.rand: four Philox words per element while generated (8 fp32 elements per thread x 2 loads + state)
    ("residual_dropout_kernel", "h100", {"BLOCK_SIZE": 4096, "num_warps": 8}),
    # tl.static_range(KERNEL_WIDTH=4) without stores: the four x-tile loads are in flight together
    ("causal_conv1d_fwd_kernel", "h100", {"BLOCK_L": 64, "BLOCK_D": 64, "num_warps": 4}),
    # B loaded through clamped (non-contiguous) offsets: a 64-bit address and a register per element
    ("persistent_matmul_kernel", "h100", {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3}),
    # tl.associative_scan of an (a, b) pair: inputs and outputs live together, the outputs whole (96 vs 59)
    ("linear_recurrence_kernel", "h100", {"BLOCK_T": 64, "BLOCK_D": 32, "num_warps": 4}),
    ("linear_recurrence_kernel", "b200", {"BLOCK_T": 128, "BLOCK_D": 32, "num_warps": 4}),
]


def _records() -> list[dict]:
    paths = ("benchmarks/truth/suite-triton-3.9.json", "benchmarks/truth/triton-3.9.json")
    return [r for p in paths for r in json.loads((ROOT / p).read_text())["records"]]


def test_register_constructs_within_20_percent_of_ptxas() -> None:
    records = _records()
    for kernel, target, subset in CASES:
        chosen = [r for r in records if r["kernel"] == kernel and all(r["config"].get(k) == v for k, v in subset.items())]
        pairs = [(r, e) for r, e in accuracy.estimate_records(chosen) if e.target.key == target]
        assert pairs, (kernel, target, subset)
        for record, estimate in pairs:
            truth = record["regs"]
            assert abs(estimate.registers.allocated - truth) <= 0.2 * truth, (
                kernel, record["config"], estimate.registers.allocated, truth)
