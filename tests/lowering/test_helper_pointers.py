"""Kernel parameters that only a jit helper loads through are pointers (kernlint/lowering/pointers.py).

examples/attention_fwd.py builds `k_ptrs = K + ...` and `v_ptrs = V + ...` in the kernel and hands them to
`_attn_inner`, which does the `tl.load`. Pointer detection used to look at the kernel's own body only, so
without `--arg K=*fp16` K and V were integers, their address tiles int64 sums, and the estimate for
BLOCK_M 64 · BLOCK_N 64 · 4 warps · 3 stages (HEAD_DIM 64) was 142 registers, 3 CTAs per SM. ptxas says 128
(`kernlint calibrate examples/attention_fwd.py::attn_fwd_kernel --target h100 --arg '*=*fp16' ...`, Triton
3.6 and 3.9, sm_90), 4 CTAs per SM: the estimate with every pointer typed, 126, is the one to match."""
from __future__ import annotations

from pathlib import Path

from kernlint.analysis.configs import ConfigPoint
from kernlint.analysis.estimate import estimate
from kernlint.pipeline.api import Settings, lint_paths, lint_sources
from kernlint.hardware.specs import SPECS

ROOT = Path(__file__).resolve().parents[2]
SCALARS = {"M": "*fp32", "sm_scale": "fp32", "stride_qk": "1", "stride_kk": "1", "stride_vk": "1", "stride_ok": "1"}
TYPED = {**SCALARS, "Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16"}


def _attention(arg_types: dict[str, str]):  # type: ignore[no-untyped-def]
    res = lint_paths([str(ROOT / "examples/attention_fwd.py")], Settings(targets=("h100",), arg_types=arg_types))
    return next(k for f in res.files for k in f.kernels if k.jit.name == "attn_fwd_kernel")


def test_parameters_loaded_in_a_helper_are_pointers() -> None:
    k = _attention(SCALARS)
    assert {"Q", "K", "V", "Out"} <= set(k.ir.pointer_params)
    # the only guesses left are the element types, each said once, none for a nameless helper pointer
    assert sorted(a for a in k.ir.assumptions if "default pointer dtype" in a) == [
        f"{p}: *fp16 (default pointer dtype)" for p in ("K", "Out", "Q", "V")]


def test_untyped_pointers_estimate_as_typed_ones() -> None:
    point = ConfigPoint({"BLOCK_M": 64, "BLOCK_N": 64, "HEAD_DIM": 64, "CAUSAL": False}, 4, 3, "cli", 1)
    untyped = estimate(_attention(SCALARS).ir, point, SPECS["h100"])
    typed = estimate(_attention(TYPED).ir, point, SPECS["h100"])
    assert untyped.registers is not None and typed.registers is not None and untyped.occupancy is not None
    assert untyped.registers.allocated == typed.registers.allocated
    # ptxas: 128 registers × 128 threads → 65536 / 16384 = 4 CTAs per SM (3 with the old 142)
    assert untyped.occupancy.ctas_per_sm == 4


def test_pointer_args_by_keyword_and_through_nested_helpers() -> None:
    src = '''
import triton
import triton.language as tl

@triton.jit
def _leaf(p, n):
    return tl.load(p + tl.arange(0, 16))

@triton.jit
def _middle(q, n):
    return _leaf(n=n, p=q)

@triton.jit
def kern(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, 16)
    v = _middle(X + offs * 0, n)
    tl.store(Y + offs, v)
'''
    res = lint_sources([("k.py", src.encode())], Settings(targets=("h100",)))
    k = next(k for f in res.files for k in f.kernels if k.jit.name == "kern")
    assert set(k.ir.pointer_params) == {"X", "Y"}        # n is an integer in every helper


def test_a_recursive_helper_does_not_loop() -> None:
    src = '''
import triton
import triton.language as tl

@triton.jit
def _again(p, depth: tl.constexpr):
    if depth > 0:
        return _again(p, depth - 1)
    return tl.load(p)

@triton.jit
def kern(X, Y):
    tl.store(Y, _again(X, 2))
'''
    res = lint_sources([("k.py", src.encode())], Settings(targets=("h100",)))
    k = next(k for f in res.files for k in f.kernels if k.jit.name == "kern")
    assert set(k.ir.pointer_params) == {"X", "Y"}
