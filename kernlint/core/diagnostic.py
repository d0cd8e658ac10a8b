"""The diagnostic model shared by rules, reporters, the LSP server and the JSON output."""
from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    ERROR = "error"      # the kernel will not compile or will compute wrong results on the target
    WARNING = "warning"  # it compiles but wastes the hardware (spills, low occupancy, ...)
    INFO = "info"        # worth knowing; never fails a CI run on its own


class Confidence(str, enum.Enum):
    """How sure a number is. Borrowed from pylint's confidence levels, adapted to estimates."""

    EXACT = "exact"          # follows from source and documented hardware limits alone
    ESTIMATE = "estimate"    # a model calibrated against Triton/ptxas measurements
    HEURISTIC = "heuristic"  # a rule of thumb; the compiler may well do better


@dataclass(frozen=True, slots=True)
class Pos:
    """1-based line, 0-based code-point column (LibCST's CodePosition convention)."""

    line: int
    col: int = 0


@dataclass(frozen=True, slots=True)
class Span:
    path: str
    start: Pos
    end: Pos

    @staticmethod
    def at(path: str, line: int, col: int = 0, end_line: int | None = None, end_col: int | None = None) -> Span:
        return Span(path, Pos(line, col), Pos(end_line if end_line is not None else line,
                                               end_col if end_col is not None else col))


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    span: Span
    message: str
    severity: Severity
    confidence: Confidence
    rule: str = ""                       # rule class name, e.g. "SharedMemoryOverflow"
    kernel: str | None = None            # qualname of the kernel it is about
    target: str | None = None            # GPU target key, e.g. "h100"
    config: str | None = None            # human-readable config label
    notes: tuple[str, ...] = field(default=())

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.span.path, self.span.start.line, self.span.start.col, self.code, self.message)
