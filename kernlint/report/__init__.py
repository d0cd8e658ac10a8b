"""Output formats; each module renders a LintResult and nothing else.

`render(name, result, out, ctx)` dispatches by format name. Renderers are imported lazily so that a
machine-readable format never pays for `rich` (cold start budget, docs/design.md).
"""
from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO
from collections.abc import Callable

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity, Span
from kernlint.core.text_lines import source_lines

if TYPE_CHECKING:
    from kernlint.pipeline.results import FileResult, LintResult

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
    # Whole source lines by path, as the linter numbered them; the CLI puts the source read from stdin here,
    # since it is not on disk.
    _lines: dict[str, list[str]] = field(default_factory=dict, repr=False)
    _excerpts: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def relpath(self, path: str) -> str:
        """Path relative to `root` with forward slashes; unchanged when outside root (or `<stdin>`)."""
        if path.startswith("<"):
            return path
        p = Path(path)
        try:
            return p.resolve().relative_to(self.root.resolve()).as_posix()
        except (ValueError, OSError):
            return p.as_posix()

    def full_lines(self, path: str) -> list[str]:
        """The file's lines, whole and unaltered (none for a binary file): positions are converted on these
        (rdjson's UTF-8 byte columns), never on the excerpts, which are cut and have characters replaced."""
        if path not in self._lines:
            from kernlint.core.source_files import read_source

            # a FIFO or /dev/zero reported as KL001 must not be read here either (read_source refuses them)
            got = read_source(path, 64 * 1024 * 1024)
            data = got if isinstance(got, bytes) else None
            self._lines[path] = [] if data is None or b"\0" in data else source_lines(
                data.decode("utf-8", errors="replace"))
        return self._lines[path]

    def lines(self, path: str) -> list[str]:
        """The file's lines for terminal excerpts: control characters (which would drive the terminal) shown
        as U+FFFD, and each line cut at EXCERPT_WIDTH characters."""
        if path not in self._excerpts:
            self._excerpts[path] = [_excerpt(line) for line in self.full_lines(path)]
        return self._excerpts[path]


EXCERPT_WIDTH = 240
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _excerpt(line: str) -> str:
    line = _CONTROL.sub("\ufffd", line)
    return line if len(line) <= EXCERPT_WIDTH else line[:EXCERPT_WIDTH - 1] + "…"


def kernel_count(f: FileResult) -> int:
    # A result served from the cache keeps its diagnostics and counts but not the kernels' analyses.
    return int(getattr(f, "kernel_count", len(f.kernels)))


def tool_errors(result: LintResult) -> list[str]:
    """Everything that makes the run incomplete (exit code 2): a file the engine failed on, a path not linted."""
    return [*result.internal_errors, *result.path_errors]


def internal_error_diagnostic(f: FileResult) -> Diagnostic | None:
    """A KL000 finding for a file the engine failed on, unless the file already carries one: a parse-stage
    crash records only `internal_error` (api.lint_parsed), and the formats that hold nothing but findings
    (gitlab, rdjson, json-lines) would otherwise drop the error and report the file as clean."""
    if not f.internal_error or any(d.code == "KL000" for d in f.diagnostics):
        return None
    # the wording of the engine's own KL000 (api._internal), so both kinds read alike
    return Diagnostic("KL000", Span.at(f.path, 1), f"kernlint failed on this file: {f.internal_error}; please report it",
                      Severity.ERROR, Confidence.EXACT, "InternalError")


def findings(result: LintResult) -> list[Diagnostic]:
    """Every file's diagnostics, each file followed by its internal error as a KL000 where it has none."""
    out: list[Diagnostic] = []
    for f in result.files:
        out += f.diagnostics
        crash = internal_error_diagnostic(f)
        if crash is not None:
            out.append(crash)
    return out


def renderer(name: str) -> Callable[[LintResult, TextIO, ReportContext], None]:
    module, _, func = _RENDERERS[name].partition(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), func)  # type: ignore[no-any-return]


def render(name: str, result: LintResult, out: TextIO, ctx: ReportContext | None = None) -> None:
    try:
        renderer(name)(result, out, ctx or ReportContext())
        out.flush()   # inside the try: a broken pipe may only show when the buffered rest is written
    except BrokenPipeError:
        on_broken_pipe(out)


def on_broken_pipe(out: TextIO) -> NoReturn:
    """The reader closed the pipe (`kernlint check ... | head`): stop quietly with exit status 1 in every
    format, as rich's Console already does for full/concise (Console.on_broken_pipe). The descriptor is
    pointed at /dev/null first, as Python's docs advise (signal module, "Note on SIGPIPE"): otherwise the
    interpreter's final flush of what is still buffered raises again and prints "Exception ignored"."""
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):   # an in-memory stream has no descriptor to redirect
        raise SystemExit(1) from None
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
    raise SystemExit(1) from None
