from __future__ import annotations

from collections.abc import Iterator

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.frontend.api_problems import ApiProblem
from kernlint.pipeline.rule import Case, FileContext, Rule
from kernlint.rules._api import either, misuses

_GELU = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
         "def gelu(x_ptr, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n    x = tl.load(x_ptr + offs)\n"
         "    tl.store(x_ptr + offs, 0.5 * x * (1.0 + {erf}(x * 0.7071067811865476)))")


class TritonApiNotInRelease(Rule):
    """A jit function uses a `triton.language` name that the targeted Triton release does not have.

    ## What it does
    Looks up every `triton.language` attribute used inside `@triton.jit` functions in kernlint's table of each
    Triton release's API and flags names that the targeted release (`triton-version` in `[tool.kernlint]`,
    by default every Triton 3 release: only what all of them lack) lacks but another release has: APIs removed (`tl.libdevice`, gone
    since Triton 2.1) or added later than the targeted release. It names the releases that have it and, for
    a module that moved, where the function lives in the targeted release.

    ## Why is this bad?
    Kernels written for an older Triton keep importing fine and fail only when compiled: `tl.libdevice.erf`
    raises `AttributeError` on every Triton 3 release.

    ## Hardware
    None: this is the Triton front end, on every GPU.

    ## Recommended fix
    Use the suggested replacement (`tl.math.erf`, `tl.extra.cuda.libdevice.erf`), or set `triton-version` to
    the release the project really pins.

    ## Confidence
    Exact for the targeted release. A use under a version guard (a jit function or import inside an `if` or
    `try`, or an `if` in the kernel on a global value) is not reported: it may only run on a release that
    has the name.
    """

    CODE = "KL311"
    SEVERITY = Severity.ERROR
    CONFIDENCE = Confidence.EXACT
    VALID = [Case(_GELU.format(erf="tl.math.erf") + "\n"),
             Case("import triton\nimport triton.language as tl\n\ntry:\n    @triton.jit\n    def gelu(x):\n"
                  "        return 0.5 * x * (1.0 + tl.libdevice.erf(x * 0.7071067811865476))\n"
                  "except AttributeError:\n    pass\n")]
    INVALID = [Case(_GELU.format(erf="tl.libdevice.erf") + "  # expect: KL311\n")]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for m in misuses(ctx, ApiProblem.NOT_IN_RELEASE):
            module, _, attr = m.name.rpartition(".")
            having = m.releases
            span = having[0] if len(having) == 1 else f"{having[0]}-{having[-1]}" if _contiguous(having) else \
                ", ".join(having)
            hint = f"; use {either(m.suggestions)}" if m.suggestions else ""
            yield self.diagnostic(ctx, m.line, f"`{m.code}`: `{module}` has no attribute `{attr}` in Triton "
                                  f"{m.release} (only in {span}){hint}", kernel=m.function, code=m.code)


def _contiguous(releases: tuple[str, ...]) -> bool:
    from kernlint.frontend.triton_api import load

    all_releases = load().releases
    idx = [all_releases.index(r) for r in releases]
    return idx == list(range(idx[0], idx[0] + len(idx)))
