"""Mutations of real kernel files (examples/): the damaged, odd and huge inputs an editor or a repository
hands a linter. Each mutation maps (chooser, text) → bytes, so invalid UTF-8 can be produced too.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from fuzz_grammar import Chooser

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.py") if p.name != "__init__.py")
TOKEN = re.compile(r"\w+|[^\w\s]")
# Unicode that stresses decoders, column arithmetic and identifiers: combining marks, wide CJK,
# right-to-left text, zero-width and BOM characters, astral emoji, a NUL, a non-breaking space.
ODD_CHARS = ("é", "\u0301", "漢字", "\u202e", "\u200b", "\ufeff", "😀", "\x00", "\u00a0", "ß", "Ω", "\x0c")


def _lines(text: str) -> list[str]:
    return text.split("\n")


def delete_lines(ch: Chooser, text: str) -> bytes:
    lines = _lines(text)
    for _ in range(ch.integer(1, 4)):
        if len(lines) > 1:
            del lines[ch.integer(0, len(lines) - 1)]
    return "\n".join(lines).encode("utf-8", "surrogateescape")


def swap_tokens(ch: Chooser, text: str) -> bytes:
    spans = [m.span() for m in TOKEN.finditer(text)]
    for _ in range(ch.integer(1, 3)):
        (a0, a1), (b0, b1) = sorted((ch.choice(spans), ch.choice(spans)))
        if a1 <= b0:
            text = text[:a0] + text[b0:b1] + text[a1:b0] + text[a0:a1] + text[b1:]
            spans = [m.span() for m in TOKEN.finditer(text)]
    return text.encode("utf-8", "surrogateescape")


def truncate(ch: Chooser, text: str) -> bytes:
    data = text.encode("utf-8", "surrogateescape")
    # A byte offset, so multi-byte characters can be cut in half (invalid UTF-8 at the end).
    return data[: ch.integer(0, len(data))]


def insert_unicode(ch: Chooser, text: str) -> bytes:
    for _ in range(ch.integer(1, 5)):
        at = ch.integer(0, len(text))
        text = text[:at] + ch.choice(ODD_CHARS) + text[at:]
    return text.encode("utf-8", "surrogateescape")


def invalid_bytes(ch: Chooser, text: str) -> bytes:
    data = bytearray(text.encode("utf-8", "surrogateescape"))
    at = ch.integer(0, len(data))
    data[at:at] = ch.choice((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"))
    return bytes(data)


def line_endings(ch: Chooser, text: str) -> bytes:
    ending = ch.choice(("\r\n", "\r", "\n\n"))
    if ch.flag(0.3):  # mixed endings: only some lines converted
        return "".join(line + (ending if i % 2 else "\n") for i, line in enumerate(_lines(text))).encode("utf-8", "surrogateescape")
    return text.replace("\n", ending).encode("utf-8", "surrogateescape")


def tabs(ch: Chooser, text: str) -> bytes:
    # Whole-file tab indentation is valid Python; converting only some lines gives TabError territory.
    all_lines = ch.flag()
    out = []
    for i, line in enumerate(_lines(text)):
        if all_lines or i % 3 == 0:
            stripped = line.lstrip(" ")
            line = "\t" * ((len(line) - len(stripped)) // 4) + " " * ((len(line) - len(stripped)) % 4) + stripped
        out.append(line)
    return "\n".join(out).encode("utf-8", "surrogateescape")


def _kernel_body_line(text: str) -> int | None:
    """Index of the first statement line inside the first jit function (after its signature)."""
    lines = _lines(text)
    for i, line in enumerate(lines):
        if line.startswith("def ") and i > 0 and "jit" in lines[i - 1]:
            for j in range(i, len(lines)):
                if lines[j].rstrip().endswith(":") and lines[j].startswith((")", "def")):
                    return j + 1
    return None


def long_line(ch: Chooser, text: str) -> bytes:
    at = _kernel_body_line(text)
    size = ch.choice((1_000, 20_000, 200_000))
    kind = ch.integer(0, 2)
    if kind == 0:
        stmt = "    _long = " + " + ".join(["1"] * (size // 4))
    elif kind == 1:
        stmt = "    _long = '" + "x" * size + "'"
    else:
        stmt = "    # " + "y" * size
    lines = _lines(text)
    lines.insert(at if at is not None else len(lines), stmt if at is not None else stmt.lstrip())
    return "\n".join(lines).encode("utf-8", "surrogateescape")


def deep_nesting(ch: Chooser, text: str) -> bytes:
    at = _kernel_body_line(text)
    depth = ch.choice((10, 40, 90, 140, 200, 400))
    lines = _lines(text)
    kind = ch.integer(0, 3)
    if at is None:
        return ("(" * depth + "1" + ")" * depth + "\n" + text).encode("utf-8", "surrogateescape")
    if kind == 0:    # nested constexpr-style ifs inside the kernel (statement nesting)
        block = ["    " * (d + 1) + "if True:" for d in range(min(depth, 90))]
        block.append("    " * (min(depth, 90) + 1) + "pass")
    elif kind == 1:  # nested parentheses in one expression
        block = ["    _deep = " + "(" * depth + "1" + ")" * depth]
    elif kind == 2:  # nested static loops
        n = min(depth, 60)
        block = ["    " * (d + 1) + f"for _i{d} in tl.static_range(1):" for d in range(n)]
        block.append("    " * (n + 1) + "pass")
    else:            # nested calls of a tl function
        block = ["    _deep = " + "tl.abs(" * depth + "1.0" + ")" * depth]
    lines[at:at] = block
    return "\n".join(lines).encode("utf-8", "surrogateescape")


# Issue 29/30 inputs: values the static evaluator must refuse, syntax CPython accepts that once crashed
HOSTILE_CONSTANTS = ("9 ** 9 ** 9", "2 ** 2 ** 40", "1 << 10 ** 10", '"a" * 10 ** 12', "[0] * 10 ** 12",
                     "list(range(10 ** 12))", '"%0999999999d" % 1', "int('9' * 5000)",
                     "[x for a in range(4096) for b in range(4096) for x in range(4096) if False]")


def hostile(ch: Chooser, text: str) -> bytes:
    """A huge constant (module level, used as a launch value), a `match` statement (host code or kernel),
    or a long `elif` chain / operator chain / nested calls as deep as CPython accepts."""
    lines = _lines(text)
    at = _kernel_body_line(text)
    kind = ch.integer(0, 4)
    if kind == 0:
        lines.append(f"HOSTILE = {ch.choice(HOSTILE_CONSTANTS)}")
    elif kind == 1:
        lines += ["def _host(v):", "    match v:", "        case [1, *rest]:", "            return rest",
                  "        case {'k': x}:", "            return x", "        case _:", "            return None"]
    elif kind == 2 and at is not None:   # inside the kernel: KL002, never a crash
        lines[at:at] = ["    match 1:", "        case 1:", "            pass"]
    elif kind == 3:
        n = ch.choice((120, 1000, 2900))
        lines += ["def _chain(v):", "    if v == 0:", "        return 0"]
        lines += [f"    elif v == {i}:\n        return {i}" for i in range(1, n)]
    else:
        n = ch.choice((110, 1000, 2900, 8000))
        lines.append("_sum = " + "+".join(["1"] * n))
    return "\n".join(lines).encode("utf-8", "surrogateescape")


MUTATIONS: dict[str, Callable[[Chooser, str], bytes]] = {
    "delete_lines": delete_lines, "swap_tokens": swap_tokens, "truncate": truncate,
    "insert_unicode": insert_unicode, "invalid_bytes": invalid_bytes, "line_endings": line_endings,
    "tabs": tabs, "long_line": long_line, "deep_nesting": deep_nesting, "hostile": hostile,
}


def mutate(ch: Chooser, texts: dict[str, str]) -> tuple[str, str, bytes]:
    """(example name, mutation names joined by '+', mutated bytes); one or two stacked mutations."""
    name = ch.choice(sorted(texts))
    text = texts[name]
    applied: list[str] = []
    for _ in range(ch.integer(1, 2)):
        kind = ch.choice(sorted(MUTATIONS))
        data = MUTATIONS[kind](ch, text)
        applied.append(kind)
        text = data.decode("utf-8", "surrogateescape")
    return name, "+".join(applied), text.encode("utf-8", "surrogateescape")


def example_texts() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in EXAMPLES}
