"""Pointer element types inferred from the source before the fp16 default, and findings that say what they
assumed (KL101 is an error only when the element types are known)."""
from __future__ import annotations

from kernlint.pipeline.api import Settings, lint_sources
from kernlint.core.diagnostic import Severity

from shared_sources import INT8_GEMM

# The same loop with the operands dequantised before an fp32 dot: nothing in the kernel says int8; the
# launcher's asserts do, and the output tensor it allocates says fp32.
LAUNCHED = '''
import torch
import triton
import triton.language as tl


@triton.jit
def dq_gemm(A, B, C, Q, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(A + rm[:, None] * K + rk[None, :] + k).to(tl.float16)
        b = tl.load(B + (rk[:, None] + k) * BN + rn[None, :]).to(tl.float16)
        acc += tl.dot(a, b)
    tl.store(C + rm[:, None] * BN + rn[None, :], acc)
    tl.store(Q + rm[:, None] * BN + rn[None, :], acc.to(tl.float8e4nv))


def dq(a, b, q):
    assert a.dtype == torch.int8 and b.dtype is torch.int8
    c = torch.empty((a.shape[0], b.shape[1]), device=a.device, dtype=torch.float32)
    dq_gemm[(a.shape[0] // 128,)](a.contiguous(), b, c, q, a.shape[1], BM=128, BN=128, BK=64, num_stages=4,
                                  num_warps=8)
    return c
'''


def _lint(source: str, args: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return lint_sources([("k.py", source.encode())], Settings(targets=("h100",), arg_types=args or {})).files[0]


def test_an_int32_accumulator_means_int8_operands_and_the_kl401_goes() -> None:
    inferred = _lint(INT8_GEMM)
    k = inferred.kernels[0]
    assert k.ir.pointer_params["A"] == k.ir.pointer_params["B"] == "i8"
    assert any(a.startswith("A: *i8 (inferred: an operand of tl.dot into an int32 accumulator") for a in k.ir.assumptions)
    e = k.estimates[0]
    assert e.smem.total == 4 * 128 * 128 + 128 * 128 == 81_920  # Triton 3.9 metadata.shared, sm_90
    assert not [d for d in inferred.diagnostics if d.code == "KL401"]
    # stated as fp16 (what the default used to assume): the buffers double and the config cannot run
    stated = _lint(INT8_GEMM, {"A": "*fp16", "B": "*fp16"})
    assert stated.kernels[0].estimates[0].smem.total >= 4 * (128 * 128 + 128 * 128) * 2
    assert [d for d in stated.diagnostics if d.code == "KL401"]


def test_launcher_asserts_and_allocations_type_the_pointers() -> None:
    k = _lint(LAUNCHED).kernels[0]
    assert k.ir.pointer_params == {"A": "i8", "B": "i8", "C": "fp32", "Q": "fp8e4nv"}
    notes = "; ".join(k.ir.assumptions)
    assert "A: *i8 (inferred: `assert a.dtype == torch.int8` in dq)" in notes
    assert "B: *i8 (inferred: `assert b.dtype is torch.int8` in dq)" in notes
    assert "C: *fp32 (inferred: `c` is created with dtype=torch.float32 in dq" in notes
    assert "Q: *fp8e4nv (inferred: stores a value converted with .to(fp8e4nv))" in notes
    assert k.ir.assumed_pointees == ()
    # an explicit --arg wins over what the source implies
    assert _lint(LAUNCHED, {"A": "*u8"}).kernels[0].ir.pointer_params["A"] == "u8"


def test_kl101_is_a_warning_naming_the_assumed_type_and_an_error_once_types_are_known() -> None:
    launched = INT8_GEMM.replace('@triton.autotune(configs=[triton.Config({"BM": 128, "BN": 128, "BK": 128}, '
                                 'num_warps=8, num_stages=4)], key=["K"])\n', "").replace(
        "dtype=tl.int32", "dtype=tl.float32") + (
        "\n\ndef run(a, b, c):\n    int8_gemm[(1,)](a, b, c, a.shape[1], BM=128, BN=128, BK=128, num_warps=8, "
        "num_stages=4)\n")
    assumed = [d for d in _lint(launched).diagnostics if d.code == "KL101"]
    assert len(assumed) == 1 and assumed[0].severity is Severity.WARNING
    assert "assumes A, B, C point to fp16 (the default" in assumed[0].message
    stated = [d for d in _lint(launched, {"*": "*fp16"} | {n: "*fp16" for n in "ABC"}).diagnostics
              if d.code == "KL101"]
    assert len(stated) == 1 and stated[0].severity is Severity.ERROR and "assumes" not in stated[0].message


def test_a_subtracted_term_of_an_address_is_not_a_pointer() -> None:
    """`iw = ow * sW - pW` ... `x_ptr + iw`: `pW` is an integer (int - pointer does not type-check in Triton:
    flag-gems' im2col was compiled with `pW` as `*fp16` and failed); the minuend of `ptr - k` still is one."""
    import libcst as cst

    from kernlint.lowering.pointers import additive_names

    expr = cst.parse_expression("x_ptr + base + (ow * sW - pW + kw * dW)")
    assert additive_names(expr) == {"x_ptr", "base"}
    assert additive_names(cst.parse_expression("end_ptr - offs")) == {"end_ptr"}
