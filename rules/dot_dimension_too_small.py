from __future__ import annotations

from collections.abc import Iterator

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.pipeline.rule import Case, FileContext, Rule
from kernlint.rules._cases import autotuned_matmul

MIN_DOT_DIM = 16  # Triton: "All non-batch values in both first input shape ... must be >= 16"


class DotDimensionTooSmall(Rule):
    """A `tl.dot` has an M, N or K dimension below 16 in some config: Triton rejects it.

    ## What it does
    Evaluates the shapes of each `tl.dot`'s operands under every config and flags dimensions < 16.

    ## Why is this bad?
    Tensor-core instructions work on 16-wide fragments; Triton raises a compile error for smaller dot
    dimensions, so an autotune config with `BLOCK_K=8` is a guaranteed failure (and a skinny M wants
    padding to 16, not a 8-row tile).

    ## Hardware
    mma.sync / wgmma / tcgen05 fragments are at least 16 elements along every non-batch dimension.

    ## Recommended fix
    Use block sizes ≥ 16 for every dot dimension; pad skinny problems and mask.

    ## Confidence
    Exact when the block sizes are known statically.
    """

    CODE = "KL302"
    SEVERITY = Severity.ERROR
    CONFIDENCE = Confidence.EXACT
    VALID = [Case(autotuned_matmul("triton.Config({'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 16}, num_warps=4)"))]
    INVALID = [Case(autotuned_matmul(
        "triton.Config({'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 32}, num_warps=4)",
        "triton.Config({'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 8}, num_warps=4),  # expect: KL302",
    ).replace("KL302,\n", "KL302\n"))]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for k in ctx.kernels:
            seen: set[int] = set()
            for e in k.estimates:
                for d in e.dots:
                    small = {name: v for name, v in (("M", d.m), ("N", d.n), ("K", d.k))
                             if v is not None and v < MIN_DOT_DIM}
                    if not small:
                        continue
                    symbolic = any(getattr(d.op.dot_attrs(), x).free_symbols() for x in small)
                    line, col = (e.config.line, e.config.col) if symbolic else (d.op.line, 0)
                    if line in seen:
                        continue
                    seen.add(line)
                    dims = ", ".join(f"{n}={v}" for n, v in small.items())
                    yield self.diagnostic(
                        ctx, line,
                        f"`tl.dot` at line {d.op.line} of `{k.jit.name}` has {dims} < {MIN_DOT_DIM} "
                        f"({e.config.label()}); Triton will reject it",
                        col=col, kernel=k.jit.qualname, config=e.config.label())
