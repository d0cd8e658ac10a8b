"""`x is None` / `x is not None` are decided at compile time (kernlint/lowering/lower.py: _identity_test).

Triton's code generator evaluates them statically: a tensor is never None, an omitted helper argument is.
flash-attn's AMD forward kernel (flash_attn_triton_amd/fwd_prefill.py, `load_fn`) chooses one of four masked
loads this way; kernlint compared the operands element-wise, kept all four loads and gave each its own
pipeline buffers.
"""
from __future__ import annotations

from kernlint.pipeline.api import Settings, lint_source
from kernlint.ir.nodes import OpKind

KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def load_fn(ptrs, offs_first, offs_second, n):
    if offs_first is not None and offs_second is not None:
        x = tl.load(ptrs, mask=(offs_first[:, None] < n) & (offs_second[None, :] < n), other=0.0)
    elif offs_first is not None:
        x = tl.load(ptrs, mask=offs_first[:, None] < n, other=0.0)
    elif offs_second is not None:
        x = tl.load(ptrs, mask=offs_second[None, :] < n, other=0.0)
    else:
        x = tl.load(ptrs)
    return x


@triton.jit
def k(a_ptr, c_ptr, n, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = load_fn(a_ptr + r[:, None] * BLOCK + r[None, :], r, None, n)
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], a)


def launch(a, c, n):
    k[(1,)](a, c, n, BLOCK=64)
'''


def _loads(source: str) -> list[int]:
    (kernel,) = [k for f in lint_source(source, "k.py", Settings()).files for k in f.kernels if k.jit.name == "k"]
    return [op.line for op, _ in kernel.ir.walk() if op.kind == OpKind.LOAD]


def test_only_the_branch_the_arguments_select_is_lowered() -> None:
    # offs_first is a tensor and offs_second is None: the `elif offs_first is not None` load, line 11 of KERNEL
    # (counted from the opening newline: line 1 is empty)
    assert KERNEL.splitlines()[11 - 1].strip().startswith("x = tl.load(ptrs, mask=offs_first[:, None] < n")
    assert _loads(KERNEL) == [11]
    both = KERNEL.replace("load_fn(a_ptr + r[:, None] * BLOCK + r[None, :], r, None, n)",
                          "load_fn(a_ptr + r[:, None] * BLOCK + r[None, :], None, None, n)")
    assert _loads(both) == [15]                                         # the unmasked `else` load
