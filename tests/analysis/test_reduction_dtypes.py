"""Reduction dtypes and the reduced row's store conversion against Triton's shared memory for the probe kernels
of tests/truth/reduction_dtypes.py (Triton 3.9.0, `metadata.shared`, num_stages 1), recorded here and
re-measured live when Triton is installed. Before these rules kernlint reduced fp16 maxima and int8 sums in
their own type (half the scratch) and converted a row sum at its store even where a loaded scale joins it
earlier in fp32 (half the conversion)."""
from __future__ import annotations

from typing import Any

import pytest
from conftest import ROOT, import_probe

from kernlint.pipeline.api import Settings, lint_paths
from kernlint.ir.dtypes import reduction_input_dtype
from kernlint.ir.nodes import OpKind

FILE = ROOT / "tests/truth/reduction_dtypes.py"
ABSMAX = {"A": "*fp16", "M": "*fp16"}
COUNT = {"X": "*i8", "S": "*i32"}
GEMV = {"W": "*fp16", "S": "*fp16", "Y": "*fp16", "K": "i32"}
# (kernel, argument types, constexprs, num_warps) → Triton's shared memory in bytes, the same on sm_80/90/100
SHARED: list[tuple[str, dict[str, str], dict[str, int], int, int]] = [
    ("absmax_row", ABSMAX, {"BLOCK": 64}, 4, 8),      # 2 warps hold data: 2 fp32 partials
    ("absmax_row", ABSMAX, {"BLOCK": 128}, 8, 16),
    ("absmax_row", ABSMAX, {"BLOCK": 1024}, 4, 16),
    ("absmax_row", {"A": "*bf16", "M": "*bf16"}, {"BLOCK": 1024}, 4, 16),
    ("count_row", COUNT, {"BLOCK": 1024}, 4, 16),     # int8 summed as i32: 4 partials × 4 B
    ("count_row", COUNT, {"BLOCK": 64}, 4, 8),
    ("scaled_row_sums", GEMV, {"BN": 64, "BK": 512}, 2, 256),    # converted at the join, in fp32
    ("scaled_row_sums", GEMV, {"BN": 128, "BK": 512}, 2, 256),   # 2 stored rows per thread: 2 rounds
    ("scaled_row_sums", GEMV, {"BN": 32, "BK": 256}, 4, 64),     # scale reloaded, converted at the store in fp16
]


def _estimate(kernel: str, args: dict[str, str], constexprs: dict[str, int], warps: int, target: str) -> int:
    cfg = {**constexprs, "num_warps": warps, "num_stages": 1}
    res = lint_paths([str(FILE)], Settings(targets=(target,), cli_configs=(cfg,), arg_types=args))
    return next(e.smem.total for f in res.files for k in f.kernels if k.jit.name == kernel
                for e in k.estimates if e.config.origin == "cli")


@pytest.mark.parametrize("target", ["a100", "h100", "b200"])
def test_reduction_scratch_matches_triton(target: str) -> None:
    for kernel, args, constexprs, warps, shared in SHARED:
        assert _estimate(kernel, args, constexprs, warps, target) == shared, (kernel, constexprs, warps, target)


def test_triton_reduction_input_dtypes() -> None:
    """triton/language/standard.py (3.9): max/min widen floats and integers narrower than 32 bits, sum and
    cumsum widen only integers (keeping the sign) unless `dtype=` says otherwise."""
    assert reduction_input_dtype("max", "fp16") == "fp32"
    assert reduction_input_dtype("min", "bf16") == "fp32"
    assert reduction_input_dtype("max", "fp8e4nv") == "fp32"
    assert reduction_input_dtype("max", "i8") == "i32"
    assert reduction_input_dtype("max", "fp32") == "fp32"
    assert reduction_input_dtype("max", "fp64") == "fp64"
    assert reduction_input_dtype("sum", "fp16") == "fp16"
    assert reduction_input_dtype("sum", "i8") == "i32"
    assert reduction_input_dtype("sum", "u8") == "u32"
    assert reduction_input_dtype("sum", "i64") == "i64"
    assert reduction_input_dtype("sum", "fp16", "fp32") == "fp32"
    assert reduction_input_dtype("cumsum", "i16") == "i32"
    assert reduction_input_dtype("xor_sum", "i8") == "i8"


def test_max_of_fp16_is_an_fp32_value() -> None:
    """The reduced value itself is fp32: what it feeds (here the stored maximum) sees fp32, not fp16."""
    res = lint_paths([str(FILE)], Settings(targets=("h100",), cli_configs=({"BLOCK": 64, "num_warps": 4},),
                                           arg_types=ABSMAX))
    k = next(k for f in res.files for k in f.kernels if k.jit.name == "absmax_row")
    reduces = [op for op, _ in k.ir.walk() if op.kind == OpKind.REDUCE]
    assert [r.result.dtype for r in reduces if r.result is not None] == ["fp32"]


def test_recorded_shared_memory_is_real() -> None:
    """Re-measure the recorded bytes on sm_90 when the kernlint[triton] extra is installed."""
    pytest.importorskip("triton", reason="needs the kernlint[triton] extra")
    from kernlint.calibrate.triton_compile import compile_jit, unwrap

    mod: Any = import_probe(FILE)
    for kernel, args, constexprs, warps, shared in SHARED[::2]:
        out = compile_jit(unwrap(getattr(mod, kernel)), args, {},
                          {**constexprs, "num_warps": warps, "num_stages": 1}, 90, 600)
        assert out.get("error") is None, out.get("error")
        assert out["shared"] == shared, (kernel, constexprs, warps, out["shared"])
