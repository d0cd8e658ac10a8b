from __future__ import annotations

from collections.abc import Iterator

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.frontend.api_problems import ApiProblem
from kernlint.pipeline.rule import Case, FileContext, Rule
from kernlint.rules._api import either, judged, misuses

_HEAD = "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"


class UnknownTritonAttribute(Rule):
    """A jit function uses a `triton.language` name that no Triton release has (`tl.cidv`): compiling it fails.

    ## What it does
    Looks up every `triton.language` attribute used inside `@triton.jit` functions (however `tl` was imported)
    in kernlint's table of the public API of each Triton release from 2.0 to 3.9, generated from the released
    wheels, and flags names that none of them has, with the closest existing names as suggestions.

    ## Why is this bad?
    Triton resolves the name only when it compiles the kernel, so a typo such as `tl.cidv` for `tl.cdiv`
    passes imports and unit tests that never launch that kernel, and fails in production the first time it
    is compiled (`AttributeError: module 'triton.language' has no attribute 'cidv'`).

    ## Hardware
    None: this is the Triton front end, on every GPU.

    ## Recommended fix
    Use the suggested name; names that moved between releases are reported by KL311 instead.

    ## Confidence
    Exact. A use is skipped when the name's meaning is not fixed by the source: a parameter or local shadows
    the import, or the file binds it twice (`try: import ... except: ...`). A name newer than Triton 3.9 is
    unknown to the table: regenerate it (benchmarks/triton_api_table.py) when a release appears.
    """

    CODE = "KL310"
    SEVERITY = Severity.ERROR
    CONFIDENCE = Confidence.EXACT
    VALID = [Case(_HEAD + "def blocks(out_ptr, n, BLOCK: tl.constexpr):\n    tl.store(out_ptr, tl.cdiv(n, BLOCK) * BLOCK)\n"),
             Case("import triton\nfrom triton import language as tl\n\n\n@triton.jit\n"
                  "def shadowed(tl, x):\n    return tl.cidv(x, 2)\n")]
    INVALID = [Case(_HEAD + "def blocks(out_ptr, n, BLOCK: tl.constexpr):\n"
                    "    tl.store(out_ptr, tl.cidv(n, BLOCK) * BLOCK)  # expect: KL310\n"),
               Case("import triton\nfrom triton.language import math\n\n\n@triton.jit\n"
                    "def act(x):\n    return math.sigmiod(x)  # expect: KL310\n")]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for m in misuses(ctx, ApiProblem.UNKNOWN_ATTRIBUTE):
            hint = f"; did you mean {either(m.suggestions)}?" if m.suggestions else ""
            module, _, attr = m.name.rpartition(".")
            yield self.diagnostic(ctx, m.line, f"`{m.code}`: `{module}` has no attribute `{attr}` in "
                                  f"{judged(m)}{hint}", kernel=m.function, code=m.code)
