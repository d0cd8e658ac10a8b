"""A runtime `if` whose else branch updates tiles (kernlint/analysis/liveness.py: the then branch's merge value
reaches the join where that branch ends; register_elementwise.carry_streamed_data: a streamed sum holds at most
its own tile). Truth: Triton 3.9.0 (ptxas 12.9 for sm_80 / sm_90, ptxas-blackwell 13.4 for sm_100), `kernlint
calibrate` of tests/truth/branch_updates.py (fp32 pointers, flag i32, num_stages 1), recorded here; re-measured
live when Triton is installed."""
from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import ROOT, import_probe

from kernlint.analysis.liveness import compute_liveness
from kernlint.pipeline.api import Settings, lint_paths
from kernlint.ir.nodes import OpKind

FILE = ROOT / "tests/truth/branch_updates.py"
ARGS = {"A": "*fp32", "B": "*fp32", "C": "*fp32", "P": "*fp32", "Q": "*fp32", "flag": "i32"}
TARGETS = {"a100": 80, "h100": 90, "b200": 100}
# branch_update (BLOCK, num_warps) -> {capability: (registers, spill-store bytes)}
PTXAS: dict[tuple[int, int], dict[int, tuple[int, int]]] = {
    (8192, 8): {80: (102, 0), 90: (102, 0), 100: (110, 0)},     # 32 fp32 a thread per tile
    (16384, 8): {80: (174, 0), 90: (175, 0), 100: (192, 0)},    # 64
}


def _estimates() -> dict[tuple[int, int, int], Any]:
    configs = tuple({"BLOCK": b, "num_warps": w, "num_stages": 1} for b, w in PTXAS)
    args = {k: v for k, v in ARGS.items() if k != "C"}
    res = lint_paths([str(FILE)], Settings(targets=tuple(TARGETS), cli_configs=configs, arg_types=args))
    return {(e.config.constexprs["BLOCK"], e.config.num_warps, TARGETS[e.target.key]): e.registers
            for f in res.files for k in f.kernels if k.jit.name == "branch_update" for e in k.estimates
            if e.config.origin == "cli"}


def test_else_branch_updates_do_not_spill() -> None:
    """At 64 fp32 a thread kernlint held a and b from before the `if` through the else branch next to their
    updated sums and the two loads (a100 293, b200 257 registers: a false spill); ptxas 174 / 175 / 192."""
    est = _estimates()
    for cap, (regs, spill) in PTXAS[(16384, 8)].items():
        got = est[(16384, 8, cap)]
        assert spill == 0 and got.demand <= got.budget == 255, (cap, got.demand, regs)


def test_else_branch_updates_within_20_percent() -> None:
    """32 fp32 a thread: kernlint said 152 / 133 / 135 against ptxas 102 / 102 / 110."""
    est = _estimates()
    for cap, (regs, _) in PTXAS[(8192, 8)].items():
        got = est[(8192, 8, cap)].allocated
        assert abs(got - regs) <= 0.2 * regs, (cap, got, regs)


def test_then_value_dies_where_the_then_branch_ends() -> None:
    """branch_select: `c = a` in the then branch, a load in the else branch; `a` is not live in the else branch."""
    args = {k: v for k, v in ARGS.items() if k in ("A", "B", "C", "flag")}
    res = lint_paths([str(FILE)], Settings(targets=("h100",), arg_types=args))
    kernel = next(k for f in res.files for k in f.kernels if k.jit.name == "branch_select")
    live = compute_liveness(kernel.ir, {"BLOCK": 1024})
    loads = [i for i, s in enumerate(live.steps) if not s.is_end and s.op.kind == OpKind.LOAD]
    assert len(loads) == 2
    a = live.steps[loads[0]].op.result
    assert a is not None
    assert all(v.id != a.id for v in live.live_at(loads[1])), live.intervals[a.id]


def test_layernorm_bwd_dx_fused_16_warps_does_not_spill() -> None:
    """Development truth (suite-triton-3.9.json): BLOCK_SIZE_N 16384 · 16 warps (32 elements a thread, a
    128-register budget) compiles to 127 / 126 registers without spilling on sm_90 / sm_100; kernlint said
    135 / 137 (a false spill): the old partial_dw was held through the else branch next to partial_dw + DW."""
    from benchmarks import accuracy

    records = [r for r in json.loads((ROOT / "benchmarks/truth/suite-triton-3.9.json").read_text())["records"]
               if r["kernel"] == "layernorm_bwd_dx_fused_kernel" and r["config"].get("BLOCK_SIZE_N") == 16384
               and r["config"].get("num_warps") == 16 and r["cap"] >= 90]
    assert len(records) == 2
    for record, estimate in accuracy.estimate_records(records):
        assert record["spill_store"] == 0
        assert estimate.registers.demand <= 128, (record["cap"], estimate.registers.demand)


def test_recorded_ptxas_counts_are_real() -> None:
    """Re-measure one of the recorded counts when the kernlint[triton] extra is installed."""
    pytest.importorskip("triton", reason="needs the kernlint[triton] extra")
    from kernlint.calibrate.triton_compile import compile_jit

    mod: Any = import_probe(FILE)
    fn = mod.branch_update
    args = {k: v for k, v in ARGS.items() if k in fn.arg_names}
    out = compile_jit(fn, args, {"BLOCK": 16384}, {"num_warps": 8, "num_stages": 1}, 100, 600)
    assert out.get("error") is None, out.get("error")
    regs, spill = PTXAS[(16384, 8)][100]
    assert abs(out["regs"] - regs) <= 4 and (out["spill_store"] or 0) == spill, out["regs"]
