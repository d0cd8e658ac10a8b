from __future__ import annotations

from collections.abc import Iterator

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.frontend.api_problems import ApiProblem
from kernlint.pipeline.rule import Case, FileContext, Rule
from kernlint.rules._api import either, judged, misuses

_HEAD = "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
_COPY = ("def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
         "    m = offs < n\n")


class UnknownKeywordArgument(Rule):
    """A jit function passes a keyword argument that the `triton.language` function does not accept.

    ## What it does
    Checks the keyword arguments of calls of `triton.language` functions and classes inside `@triton.jit`
    functions against their parameters in the targeted Triton release (`triton-version`; by default every
    Triton 3 release in kernlint's table, so only a keyword none of them takes), read from the release's own `def`s.

    ## Why is this bad?
    A misspelt keyword (`tl.load(p, msk=m)`) is not ignored: compiling the kernel fails with "got an
    unexpected keyword argument". Keywords also come and go between releases (`tl.range(...,
    warp_specialize=True)` is new in 3.4).

    ## Hardware
    None: this is the Triton front end, on every GPU.

    ## Recommended fix
    Use the suggested parameter name, or set `triton-version` to the release the project pins.

    ## Confidence
    Exact: the parameters are those of the release's function definitions; functions taking `**kwargs` are
    not checked. Under a version guard a keyword is flagged only when no release accepts it.
    """

    CODE = "KL313"
    SEVERITY = Severity.ERROR
    CONFIDENCE = Confidence.EXACT
    VALID = [Case(_HEAD + _COPY + "    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m, other=0.0), mask=m)\n")]
    INVALID = [Case(_HEAD + _COPY + "    x = tl.load(x_ptr + offs, msk=m, other=0.0)  # expect: KL313\n"
                    "    tl.store(y_ptr + offs, x, mask=m)\n")]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for m in misuses(ctx, ApiProblem.UNKNOWN_KEYWORD):
            hint = f"; did you mean {either(m.suggestions)}?" if m.suggestions else ""
            fn = m.name.replace("triton.language.", "tl.", 1) if m.name.startswith("triton.language.") else m.name
            yield self.diagnostic(ctx, m.line, f"`{fn}` has no keyword argument `{m.keyword}` in {judged(m)}{hint}",
                                  kernel=m.function, code=m.code)
