from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity, Span
from kernlint.pipeline.rule import Case, FileContext, Rule
from kernlint.rules._cases import ROW_KERNEL

if TYPE_CHECKING:
    from kernlint.pipeline.suppression import Unused

_BAD_BLOCK = ROW_KERNEL.format(kwargs="BLOCK=1000", marker="")


class UnusedSuppression(Rule):
    """A `# kernlint: noqa` comment suppressed nothing.

    ## What it does
    Reports suppression comments (line, kernel-decorator and file-level) that no finding matched, codes
    inside `noqa[...]` that matched nothing, and codes that name no rule. To judge a comment, the rules it
    names are run even when they are not selected, so `kernlint check --select KL003` lists every stale
    suppression in a tree.

    ## Why is this bad?
    A stale suppression hides the next real finding on that line or kernel: after a block size or a
    config changes, a `noqa[KL101]` kept "just in case" silences a shared-memory overflow nobody saw.

    ## Hardware
    None: this is about the source file.

    ## Recommended fix
    Delete the comment, or the codes in it that are reported. To keep one on purpose, add `KL003` to it:
    `# kernlint: noqa[KL201, KL003]`.

    ## Confidence
    Exact for the current settings and targets: a suppression used only on another target (`--target
    b200`) is reported when that target is not linted.
    """

    CODE = "KL003"
    SEVERITY = Severity.WARNING
    CONFIDENCE = Confidence.EXACT
    VALID = [
        Case(_BAD_BLOCK.replace("BLOCK=1000)", "BLOCK=1000)  # kernlint: noqa[KL301]")),
        Case(_BAD_BLOCK.replace("@triton.jit", "@triton.jit  # kernlint: noqa[KL3]")),
        Case("# kernlint: noqa[KL301]\n" + _BAD_BLOCK),
        Case(ROW_KERNEL.format(kwargs="BLOCK=1024", marker="  # kernlint: noqa[KL301, KL003]")),
    ]
    INVALID = [
        Case(ROW_KERNEL.format(kwargs="BLOCK=1024", marker="  # kernlint: noqa[KL301]  # expect: KL003")),
        Case(ROW_KERNEL.format(kwargs="BLOCK=1024", marker="  # kernlint: noqa  # expect: KL003")),
        Case(_BAD_BLOCK.replace("BLOCK=1000)", "BLOCK=1000)  # kernlint: noqa[KL301, KL101]  # expect: KL003")),
        Case("# kernlint: noqa[KL999]  # expect: KL003\n" + ROW_KERNEL.format(kwargs="BLOCK=1024", marker="")),
    ]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        # Suppressions are judged after every other rule ran (kernlint.pipeline.suppression calls `report`).
        return iter(())

    def report(self, ctx: FileContext, found: list[Unused]) -> list[Diagnostic]:
        out: list[Diagnostic] = []
        for u in found:
            d = u.directive
            parts = []
            if not u.codes and not u.unknown:
                parts.append("blanket suppression matched no finding")
            if u.codes:
                parts.append(f"{', '.join(u.codes)} matched no finding")
            if u.unknown:
                parts.append(f"unknown rule code{'s' if len(u.unknown) > 1 else ''} {', '.join(u.unknown)}")
            where = "file-level " if d.file_level else "kernel " if d.kernel else ""
            out.append(Diagnostic(self.CODE, Span.at(ctx.path, d.line, d.col, d.line, d.end_col),
                                  f"unused {where}suppression: {'; '.join(parts)}", self.SEVERITY, self.CONFIDENCE,
                                  self.name(), d.kernel))
        return out
