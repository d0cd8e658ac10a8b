"""The pipeline's result types: what `kernlint.pipeline.api` returns and reporters, `--fix`, `--add-noqa` and the server read.

A module of its own so that reading a result never imports the orchestrator (`kernlint.pipeline.api`, `runner`) or the
engine: only the types' names are needed at run time (tests/project/test_layers.py holds reporters to it).
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kernlint.core.diagnostic import Diagnostic, Severity

if TYPE_CHECKING:
    from kernlint.analysis.estimate import KernelEstimate
    from kernlint.frontend.facts import ModuleFacts
    from kernlint.frontend.parse import ParseFailure
    from kernlint.lowering.entries import ModuleRef
    from kernlint.pipeline.rule import KernelAnalysis


class PathError(Exception):
    """A path given on the command line does not exist (exit code 2)."""


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic]
    kernels: list[KernelAnalysis]
    internal_error: str | None = None
    warnings: list[str] = field(default_factory=list)    # e.g. unknown codes in noqa comments
    # Set when the result came from the cache, which keeps diagnostics but not the kernels' estimates.
    cached_counts: tuple[int, int] | None = None         # (kernels, estimates)
    # content_digest of the bytes linted: --fix and --add-noqa edit by line and column, so they refuse a file
    # whose content changed since (None: not known, e.g. an unreadable file)
    source_digest: str | None = None
    # kernels not analysed because the file is another vendor's backend code (kernlint/frontend/vendor.py)
    vendor_skipped: int = 0
    vendor_reason: str | None = None
    cached_unknown: tuple[str, ...] = ()                  # with cached_counts: unknown_estimates

    @property
    def kernel_count(self) -> int:
        return self.cached_counts[0] if self.cached_counts else len(self.kernels)

    @property
    def estimate_count(self) -> int:
        return self.cached_counts[1] if self.cached_counts else sum(len(k.estimates) for k in self.kernels)

    @property
    def unknown_estimates(self) -> tuple[str, ...]:
        """`kernel: why` for each estimate that could not be made (a constexpr nobody states, ...)."""
        if self.cached_counts:
            return self.cached_unknown
        return tuple(f"{k.jit.qualname}: " + (e.config.invalid or ", ".join(
                         f"{n} unknown ({e.config.unknown[n]})" if e.config.unknown.get(n) else f"{n} unknown"
                         for n in e.missing))
                     for k in self.kernels for e in k.estimates if not e.estimated)


@dataclass
class LintResult:
    files: list[FileResult]
    path_errors: list[str] = field(default_factory=list)   # paths not linted: missing, unreadable directories

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for f in self.files for d in f.diagnostics]

    @property
    def kernel_count(self) -> int:
        return sum(f.kernel_count for f in self.files)

    @property
    def estimate_count(self) -> int:
        return sum(f.estimate_count for f in self.files)

    @property
    def warnings(self) -> list[str]:
        return list(dict.fromkeys(w for f in self.files for w in f.warnings))

    @property
    def vendor_skipped(self) -> int:
        return sum(f.vendor_skipped for f in self.files)

    @property
    def internal_errors(self) -> list[str]:
        return [f"{f.path}: {f.internal_error}" for f in self.files if f.internal_error]

    def exit_code(self, exit_zero: bool = False) -> int:
        if self.internal_errors or self.path_errors:
            return 2
        if exit_zero:
            return 0
        return 1 if any(d.severity is not Severity.INFO for d in self.diagnostics) else 0


@dataclass
class ParsedFile:
    """One file read and parsed, before linting: the frontend's facts, or why there are none."""

    path: str
    data: bytes
    text: str | None
    failure: ParseFailure | None
    facts: ModuleFacts | None
    module: ModuleRef | None
    crash: str | None = None


def content_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()



def iter_estimates(result: LintResult) -> Iterator[tuple[str, KernelAnalysis, KernelEstimate]]:
    for f in result.files:
        for k in f.kernels:
            for e in k.estimates:
                yield f.path, k, e
