from __future__ import annotations

from collections.abc import Iterator

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.frontend.api_problems import ApiProblem
from kernlint.pipeline.rule import Case, FileContext, Rule
from kernlint.rules._api import either, misuses

_HEAD = "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"


class DtypeCalled(Rule):
    """A jit function calls a Triton dtype as if it converted (`tl.float32(x)`): dtypes are not callable.

    ## What it does
    Flags calls, inside `@triton.jit` functions, of the dtype objects of `triton.language` (`tl.float32`,
    `tl.int64`, ...; which names are dtypes comes from kernlint's table of each Triton release's API).

    ## Why is this bad?
    `tl.float32(x)` reads like NumPy's or PyTorch's conversion, but a Triton dtype is a plain object without
    `__call__` in every release: compiling the kernel fails with "'dtype' object is not callable".

    ## Hardware
    None: this is the Triton front end, on every GPU.

    ## Recommended fix
    Convert with `x.to(tl.float32)` (or `tl.cast(x, tl.float32)`); for a constant, `tl.full((), v, tl.float32)`.

    ## Confidence
    Exact: no Triton release makes a dtype callable.
    """

    CODE = "KL312"
    SEVERITY = Severity.ERROR
    CONFIDENCE = Confidence.EXACT
    VALID = [Case(_HEAD + "def scale(x_ptr, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                  "    x = tl.load(x_ptr + offs).to(tl.float32)\n    tl.store(x_ptr + offs, x * 2)\n")]
    INVALID = [Case(_HEAD + "def scale(x_ptr, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                    "    x = tl.float32(tl.load(x_ptr + offs))  # expect: KL312\n    tl.store(x_ptr + offs, x * 2)\n")]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for m in misuses(ctx, ApiProblem.DTYPE_CALL):
            hint = f"; convert with {either(m.suggestions)}" if m.suggestions else ""
            yield self.diagnostic(ctx, m.line, f"`{m.code}` calls a dtype, which is not callable{hint}",
                                  kernel=m.function, code=m.code)
