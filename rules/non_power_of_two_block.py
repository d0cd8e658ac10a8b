from __future__ import annotations

from collections.abc import Iterator

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.ir.symbolic import as_int
from kernlint.pipeline.rule import Case, FileContext, Rule
from kernlint.rules._cases import ROW_KERNEL
from kernlint.ir.nodes import OpKind


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


class NonPowerOfTwoBlock(Rule):
    """`tl.arange` spans a range whose length is not a power of two, or `num_warps` is not one: Triton
    refuses to compile it.

    ## What it does
    Evaluates the length `end - start` of every `tl.arange` under each config (literal bounds or
    constexpr block sizes from launch sites, autotune configs and defaults) and flags lengths that are
    not powers of two. Also flags configs whose `num_warps` is not a power of two (Triton's CUDA backend
    asserts it) or whose `num_stages`/`maxnreg` is negative; such configs are not estimated.

    ## Why is this bad?
    Triton requires power-of-two tile shapes: `tl.arange(0, 1000)` fails at compile time with
    "arange's range must be a power of 2". Block sizes derived from data (`BLOCK=n_cols`) hit this only
    for some inputs, in production.

    ## Hardware
    None: a Triton language restriction (tensor shapes map onto power-of-two layouts).

    ## Recommended fix
    Round up with `triton.next_power_of_2(n)` and mask the tail (`mask = offs < n`).

    ## Confidence
    Exact when the length is known statically.
    """

    CODE = "KL301"
    SEVERITY = Severity.ERROR
    CONFIDENCE = Confidence.EXACT
    VALID = [Case(ROW_KERNEL.format(kwargs="BLOCK=1024", marker=""))]
    INVALID = [Case(ROW_KERNEL.format(kwargs="BLOCK=1000", marker="  # expect: KL301")),
               # a warp count Triton's CUDA backend asserts on ("num_warps must be a power of 2")
               Case(ROW_KERNEL.format(kwargs="BLOCK=1024, num_warps=6", marker="  # expect: KL301"))]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for k in ctx.kernels:
            seen: set[int] = set()
            for point in k.points:   # launch options Triton asserts on (num_warps must be a power of 2)
                if point.invalid and point.origin != "cli" and point.line not in seen:
                    seen.add(point.line)
                    yield self.diagnostic(ctx, point.line, f"config of `{k.jit.name}`: {point.invalid}; "
                                          "nothing was estimated for it", col=point.col, kernel=k.jit.qualname,
                                          config=point.label())
            aranges = [op for op, _ in k.ir.walk() if op.kind == OpKind.ARANGE]
            for point in k.points:
                for op in aranges:
                    size_expr = op.result.shape[0] if op.result is not None else None
                    if size_expr is None:
                        continue
                    n = as_int(size_expr.evaluate(point.constexprs))
                    if n is None or _is_pow2(n):
                        continue
                    symbolic = bool(size_expr.free_symbols())
                    line, col = (point.line, point.col) if symbolic and point.origin != "default" else (op.line, 0)
                    if line in seen:
                        continue
                    seen.add(line)
                    where = f" ({point.label()})" if symbolic else ""
                    yield self.diagnostic(
                        ctx, line,
                        f"`tl.arange` at line {op.line} of `{k.jit.name}` has length {n}{where}, not a power of "
                        f"two; Triton will refuse to compile it (use triton.next_power_of_2 and a mask)",
                        col=col, kernel=k.jit.qualname, config=point.label() if symbolic else None,
                        code=None if line != op.line else "tl.arange(")
