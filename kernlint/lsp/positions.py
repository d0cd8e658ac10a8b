"""Span (1-based line, 0-based code-point column) ↔ LSP position (0-based line, column in encoding units).

LSP columns count UTF-16 code units unless the client negotiated `utf-8` or `utf-32` at initialize, so a
character outside the Basic Multilingual Plane (an emoji, a math letter in a comment) is one column for
kernlint and two for VS Code. Pure functions, no pygls: usable and testable without the server extra.
"""
from __future__ import annotations

from dataclasses import dataclass

from kernlint.core.diagnostic import Span

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


@dataclass(frozen=True, slots=True)
class LspPosition:
    line: int        # 0-based
    character: int   # 0-based, in `encoding` units


def normalise_encoding(encoding: object) -> str:
    """lsprotocol's PositionEncodingKind is a str enum; anything unknown falls back to the LSP default."""
    value = str(getattr(encoding, "value", encoding) or UTF16).lower()
    return value if value in (UTF8, UTF16, UTF32) else UTF16


def _unit_len(ch: str, encoding: str) -> int:
    cp = ord(ch)
    if encoding == UTF32:
        return 1
    if encoding == UTF16:
        return 2 if cp > 0xFFFF else 1
    return 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4


def col_to_units(line_text: str, col: int, encoding: str = UTF16) -> int:
    """Code-point column → encoding units; a column past the end of the line is clamped to the end."""
    col = max(0, min(col, len(line_text)))
    if encoding == UTF32:
        return col
    return sum(_unit_len(ch, encoding) for ch in line_text[:col])


def units_to_col(line_text: str, units: int, encoding: str = UTF16) -> int:
    """Encoding units → code-point column. A position inside a surrogate pair (or a UTF-8 sequence)
    rounds down to the character it splits, as the LSP spec asks."""
    if encoding == UTF32:
        return max(0, min(units, len(line_text)))
    seen = 0
    for i, ch in enumerate(line_text):
        width = _unit_len(ch, encoding)
        if seen + width > units:
            return i
        seen += width
    return len(line_text)


def _line(lines: list[str], index: int) -> str:
    return lines[index] if 0 <= index < len(lines) else ""


def pos_to_lsp(lines: list[str], line: int, col: int, encoding: str = UTF16) -> LspPosition:
    """kernlint (1-based line, code-point col) → LSP position; lines outside the document are clamped."""
    index = max(0, line - 1)
    if lines and index >= len(lines):
        index = len(lines) - 1
        col = len(lines[index])
    return LspPosition(index, col_to_units(_line(lines, index), col, encoding))


def lsp_to_pos(lines: list[str], line: int, character: int, encoding: str = UTF16) -> tuple[int, int]:
    """LSP position → kernlint (1-based line, code-point col)."""
    return line + 1, units_to_col(_line(lines, line), character, encoding)


def span_to_range(span: Span, lines: list[str], encoding: str = UTF16) -> tuple[LspPosition, LspPosition]:
    start = pos_to_lsp(lines, span.start.line, span.start.col, encoding)
    end = pos_to_lsp(lines, span.end.line, span.end.col, encoding)
    if (end.line, end.character) < (start.line, start.character):
        end = start
    return start, end


def line_end(lines: list[str], index: int, encoding: str = UTF16) -> int:
    """Length of 0-based line `index` in encoding units (where an appended comment starts)."""
    text = _line(lines, index)
    return col_to_units(text, len(text), encoding)
