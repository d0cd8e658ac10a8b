"""`kernlint check --add-noqa`: suppress every current finding with a `# kernlint: noqa[...]` comment.

Idempotent (a second run finds nothing left to suppress), keeps the rest of each line (an existing
`# kernlint: noqa[...]` on the line gets the new codes merged in; any other comment stays where it is),
keeps the file's line endings, and writes atomically (tempfile + os.replace) so an editor or a concurrent
run never sees half a file.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from kernlint.api import LintResult
from kernlint.atomic_io import write_atomic
from kernlint.suppression import NOQA, comment_lines, noqa_codes
from kernlint.text_lines import source_lines

# Engine findings are not suppressible in place: a file that does not parse has no reliable line to
# annotate, an internal error is ours to fix, and adding noqa for an unused noqa would be circular.
_SKIP = {"KL000", "KL001", "KL003"}


def _edit_line(line: str, codes: set[str]) -> str:
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    if body.endswith("\\"):
        return line  # a comment would break the line continuation
    m = NOQA.search(body)
    if m is not None:
        named = noqa_codes(m)
        if named is None:
            return line  # a blanket noqa already covers everything
        merged = sorted(set(named) | codes)
        return body[:m.start()] + f"# kernlint: noqa[{', '.join(merged)}]" + body[m.end():] + ending
    return body + f"  # kernlint: noqa[{', '.join(sorted(codes))}]" + ending


def add_noqa(result: LintResult) -> dict[str, int]:
    """Insert suppressions for the result's findings; returns {path: lines changed} for edited files."""
    wanted: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    for d in result.diagnostics:
        if d.code not in _SKIP and not d.span.path.startswith("<"):
            wanted[d.span.path][d.span.start.line].add(d.code)
    changed: dict[str, int] = {}
    for path, by_line in sorted(wanted.items()):
        try:
            raw = Path(path).read_bytes()
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        lines = source_lines(text, keepends=True)
        remap = comment_lines(text)  # a line inside a multi-line string takes its comment where the string ends
        edits: dict[int, set[str]] = defaultdict(set)
        for line, codes in by_line.items():
            edits[remap.get(line, line)] |= codes
        n = 0
        for line, codes in edits.items():
            if 0 < line <= len(lines):
                new = _edit_line(lines[line - 1], codes)
                n += new != lines[line - 1]
                lines[line - 1] = new
        if n:
            _replace(Path(path), "".join(lines).encode("utf-8"))
            changed[path] = n
    return changed


def _replace(path: Path, data: bytes) -> None:
    write_atomic(path, data)
