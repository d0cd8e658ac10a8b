from __future__ import annotations

from collections.abc import Iterator

from kernlint.diagnostic import Confidence, Diagnostic, Severity
from kernlint.rule import Case, FileContext, Rule

_KERNEL = '''import triton
import triton.language as tl


@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
{extra}    tl.store(x_ptr + offs, x)
'''


class UnmodelledConstruct(Rule):
    """Part of a kernel uses a construct kernlint does not model; its estimates are incomplete.

    ## What it does
    Reports, once per kernel and line, statements and calls the dataflow graph could not represent
    (e.g. `with` blocks, calls into unknown libraries, tile indexing by value).

    ## Why is this bad?
    It is not bad code: it means kernlint's register and shared-memory numbers for this kernel miss
    whatever that construct costs, and are marked heuristic.

    ## Hardware
    None.

    ## Recommended fix
    Nothing to fix in the kernel; report the construct so the model can learn it, or suppress with
    `# kernlint: noqa[KL002]`.

    ## Confidence
    Exact: the construct and its line are what the frontend saw.
    """

    CODE = "KL002"
    SEVERITY = Severity.INFO
    CONFIDENCE = Confidence.EXACT
    VALID = [Case(_KERNEL.format(extra=""))]
    INVALID = [Case(_KERNEL.format(extra="    with open('x') as f:  # expect: KL002\n        pass\n"))]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for k in ctx.kernels:
            seen: set[int] = set()
            for u in k.ir.unmodelled:
                if u.line in seen:
                    continue
                seen.add(u.line)
                yield self.diagnostic(ctx, u.line, f"kernlint does not model {u.construct} in `{k.jit.name}`; "
                                      "its estimates are incomplete", kernel=k.jit.qualname)
