"""libcst's tree of an edited document, re-using the statements of its previous text that did not change.

The language server re-lints a document after every edit; libcst's parse of the whole text was most of a
re-lint (docs/performance.md). Here the text is cut into chunks at top-level statement boundaries (read from
CPython's tree, which the syntax check parses anyway), each chunk is parsed by libcst on its own, and a chunk
whose text is the same as one of the previous text's is not parsed again: its statements are taken from
`StatementCache`. The module is assembled from the chunks' statements.

A chunk is one top-level statement (statements sharing a line, `a = 1; b = 2`, share one) with the blank and
comment lines above it, and the indented comment lines after it (libcst keeps those in the block's footer).
Parsed alone, the lines above a chunk's first statement are the chunk module's header; in the whole-file
tree they are the statement's `leading_lines`, so they are moved there. The first chunk's header is the
module's, the last chunk's footer the module's. The result is checked against the whole-file parse by
tests/frontend/test_cst_reuse.py (`deep_equals`, the examples and truth kernels, edited several ways).

Anything this does not handle (a chunk libcst rejects alone, a text CPython does not parse) returns None and
the caller parses the whole text as always. A statement node is used once per tree: node positions are keyed
by node identity (kernlint.frontend.positions), so a chunk whose text repeats within one document is parsed
anew for each copy after the first.
"""
from __future__ import annotations

import ast
import itertools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst

# chunks kept per document: those of the last two texts (the server lints the newest text of a document)
MAX_CHUNKS = 20_000


class StatementCache:
    """libcst statements by chunk text, for one document; the chunks of the last assembly survive the next."""

    def __init__(self) -> None:
        self._chunks: dict[str, cst.Module] = {}
        self.parsed = 0     # chunks parsed by libcst (the tests count them)
        self.reused = 0

    def module(self, text: str, tree: ast.Module) -> cst.Module | None:
        """libcst's module of `text` (CPython's `tree` of it), or None: parse the whole text instead."""
        import libcst as cst

        chunks = _chunks(text, tree)
        if chunks is None:
            return None
        kept: dict[str, cst.Module] = {}
        body: list[cst.SimpleStatementLine | cst.BaseCompoundStatement] = []
        header: tuple[cst.EmptyLine, ...] = ()
        footer: tuple[cst.EmptyLine, ...] = ()
        indent: str | None = None
        for i, chunk in enumerate(chunks):
            part = self._chunks.get(chunk) if chunk not in kept else None
            if part is None:
                try:
                    part = cst.parse_module(chunk)
                except Exception:   # a chunk libcst rejects alone: the whole text decides
                    return None
                self.parsed += 1
            else:
                self.reused += 1
            kept[chunk] = part
            statements = list(part.body)
            if not statements:
                return None
            if i == 0:
                header = tuple(part.header)
            elif part.header:
                first = statements[0]
                statements[0] = first.with_changes(leading_lines=[*part.header, *first.leading_lines])
            if part.footer and i != len(chunks) - 1:
                return None
            footer = tuple(part.footer)
            if indent is None and any(isinstance(getattr(s, "body", None), cst.IndentedBlock) for s in statements):
                indent = part.default_indent
            body.extend(statements)
        self._chunks = kept if len(kept) <= MAX_CHUNKS else {}
        first_newline = text.find("\n")
        newline = "\r\n" if first_newline > 0 and text[first_newline - 1] == "\r" else "\n"
        return cst.Module(body=body, header=header, footer=footer, encoding="utf-8",
                          default_indent=indent or "    ", default_newline=newline if first_newline >= 0 else "\n",
                          has_trailing_newline=text.endswith(("\n", "\r")))


def _chunks(text: str, tree: ast.Module) -> list[str] | None:
    """The text cut before each top-level statement's first line (after the indented comments that close the
    statement before it); None when it cannot be cut (no statement, form feeds or `\\r` line ends)."""
    if not tree.body or "\f" in text or "\r" in text:
        return None
    lines = text.split("\n")
    lines = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])   # CPython's line ends
    cuts: list[int] = [0]   # 0-based index of each chunk's first line
    previous_end: int | None = None
    for stmt in tree.body:
        first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])
        end = stmt.end_lineno or stmt.lineno
        if previous_end is None or first <= previous_end:   # the first, or one sharing a line: same chunk
            previous_end = end if previous_end is None else max(previous_end, end)
            continue
        # indented comment lines after the previous statement close its block (with the blank lines between
        # them): the chunk of this statement starts after the last of them
        cut = j = previous_end
        while j < first - 1:
            stripped = lines[j].strip()
            if stripped.startswith("#") and lines[j][:1] in (" ", "\t"):
                cut = j + 1
            elif stripped:
                break
            j += 1
        cuts.append(cut)
        previous_end = max(previous_end, end)
    bounds = [*cuts, len(lines)]
    return ["".join(lines[a:b]) for a, b in itertools.pairwise(bounds)]
