"""`--arg` values shared by check, explain, recommend and calibrate: None, dtypes, types, example values."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from kernlint.pipeline.api import Settings, lint_sources
from kernlint.cli import main
from kernlint.frontend.arg_values import ArgValueError, DtypeValue, parse_arg_value

BIAS_KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def bias_kernel(X, BIAS, Y, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    x = tl.load(X + rm[:, None] * n + rn[None, :]).to(tl.float32)
    if BIAS is not None:
        b = tl.load(BIAS + rm[:, None] * n + rn[None, :]).to(tl.float32)
        x = x * tl.exp(b) + b
    tl.store(Y + rm[:, None] * n + rn[None, :], x)


def launch(x, bias, y):
    bias_kernel[(1,)](x, bias, y, x.shape[1], BLOCK_M=64, BLOCK_N=256, num_warps=4)
'''

HEURISTIC_KERNEL = '''
import triton
import triton.language as tl


@triton.heuristics({"HAS_BIAS": lambda args: args["BIAS"] is not None})
@triton.jit
def h_kernel(X, BIAS, Y, n, HAS_BIAS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    x = tl.load(X + rm[:, None] * n + rn[None, :]).to(tl.float32)
    if HAS_BIAS:
        x += tl.load(BIAS + rm[:, None] * n + rn[None, :]).to(tl.float32)
    tl.store(Y + rm[:, None] * n + rn[None, :], x)


def launch(x, bias, y):
    h_kernel[(1,)](x, bias, y, x.shape[1], BLOCK_M=64, BLOCK_N=256, num_warps=4)
'''

ACC_KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def acc_kernel(A, B, C, K, BLOCK: tl.constexpr, ACC_DTYPE: tl.constexpr):
    r = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=ACC_DTYPE)
    for k in range(0, K, BLOCK):
        a = tl.load(A + r[:, None] * K + k + r[None, :])
        b = tl.load(B + (k + r[:, None]) * BLOCK + r[None, :])
        acc += tl.dot(a, b, out_dtype=ACC_DTYPE)
    tl.store(C + r[:, None] * BLOCK + r[None, :], acc)


def launch(a, b, c):
    acc_kernel[(1,)](a, b, c, a.shape[1], BLOCK=128, ACC_DTYPE=tl.float32, num_warps=4)
'''


def _estimate(source: str, args: dict[str, str], kernel: str | None = None):  # type: ignore[no-untyped-def]
    result = lint_sources([("k.py", source.encode())], Settings(targets=("h100",), arg_types=args))
    return next(e for f in result.files for k in f.kernels if kernel in (None, k.jit.name) for e in k.estimates)


def test_one_parser_reads_every_form() -> None:
    assert parse_arg_value("x", "*bfloat16:16").spec() == "*bf16:16"
    assert parse_arg_value("x", "*bfloat16:16").lint_text() == "*bf16"
    assert parse_arg_value("x", "None").is_none
    assert parse_arg_value("D", "tl.int32").spec() == DtypeValue("i32")
    assert parse_arg_value("D", "torch.float8_e4m3fn").spec() == DtypeValue("fp8e4nv")
    assert parse_arg_value("D", "int32").constexpr_value() == DtypeValue("i32")   # a type name for a constexpr
    assert parse_arg_value("n", "4096").value == 4096 and parse_arg_value("f", "False").value is False
    for bad in ("tl.int33", "*bfloat17", "i32:8"):
        with pytest.raises(ArgValueError):
            parse_arg_value("x", bad)


def test_an_argument_passed_as_none_folds_its_branch() -> None:
    with_bias = _estimate(BIAS_KERNEL, {})
    without = _estimate(BIAS_KERNEL, {"BIAS": "None"})
    # the bias branch holds a second fp32 64x256 tile: 64*256/128 threads = 128 elements, live next to x
    assert without.registers.demand < with_bias.registers.demand
    assert not any(a.startswith("BIAS:") for a in without.assumptions)   # no pointer type assumed for it


def test_none_reaches_a_heuristic_that_tests_it() -> None:
    with_bias = _estimate(HEURISTIC_KERNEL, {})
    without = _estimate(HEURISTIC_KERNEL, {"BIAS": "None"})
    assert "HAS_BIAS" not in with_bias.config.constexprs          # unknown without --arg: both branches
    assert without.config.constexprs["HAS_BIAS"] is False
    assert without.registers.demand < with_bias.registers.demand


@pytest.mark.parametrize("spelling", ["tl.float16", "float16", "fp16", "triton.language.float16"])
def test_a_dtype_constexpr_sizes_the_accumulator(spelling: str) -> None:
    fp32 = _estimate(ACC_KERNEL, {"ACC_DTYPE": "tl.float32"})
    fp16 = _estimate(ACC_KERNEL, {"ACC_DTYPE": spelling})
    acc32 = next(t for t in fp32.registers.peak_tiles if t.name == "acc")
    acc16 = next(t for t in fp16.registers.peak_tiles if t.name == "acc")
    assert (acc32.dtype, acc16.dtype) == ("fp32", "fp16")
    # 128x128 elements over 128 threads: 128 per thread; fp32 one per register, fp16 two per register
    assert acc32.registers == pytest.approx(2 * acc16.registers)
    assert fp32.registers.demand - fp16.registers.demand >= acc32.registers - acc16.registers - 1
    assert not any("ACC_DTYPE unknown" in a for a in fp16.assumptions)


def test_check_and_recommend_accept_calibrates_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.py").write_text(ACC_KERNEL)
    for argv in (["check", "k.py"], ["recommend", "k.py"]):
        code = main([*argv, "--arg", "ACC_DTYPE=tl.int32", "--arg", "C=None", "--arg", "A=*bfloat16"], io.StringIO())
        assert code in (0, 1), capsys.readouterr().err
    assert main(["check", "k.py", "--arg", "ACC_DTYPE=tl.int33"], io.StringIO()) == 2
    assert "unknown dtype 'tl.int33'" in capsys.readouterr().err
