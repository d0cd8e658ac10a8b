from __future__ import annotations

from collections.abc import Iterator

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.pipeline.rule import Case, FileContext, Rule


class ParseError(Rule):
    """File cannot be parsed or decoded, so none of its kernels were linted.

    ## What it does
    Reports files that are not valid Python (syntax errors), not UTF-8, binary, or too large to lint.

    ## Why is this bad?
    kernlint reads kernels from the syntax tree; a file it cannot parse is a file whose kernels go
    unchecked. Other files are still linted.

    ## Hardware
    None: this is about the source file.

    ## Recommended fix
    Fix the syntax error (Triton would reject the file too), or exclude generated files.

    ## Confidence
    Exact: the parser's own error and position.
    """

    CODE = "KL001"
    SEVERITY = Severity.ERROR
    CONFIDENCE = Confidence.EXACT
    VALID = [Case("import triton\n\n\n@triton.jit\ndef k(x_ptr):\n    pass\n")]
    INVALID = [Case("import triton\n\n\n@triton.jit\ndef k(x_ptr:  # expect: KL001\n    pass\n")]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        failure = ctx.parse_failure
        if failure is not None:
            yield self.diagnostic(ctx, max(1, failure.line), failure.message, col=failure.col,
                                  severity=Severity.WARNING if failure.refused else None)
