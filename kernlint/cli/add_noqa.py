"""`kernlint check --add-noqa`: suppress every current finding with a `# kernlint: noqa[...]` comment.

Idempotent (a second run finds nothing left to suppress), keeps the rest of each line (an existing
`# kernlint: noqa[...]` on the line gets the new codes merged in; any other comment stays where it is),
keeps the file's line endings, and writes atomically (tempfile + os.replace) so an editor or a concurrent
run never sees half a file.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from kernlint.pipeline.results import LintResult, content_digest
from kernlint.core.atomic_io import write_atomic
from kernlint.pipeline.suppression import NOQA, comment_lines, comments, noqa_codes
from kernlint.core.text_lines import source_lines

# Engine findings are not suppressible in place: a file that does not parse has no reliable line to
# annotate, an internal error is ours to fix, and adding noqa for an unused noqa would be circular.
_SKIP = {"KL000", "KL001", "KL003"}


def _edit_line(line: str, codes: set[str], comment_cols: list[int] | None = None) -> str:
    """`comment_cols`: where the line's comment tokens start (None: the file does not tokenize, the raw line is
    searched); a `# kernlint: noqa[...]` inside a string is text to leave alone, not a directive to extend."""
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    if body.endswith("\\"):
        return line  # a comment would break the line continuation
    m = None
    for col in comment_cols if comment_cols is not None else [0]:
        if (m := NOQA.search(body, col)) is not None and (comment_cols is None or m.start() >= col):
            break
        m = None
    if m is not None:
        named = noqa_codes(m)
        if named is None:
            return line  # a blanket noqa already covers everything
        merged = sorted(set(named) | codes)
        return body[:m.start()] + f"# kernlint: noqa[{', '.join(merged)}]" + body[m.end():] + ending
    return body + f"  # kernlint: noqa[{', '.join(sorted(codes))}]" + ending


def add_noqa(result: LintResult, failed: list[str] | None = None) -> dict[str, int]:
    """Insert suppressions for the result's findings; returns {path: lines changed} for edited files and
    appends to `failed` the files that could not be written."""
    failed = failed if failed is not None else []
    wanted: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    for d in result.diagnostics:
        if d.code not in _SKIP and not d.span.path.startswith("<"):
            wanted[d.span.path][d.span.start.line].add(d.code)
    changed: dict[str, int] = {}
    digests = {f.path: f.source_digest for f in result.files}
    for path, by_line in sorted(wanted.items()):
        try:
            raw = Path(path).read_bytes()
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if digests.get(path) is not None and content_digest(raw) != digests[path]:
            # the findings' lines are those of the text that was linted
            failed.append(f"{path}: changed since it was linted; no noqa added (run kernlint again)")
            continue
        lines = source_lines(text, keepends=True)
        remap = comment_lines(text)  # a line inside a multi-line string takes its comment where the string ends
        tokens = comments(text)
        edits: dict[int, set[str]] = defaultdict(set)
        for line, codes in by_line.items():
            edits[remap.get(line, line)] |= codes
        n = 0
        for line, codes in edits.items():
            if 0 < line <= len(lines):
                cols = None if tokens is None else [c for c, _ in tokens.get(line, [])]
                new = _edit_line(lines[line - 1], codes, cols)
                n += new != lines[line - 1]
                lines[line - 1] = new
        if n:
            try:
                _replace(Path(path), "".join(lines).encode("utf-8"))
            except OSError as exc:   # not writable: say so and go on with the other files
                failed.append(f"{path}: cannot write: {exc.strerror or exc}")
                continue
            changed[path] = n
    return changed


def _replace(path: Path, data: bytes) -> None:
    write_atomic(path, data)
