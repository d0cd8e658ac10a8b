"""Output formats; each module renders a LintResult and nothing else.

`render(name, result, out, ctx)` dispatches by format name. Renderers are imported lazily so that a
machine-readable format never pays for `rich` (cold start budget, DESIGN.md §11).
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TextIO

from kernlint.text_lines import source_lines

if TYPE_CHECKING:
    from kernlint.api import FileResult, LintResult

# format name → "module:function" in this package; every function takes (result, out, ctx)
_RENDERERS = {
    "full": "terminal:render_full_to",
    "concise": "terminal:render_concise_to",
    "json": "json_format:render_to",
    "json-lines": "json_lines:render",
    "github": "github:render",
    "sarif": "sarif:render",
    "gitlab": "gitlab:render",
    "rdjson": "rdjson:render",
    "junit": "junit:render",
    "markdown": "markdown:render",
}
FORMATS = tuple(_RENDERERS)


def find_root(start: Path | None = None) -> Path:
    """The repository root (nearest ancestor with `.git`), else the start directory.

    CI consumers resolve paths against the checkout root: GitHub code scanning maps SARIF URIs
    relative to `%SRCROOT%` onto the repository, GitLab Code Quality wants repo-relative paths.
    """
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / ".git").exists():
            return d
    return here


@dataclass
class ReportContext:
    """What a renderer may need beyond the result: targets, the path root, colour, source lines."""

    targets: tuple[str, ...] = ("h100",)
    root: Path = field(default_factory=find_root)
    color: bool | None = None
    _lines: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def relpath(self, path: str) -> str:
        """Path relative to `root` with forward slashes; unchanged when outside root (or `<stdin>`)."""
        if path.startswith("<"):
            return path
        p = Path(path)
        try:
            return p.resolve().relative_to(self.root.resolve()).as_posix()
        except (ValueError, OSError):
            return p.as_posix()

    def lines(self, path: str) -> list[str]:
        """The file's lines for source excerpts: none for a binary file, control characters (which would drive
        the terminal) shown as U+FFFD, and each line cut at EXCERPT_WIDTH characters."""
        if path not in self._lines:
            try:
                data = Path(path).read_bytes()
            except OSError:
                data = None
            self._lines[path] = [] if data is None or b"\0" in data else [
                _excerpt(line) for line in source_lines(data.decode("utf-8", errors="replace"))]
        return self._lines[path]


EXCERPT_WIDTH = 240
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _excerpt(line: str) -> str:
    line = _CONTROL.sub("\ufffd", line)
    return line if len(line) <= EXCERPT_WIDTH else line[:EXCERPT_WIDTH - 1] + "…"


def kernel_count(f: FileResult) -> int:
    # A result served from the cache keeps its diagnostics and counts but not the kernels' analyses.
    return int(getattr(f, "kernel_count", len(f.kernels)))


def renderer(name: str) -> Callable[[LintResult, TextIO, ReportContext], None]:
    module, _, func = _RENDERERS[name].partition(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), func)  # type: ignore[no-any-return]


def render(name: str, result: LintResult, out: TextIO, ctx: ReportContext | None = None) -> None:
    renderer(name)(result, out, ctx or ReportContext())
