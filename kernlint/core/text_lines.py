"""Splitting source text into the lines Python numbers (no libcst: the report and CLI paths import it)."""
from __future__ import annotations

import io


def source_lines(text: str, keepends: bool = False) -> list[str]:
    """The lines Python's tokenizer and ast see: broken at \\n, \\r\\n and \\r only. `str.splitlines` also
    breaks at form feeds, \\x1c-\\x1e, \\x85 and U+2028/9, which moved every later line number (a noqa
    comment then missed its finding, excerpts showed the wrong line)."""
    lines = io.StringIO(text, newline="").readlines()
    return lines if keepends else [line.rstrip("\r\n") for line in lines]
