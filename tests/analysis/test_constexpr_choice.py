"""`a if CONSTEXPR else b` whose branches have different shapes, against ptxas for tests/truth/constexpr_choice.py
(Triton 3.9.0, num_stages 1), recorded here and re-measured live when Triton is installed. The branch is picked
per config; before, both were broadcast together, so `B + (stride_bm * o_m[:, None] if X_DIM == 2 else 0) +
stride_bn * o_n[None, :]` was a [BM, BN] pointer tile even with X_DIM = 1 (255 registers and a predicted spill
of 288-328 B where ptxas uses 96)."""
from __future__ import annotations

from typing import Any

import pytest
from conftest import ROOT, import_probe

from kernlint.pipeline.api import Settings, lint_paths
from kernlint.ir.nodes import OpKind
from kernlint.ir.symbolic import Const, Sym, binary, select

FILE = ROOT / "tests/truth/constexpr_choice.py"
ARGS = {"X": "*fp16", "B": "*fp16", "Y": "*fp16", "stride_bm": "i32", "stride_bn": "i32"}
# (BM, BN, num_warps) → ptxas registers with X_DIM = 1 on sm_80 / sm_90 (no spills)
X_DIM_1 = {(128, 128, 4): (96, 96), (64, 256, 4): (96, 96), (128, 256, 8): (106, 110)}


def _estimates(target: str, x_dim: int) -> dict[tuple[int, int, int], Any]:
    cfgs = tuple({"BM": bm, "BN": bn, "X_DIM": x_dim, "num_warps": w, "num_stages": 1} for bm, bn, w in X_DIM_1)
    res = lint_paths([str(FILE)], Settings(targets=(target,), cli_configs=cfgs, arg_types=ARGS))
    return {(e.config.constexprs["BM"], e.config.constexprs["BN"], e.config.num_warps): e
            for f in res.files for k in f.kernels for e in k.estimates if e.config.origin == "cli"}


@pytest.mark.parametrize("target,column", [("a100", 0), ("h100", 1)])
def test_the_branch_a_config_takes_sets_the_registers(target: str, column: int) -> None:
    for key, e in _estimates(target, 1).items():
        truth = X_DIM_1[key][column]
        assert e.registers.spill_bytes == 0, (key, e.registers)
        assert abs(e.registers.allocated - truth) <= 0.2 * truth, (key, e.registers.allocated, truth)


def test_the_bias_tile_has_the_shape_of_its_branch() -> None:
    """By hand: [BM, 1] + [1, BN] is [BM, BN]; a scalar 0 + [1, BN] is [1, BN]."""
    res = lint_paths([str(FILE)], Settings(targets=("h100",)))
    ir = next(k.ir for f in res.files for k in f.kernels if k.jit.name == "add_bias")
    bias = [op.result for op, _ in ir.walk() if op.kind == OpKind.LOAD and op.result is not None][1]
    env = {"BM": 128, "BN": 64}
    assert [d.evaluate({**env, "X_DIM": 1}) for d in bias.shape] == [1, 64]
    assert [d.evaluate({**env, "X_DIM": 2}) for d in bias.shape] == [128, 64]


def test_select_folds() -> None:
    test = binary("==", Sym("X_DIM"), Const(2))
    assert select(test, Sym("BM"), Sym("BM")) == Sym("BM")
    assert select(Const(True), Sym("BM"), Const(1)) == Sym("BM")
    assert select(test, Sym("BM"), Const(1)).evaluate({"X_DIM": 2, "BM": 32}) == 32
    assert select(test, Sym("BM"), Const(1)).evaluate({"X_DIM": 1, "BM": 32}) == 1


def test_recorded_ptxas_counts_are_real() -> None:
    pytest.importorskip("triton", reason="needs the kernlint[triton] extra")
    from kernlint.calibrate.triton_compile import compile_jit, unwrap

    mod: Any = import_probe(FILE)
    for (bm, bn, w), (sm80, sm90) in list(X_DIM_1.items())[::2]:
        out = compile_jit(unwrap(mod.add_bias), ARGS, {"X_DIM": 1}, {"BM": bm, "BN": bn, "num_warps": w,
                                                                      "num_stages": 1}, 90, 600)
        assert out.get("error") is None, out.get("error")
        assert abs(out["regs"] - sm90) <= 4 and not out["spill_store"], (bm, bn, w, out["regs"])


def test_peak_tiles_name_the_branch_taken() -> None:
    """Messages show the shape the config has (`BMxBN` at X_DIM = 2), not the conditional expression."""
    e = _estimates("h100", 2)[(128, 128, 4)]
    shapes = [t.shape for t in e.registers.peak_tiles]
    assert "BMxBN" in shapes and not any(" if " in s for s in shapes)
