from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kernlint.diagnostic import Confidence, Diagnostic, Severity
from kernlint.rule import Case, FileContext, Rule
from kernlint.rules._cases import autotuned_matmul

_A = "triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 64}, num_warps=8, num_stages=3)"
_B = "triton.Config({'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 32}, num_warps=4, num_stages=4)"
_A_AGAIN = "triton.Config({'BLOCK_K': 64, 'BLOCK_M': 128, 'BLOCK_N': 128}, num_stages=3, num_warps=8)"


def _key(kwargs: Any, options: Any) -> tuple[Any, ...]:
    return (tuple(sorted((k, repr(v)) for k, v in kwargs.items())),
            tuple(sorted((k, repr(v)) for k, v in options.items())))


class DuplicateAutotuneConfig(Rule):
    """Two `triton.Config`s of one `@triton.autotune` list are identical.

    ## What it does
    Compares the statically evaluated configs of every autotune list (block sizes and launch options,
    in any keyword order) and flags each repeat.

    ## Why is this bad?
    The autotuner compiles and benchmarks every entry; a duplicate doubles that cost and often hides a
    typo (the config that was meant to differ).

    ## Hardware
    None.

    ## Recommended fix
    Delete the repeat, or change the value that was meant to differ.

    ## Confidence
    Exact, for configs kernlint can evaluate statically.
    """

    CODE = "KL402"
    SEVERITY = Severity.WARNING
    CONFIDENCE = Confidence.EXACT
    VALID = [Case(autotuned_matmul(_A, _B))]
    INVALID = [Case(autotuned_matmul(_A, _B, _A_AGAIN + ",  # expect: KL402").replace("KL402,\n", "KL402\n"))]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for k in ctx.kernels:
            spec = k.jit.autotune
            if spec is None:
                continue
            first: dict[tuple[Any, ...], int] = {}
            for cfg in spec.configs:
                key = _key(cfg.kwargs, cfg.options)
                if key in first and first[key] != cfg.line:
                    yield self.diagnostic(ctx, cfg.line,
                                          f"autotune config of `{k.jit.name}` repeats the one at line {first[key]}",
                                          col=cfg.col, kernel=k.jit.qualname)
                first.setdefault(key, cfg.line)
