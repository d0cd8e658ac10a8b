"""sm_100 attention keeps a second copy of the softmax probabilities for a row sum deferred by one iteration
(kernlint/analysis/register_tmem.deferred_row_sums). Truth: Triton 3.9 / ptxas on sm_100, recorded in
benchmarks/truth/suite-triton-3.9.json (tests/truth/suite_kernels/attention.py, causal, HEAD_DIM 64, fp16)."""
from __future__ import annotations

import json

from conftest import ROOT

from benchmarks import accuracy


def _records(cap: int) -> dict[tuple[int, int, int], tuple[dict, object]]:
    records = [r for r in json.loads((ROOT / "benchmarks/truth/suite-triton-3.9.json").read_text())["records"]
               if r["kernel"] == "attn_fwd_causal_kernel" and r["cap"] == cap]
    return {(r["config"]["BLOCK_M"], r["config"]["BLOCK_N"], r["config"]["num_warps"]): (r, e)
            for r, e in accuracy.estimate_records(records)}


def test_a_thread_owning_a_row_holds_the_previous_probabilities_and_spills() -> None:
    b200 = _records(100)
    # one row per thread (BLOCK_M = 32 × num_warps): ptxas allocates all 255 registers and spills
    for key in ((128, 64, 4), (256, 64, 8)):
        record, estimate = b200[key]
        assert record["regs"] == 255 and record["spill_store"] > 0, record
        regs = estimate.registers
        assert regs.demand > regs.budget == 255, (key, regs.demand)   # spill predicted
        # the copy is p: BLOCK_M × 64 fp32 over 32 × num_warps threads = 64 words a thread, at data_scale 0.95
        # (60.8 registers) on top of the 228 / 220 the loop body needed before
        assert regs.demand >= (228 if key[2] == 4 else 220) + 60


def test_two_threads_per_row_or_no_tcgen05_add_nothing() -> None:
    b200 = _records(100)
    # 128 rows at 8 warps: the second warpgroup takes half the columns; ptxas 113 registers, no spill
    record, estimate = b200[(128, 64, 8)]
    assert record["regs"] == 113 and not record["spill_store"]
    assert estimate.registers.demand <= estimate.registers.budget
    assert abs(estimate.registers.allocated - 113) / 113 <= 0.2
    # sm_90 (wgmma, accumulator in registers, no rotated loop): 128 × 64 at 4 warps is 232 registers, no spill
    record, estimate = _records(90)[(128, 64, 4)]
    assert record["regs"] == 232 and not record["spill_store"]
    assert estimate.registers.demand <= 255


def test_without_the_row_sum_the_second_copy_is_gone_live() -> None:
    """The probe behind the rule, compiled when Triton is installed: the suite's causal attention at 128 × 64 and
    4 warps on sm_100, as it is and with `l_ij = tl.sum(p, 1)` replaced by a constant (then nothing reads p but
    its fp16 cast). Triton 3.9: 255 registers + 20 B spilled against 167, nothing spilled."""
    import importlib.util
    import tempfile
    from pathlib import Path

    import pytest
    pytest.importorskip("triton", reason="the live probe needs the kernlint[triton] extra")
    from kernlint.calibrate.triton_compile import compile_jit

    text = (ROOT / "tests/truth/suite_kernels/attention.py").read_text()
    assert text.count("l_ij = tl.sum(p, 1)") == 1
    args = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "sm_scale": "fp32", "M": "*fp32", "Out": "*fp16",
            "stride_z": "i32", "stride_h": "i32", "stride_tok": "i32", "stride_d": 1, "H": "i32", "N_CTX": "i32"}
    config = {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 4}
    regs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, source in (("with_sum", text), ("without_sum", text.replace("l_ij = tl.sum(p, 1)", "l_ij = 1.0"))):
            path = Path(tmp) / f"{name}.py"
            path.write_text(source)
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec and spec.loader
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            out = compile_jit(mod.attn_fwd_causal_kernel, args, {"HEAD_DIM": 64}, config, 100, 300)
            assert out["error"] is None, out["error"]
            regs[name] = (out["regs"], out["spill_store"] or 0)
    assert regs["with_sum"][0] == 255 and regs["with_sum"][1] > 0, regs
    assert regs["without_sum"][0] <= 200 and regs["without_sum"][1] == 0, regs
