from __future__ import annotations

from collections.abc import Iterator

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.pipeline.rule import Case, FileContext, Rule

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
    (e.g. `with` blocks, calls into unknown libraries, tile indexing by value), and functions decorated
    like Triton kernels (`@something.jit`, `@jit`, with `tl.` calls in the body) whose decorator could not
    be resolved to triton (imported from a module kernlint could not find): those are not analysed.

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
        # a kernel whose decorator kernlint could not resolve to triton (imported through a module it could
        # not find) is not analysed at all: said, never silent
        for u in ctx.unresolved:
            yield self.diagnostic(ctx, u.line, f"decorator `{u.decorator}` of `{u.function}` could not be resolved "
                                  "to triton; the kernel is not analysed", kernel=u.function)
        # one finding per line and construct: a construct in a @triton.jit helper is inlined into every kernel
        # that calls it, and was reported once per kernel (13 repeats in the public corpus); the kernels are named
        found: dict[tuple[int, str], tuple[list[str], str]] = {}
        for k in ctx.kernels:
            for u in k.ir.unmodelled:
                names, _ = found.setdefault((u.line, u.construct), ([], k.jit.qualname))
                if k.jit.name not in names:
                    names.append(k.jit.name)
        lines: set[int] = set()
        for (line, construct), (names, qualname) in sorted(found.items()):
            if line in lines:
                continue   # one per line, as before: the first construct kernlint met there
            lines.add(line)
            who = f"`{names[0]}`" if len(names) == 1 else \
                f"`{names[0]}` and {len(names) - 1} more kernel{'s' if len(names) > 2 else ''}"
            yield self.diagnostic(ctx, line, f"kernlint does not model {construct} in {who}; "
                                  "their estimates are incomplete" if len(names) > 1 else
                                  f"kernlint does not model {construct} in {who}; its estimates are incomplete",
                                  kernel=qualname)
