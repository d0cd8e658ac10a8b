from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.ir.symbolic import Unknown
from kernlint.pipeline.rule import Case, FileContext, Rule
from kernlint.rules._cases import autotuned_matmul

_A = "triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 64}, num_warps=8, num_stages=3)"
_B = "triton.Config({'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 32}, num_warps=4, num_stages=4)"
# one Config evaluated per tuple; (64, 4) is listed twice
_COMPREHENSION = ("[triton.Config({'BLOCK_M': bm, 'BLOCK_N': 64, 'BLOCK_K': 32}, num_warps=w) "
                  "for bm, w in [(64, 4), (128, 8), (64, 4)]]")
_A_AGAIN = "triton.Config({'BLOCK_K': 64, 'BLOCK_M': 128, 'BLOCK_N': 128}, num_stages=3, num_warps=8)"


def _label(kwargs: Any, options: Any) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in (*kwargs.items(), *options.items()))


def _key(kwargs: Any, options: Any) -> tuple[Any, ...]:
    return (tuple(sorted((k, repr(v)) for k, v in kwargs.items())),
            tuple(sorted((k, repr(v)) for k, v in options.items())))


class DuplicateAutotuneConfig(Rule):
    """Two `triton.Config`s of one `@triton.autotune` list are identical.

    ## What it does
    Compares the statically evaluated configs of every autotune list (block sizes and launch options,
    in any keyword order) and flags each repeat, including the repeats a comprehension produces from one
    `triton.Config(...)` (`for bm, w in [(64, 4), (128, 8), (64, 4)]`). Configs with a value kernlint
    cannot evaluate are never called equal.

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
    INVALID = [Case(autotuned_matmul(_A, _B, _A_AGAIN + ",  # expect: KL402").replace("KL402,\n", "KL402\n")),
               Case(autotuned_matmul(_COMPREHENSION).replace("        [triton", "        *[triton").replace(
                   "(64, 4)]],", "(64, 4)]],  # expect: KL402"))]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for k in ctx.kernels:
            spec = k.jit.autotune
            if spec is None:
                continue
            first: dict[tuple[Any, ...], int] = {}
            repeated: set[tuple[int, int]] = set()
            for cfg in spec.configs:
                key = _key(cfg.kwargs, cfg.options)
                if key not in first:
                    first[key] = cfg.line
                    continue
                if cfg.unknown or any(isinstance(v, Unknown) for v in (*cfg.kwargs.values(), *cfg.options.values())):
                    continue   # equal only as far as kernlint can tell
                if first[key] != cfg.line:
                    yield self.diagnostic(ctx, cfg.line,
                                          f"autotune config of `{k.jit.name}` repeats the one at line {first[key]}",
                                          col=cfg.col, kernel=k.jit.qualname)
                elif (cfg.line, cfg.col) not in repeated:
                    # one `triton.Config(...)` evaluated more than once: a comprehension over tuples that
                    # holds the same entry twice (or a loop variable the config does not use)
                    repeated.add((cfg.line, cfg.col))
                    yield self.diagnostic(ctx, cfg.line,
                                          f"the autotune configs of `{k.jit.name}` built here include the same "
                                          f"config twice ({_label(cfg.kwargs, cfg.options)})",
                                          col=cfg.col, kernel=k.jit.qualname)
