"""Bytes → libcst module, or a reason the file cannot be linted (reported as KL001)."""
from __future__ import annotations

import sys
from dataclasses import dataclass

import libcst as cst

# Files above this size are almost certainly generated or data; parsing them would stall a pre-commit run.
MAX_FILE_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ParseFailure:
    message: str
    line: int = 1
    col: int = 0


@dataclass(frozen=True, slots=True)
class ParsedSource:
    text: str
    module: cst.Module


def decode_source(data: bytes) -> str | ParseFailure:
    if len(data) > MAX_FILE_BYTES:
        return ParseFailure(f"file is {len(data):,} bytes, over the {MAX_FILE_BYTES:,}-byte limit; not linted")
    if b"\x00" in data[:8192]:
        return ParseFailure("file looks binary (NUL bytes); not linted")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return ParseFailure(f"file is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})", line)
    return text


def parse_text(text: str) -> ParsedSource | ParseFailure:
    # libcst's native parser recurses per nesting level; deeply nested expressions must not kill the run.
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 10_000))
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        first = str(exc.message).splitlines()[0] if str(exc.message) else "invalid syntax"
        return ParseFailure(f"syntax error: {first}", exc.raw_line, exc.raw_column)
    except (RecursionError, MemoryError):
        return ParseFailure("expression nesting too deep to parse; not linted")
    except Exception as exc:  # libcst raises a few other types on exotic input; never crash the run
        return ParseFailure(f"cannot parse: {type(exc).__name__}: {exc}")
    finally:
        sys.setrecursionlimit(old_limit)
    return ParsedSource(text, module)


def parse_bytes(data: bytes) -> ParsedSource | ParseFailure:
    text = decode_source(data)
    if isinstance(text, ParseFailure):
        return text
    return parse_text(text)
