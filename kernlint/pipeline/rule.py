"""The base class every rule in `rules/` subclasses, and the context a rule sees.

A rule is one file with one class named after the problem, a stable `CODE`, user docs in its docstring
(`## What it does`, `## Why is this bad?`, `## Hardware`, `## Recommended fix`, `## Confidence`) and
`VALID`/`INVALID` example sources whose `# expect: KLxxx` markers the test suite checks.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity, Span

if TYPE_CHECKING:
    from kernlint.analysis.configs import ConfigPoint
    from kernlint.analysis.estimate import KernelEstimate
    from kernlint.frontend.facts import JitFunction, UnresolvedDecorator
    from kernlint.frontend.names import NameResolver
    from kernlint.frontend.parse import ParseFailure
    from kernlint.hardware.specs import GpuSpec
    from kernlint.ir.nodes import KernelIR
    from kernlint.pipeline.settings import Settings

REQUIRED_SECTIONS = ("## What it does", "## Why is this bad?", "## Hardware", "## Recommended fix",
                     "## Confidence")


@dataclass(frozen=True, slots=True)
class Case:
    """An example file for a rule's docs and tests; `# expect: CODE` marks the lines it must flag."""

    source: str
    targets: tuple[str, ...] = ("h100",)
    # (relative path, text) written next to the case before linting it, e.g. a config store for KL406;
    # the case is then linted with that directory as the settings root
    files: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class KernelAnalysis:
    jit: "JitFunction"
    ir: "KernelIR"
    points: tuple["ConfigPoint", ...]
    estimates: tuple["KernelEstimate", ...]   # one per (point, target), points outermost


@dataclass(slots=True)
class FileContext:
    path: str
    lines: list[str]
    targets: tuple["GpuSpec", ...]
    kernels: list[KernelAnalysis] = field(default_factory=list)
    parse_failure: "ParseFailure | None" = None
    settings: "Settings | None" = None          # the file's resolved settings (KL406 finds the store)
    # every jit function of the file (kernels and helpers) and its name resolution: the API-misuse rules
    # (KL31x) judge helpers too, which `kernels` leaves out
    jit_functions: tuple["JitFunction", ...] = ()
    names: "NameResolver | None" = None
    # functions decorated like kernels whose decorator does not resolve to triton (KL002 says so)
    unresolved: tuple["UnresolvedDecorator", ...] = ()


class Rule:
    CODE: ClassVar[str] = ""
    SEVERITY: ClassVar[Severity] = Severity.WARNING
    CONFIDENCE: ClassVar[Confidence] = Confidence.ESTIMATE
    VALID: ClassVar[list[Case]] = []
    INVALID: ClassVar[list[Case]] = []

    @classmethod
    def name(cls) -> str:
        return cls.__name__

    @classmethod
    def summary(cls) -> str:
        doc = (cls.__doc__ or "").strip()
        return doc.splitlines()[0] if doc else cls.__name__

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        raise NotImplementedError

    def diagnostic(self, ctx: FileContext, line: int, message: str, *, col: int = 0,
                   kernel: str | None = None, target: str | None = None, config: str | None = None,
                   confidence: Confidence | None = None, severity: Severity | None = None,
                   notes: tuple[str, ...] = (), code: str | None = None) -> Diagnostic:
        text = ctx.lines[line - 1] if 0 < line <= len(ctx.lines) else ""
        end_col = len(text) if text else col
        end_line = line
        found = locate_code(ctx.lines, line, code) if code else None
        if found is not None:
            # the expression the message names, when the source spells it exactly once from this line on
            # (possibly over several lines): editors and CI annotations then mark it, not the whole line
            col, end_line, end_col = found
        return Diagnostic(self.CODE, Span.at(ctx.path, line, col, end_line, max(col, end_col) if end_line == line
                                             else end_col), message,
                          severity or self.SEVERITY, confidence or self.CONFIDENCE, self.name(), kernel,
                          target, config, notes)


CODE_SEARCH_LINES = 8   # an expression the IR places on `line` may continue over the next lines


def locate_code(lines: list[str], line: int, code: str) -> tuple[int, int, int] | None:
    """(start column on `line`, end line, end column) of `code` as the source spells it starting on `line`,
    whitespace (line breaks, indentation) between its tokens ignored; None unless it occurs exactly once."""
    if not 0 < line <= len(lines):
        return None
    text = lines[line - 1]
    if text.count(code) == 1:
        return text.index(code), line, text.index(code) + len(code)
    # a multi-line expression: match on the text with every whitespace run collapsed to one space, and map
    # the match back to (line, column) through the position each collapsed character came from
    chars: list[str] = []
    where: list[tuple[int, int]] = []
    for n, src in enumerate(lines[line - 1:line - 1 + CODE_SEARCH_LINES], start=line):
        for c, ch in enumerate(src + "\n"):
            if ch.isspace():
                if chars and chars[-1] != " ":
                    chars.append(" ")
                    where.append((n, c))
                continue
            chars.append(ch)
            where.append((n, c))
    flat, want = "".join(chars), " ".join(code.split())
    found = [i for i in range(len(flat)) if want and flat.startswith(want, i)]
    starts = [i for i in found if where[i][0] == line]
    if len(starts) == 1:
        (_, col), (last, end) = where[starts[0]], where[starts[0] + len(want) - 1]
        return col, last, end + 1
    if starts:
        return None   # twice on the line: ambiguous
    # not on `line` but further down the same statement (`q = (Q +\n    off_b * stride_qb)`): the span runs
    # from the statement's first token to the end of the expression, so it still starts on `line` (where a
    # noqa comment for it already sits) and ends where the expression does
    later = [i for i in found if line < where[i][0] <= _statement_end(lines, line)]
    if len(later) != 1:
        return None
    last, end = where[later[0] + len(want) - 1]
    return len(text) - len(text.lstrip()), last, end + 1


def _statement_end(lines: list[str], line: int) -> int:
    """The last line of the statement that starts on `line`: brackets still open, or a trailing backslash, carry
    it on (quotes are not tracked: a bracket inside a string can only end the search early)."""
    depth, n = 0, line
    while n <= min(len(lines), line + CODE_SEARCH_LINES - 1):
        src = lines[n - 1].split("#", 1)[0]
        depth += sum(src.count(c) for c in "([{") - sum(src.count(c) for c in ")]}")
        if depth <= 0 and not src.rstrip().endswith("\\"):
            return n
        n += 1
    return n - 1


def estimates_by_point(k: KernelAnalysis) -> Iterator[tuple["ConfigPoint", "KernelEstimate"]]:
    for e in k.estimates:
        yield e.config, e


def fmt_bytes(n: int) -> str:
    return f"{n:,} B"
