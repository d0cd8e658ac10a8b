"""The base class every rule in `rules/` subclasses, and the context a rule sees.

A rule is one file with one class named after the problem, a stable `CODE`, user docs in its docstring
(`## What it does`, `## Why is this bad?`, `## Hardware`, `## Recommended fix`, `## Confidence`) and
`VALID`/`INVALID` example sources whose `# expect: KLxxx` markers the test suite checks.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from kernlint.diagnostic import Confidence, Diagnostic, Severity, Span

if TYPE_CHECKING:
    from kernlint.analysis.configs import ConfigPoint
    from kernlint.analysis.estimate import KernelEstimate
    from kernlint.frontend.facts import JitFunction
    from kernlint.frontend.parse import ParseFailure
    from kernlint.hardware.specs import GpuSpec
    from kernlint.ir.nodes import KernelIR
    from kernlint.settings import Settings

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
        if code and text.count(code) == 1:
            # the expression the message names, when the line spells it exactly once: editors and CI
            # annotations then mark it, not the indentation and a trailing comment
            col = text.index(code)
            end_col = col + len(code)
        return Diagnostic(self.CODE, Span.at(ctx.path, line, col, line, max(col, end_col)), message,
                          severity or self.SEVERITY, confidence or self.CONFIDENCE, self.name(), kernel,
                          target, config, notes)


def estimates_by_point(k: KernelAnalysis) -> Iterator[tuple["ConfigPoint", "KernelEstimate"]]:
    for e in k.estimates:
        yield e.config, e


def fmt_bytes(n: int) -> str:
    return f"{n:,} B"
