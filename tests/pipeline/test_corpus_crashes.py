"""Regressions for internal errors seen on the development corpus (benchmarks/corpus.py), each a minimal
reduction of the real kernel written for the test."""
from __future__ import annotations

from kernlint.pipeline.api import Settings, lint_source
from kernlint.ir.nodes import OpKind

SETTINGS = Settings(targets=("h100",))


def _lint(src: str):  # type: ignore[no-untyped-def]
    result = lint_source(src, "k.py", SETTINGS)
    assert result.internal_errors == []
    return result.files[0]


def test_store_of_a_constant_through_an_unrecognised_pointer() -> None:
    # flag-gems' DSA top-k keeps its scratch in a shared-memory pointer built by an extension module;
    # `tl.store(that, CONSTANT)` left a store with no operands, and the shared-memory conversion pass
    # indexed its pointer (IndexError)
    src = """
import triton
import triton.language as tl
import triton.experimental.tle.language as tle

@triton.jit
def topk(out_ptr, n, K: tl.constexpr, BLOCK: tl.constexpr):
    buf = tle.gpu.alloc([1], dtype=tl.int32, scope=tle.gpu.smem)
    scratch = tle.gpu.local_ptr(buf, (0,))
    offs = tl.arange(0, BLOCK)
    x = tl.load(out_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)
    tl.store(scratch, K)

def launch(out, n):
    topk[(1,)](out, n, K=8, BLOCK=128, num_warps=4)
"""
    f = _lint(src)
    (kernel,) = f.kernels
    assert kernel.estimates and all(e.smem is not None for e in kernel.estimates)
    # the store kernlint cannot place is said, not silently dropped
    assert any("tl.store" in u.construct for u in kernel.ir.unmodelled)


def test_interleave_of_two_scalars() -> None:
    # an mxfp upcast interleaves the two nibbles of a scale it loaded as a scalar; the result is Triton's
    # join of the two, a [2] tile (interleave of 0-d values was an IndexError in tl_calls.py)
    src = """
import triton
import triton.language as tl

@triton.jit
def upcast(x_ptr, s_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    packed = tl.load(x_ptr + offs)
    s = tl.load(s_ptr)
    pair = tl.interleave(s & 0x0F, s >> 4)
    both = tl.interleave(packed & 0x0F, packed >> 4)
    tl.store(out_ptr + tl.arange(0, 2 * BLOCK), both.to(tl.float32) * tl.sum(pair, 0).to(tl.float32))

def run(x, s, o):
    upcast[(1,)](x, s, o, BLOCK=64)
"""
    f = _lint(src)
    (kernel,) = f.kernels
    assert kernel.estimates
    from kernlint.analysis.liveness import walk_ops

    shapes = {op.line: op.result.shape for op in walk_ops(kernel.ir.body.ops)
              if op.result is not None and op.kind == OpKind.JOIN}
    line = next(i for i, t in enumerate(src.splitlines(), 1) if "pair =" in t)
    assert [str(d) for d in shapes[line]] == ["2"]
