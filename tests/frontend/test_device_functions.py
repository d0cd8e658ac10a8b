"""A jit function that returns a value is a device function, not a kernel (Triton compiles a `return <value>`
only in non-kernel functions), unless something launches or autotunes it."""
from __future__ import annotations

from kernlint.pipeline.api import Settings, lint_sources

HEAD = "import triton\nimport triton.language as tl\n"

TEMPLATE = HEAD + '''
@triton.jit
def silu_mul(x, y):
    xf = x.to(tl.float32)
    return xf / (1.0 + tl.exp(-xf)) * y


@triton.jit
def copy(X, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if N == 0:
        return
    tl.store(X + offs, tl.load(X + offs, mask=offs < N), mask=offs < N)
    return None


@triton.jit
def nested(X):
    def inner():
        return 1
    tl.store(X, 1.0)
'''


def _kernels(text: str) -> list[str]:
    result = lint_sources([("m.py", text.encode())], Settings(targets=("h100",)))
    return sorted(k.jit.qualname for f in result.files for k in f.kernels)


def test_returning_jit_function_is_not_a_kernel() -> None:
    # a bare `return` / `return None` and a nested def's return do not make a device function
    assert _kernels(TEMPLATE) == ["copy", "nested"]


def test_a_launched_returning_function_stays_a_kernel() -> None:
    launched = TEMPLATE + "\n\ndef run(x, y):\n    silu_mul[(1,)](x, y)\n"
    assert _kernels(launched) == ["copy", "nested", "silu_mul"]
