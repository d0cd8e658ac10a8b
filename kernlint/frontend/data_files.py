"""A package's data files (YAML/JSON) read as text, never imported: where they are, their parsed contents and
a signature of them for cache keys. No libcst here: the runner keys its cache on them before parsing anything.

YAML is read by a parser of the block/flow subset configuration tables use (block mappings and sequences, flow
`[...]`/`{...}`, plain and quoted scalars; no anchors, tags or multi-line strings): no YAML library is needed,
and a file outside the subset reads as None.
"""
from __future__ import annotations

import json
import os
import re
import time
from typing import Any

DATA_SUFFIXES = (".yaml", ".yml", ".json")
MAX_FILES = 2_000            # data files walked in one package (flag-gems 5.0.2 ships 33)
MAX_FILE_BYTES = 4 << 20     # a larger data file is not read


def package_root(path: str) -> str | None:
    """The top directory of the regular package holding `path` (the highest with `__init__.py`)."""
    d = os.path.dirname(os.path.abspath(path))
    top = None
    for _ in range(32):
        if not os.path.isfile(os.path.join(d, "__init__.py")):
            break
        top = d
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return top


_WALKS: dict[str, tuple[float, list[str]]] = {}
WALK_SECONDS = 10.0   # a package's file list is walked again after this long (a long-lived language server)


def data_files(root: str) -> list[str]:
    cached = _WALKS.get(root)
    if cached is not None and time.monotonic() - cached[0] < WALK_SECONDS:
        return cached[1]
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        out.extend(os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(DATA_SUFFIXES))
        if len(out) >= MAX_FILES:
            break
    _WALKS[root] = (time.monotonic(), out[:MAX_FILES])
    return out[:MAX_FILES]


_PARSED: dict[tuple[str, int, int], Any] = {}


def load_data(path: str) -> Any:
    """The file's parsed contents, or None (unreadable, too large, outside the YAML subset); parsed once per
    version of the file."""
    try:
        st = os.stat(path)
        if st.st_size > MAX_FILE_BYTES:
            return None
        cache_key = (path, st.st_mtime_ns, st.st_size)
        if cache_key in _PARSED:
            return _PARSED[cache_key]
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return None
    try:
        value = json.loads(text) if path.endswith(".json") else parse_yaml(text)
    except (ValueError, RecursionError):
        value = None
    if len(_PARSED) > 512:
        _PARSED.clear()
    _PARSED[cache_key] = value
    return value


def data_signature(path: str, memo: dict[str, str] | None = None) -> str:
    """The data files of the package holding `path`, as (path, modification time, size) lines: empty outside a
    package or for a package without data files. A lint result that read one of them is stale when this
    changes (runner's cache key). `memo` keeps each directory's and package's signature for one run; the file
    list is walked afresh (not data_files' timed cache), so a table changed between two runs in one process is
    seen."""
    directory = os.path.dirname(os.path.abspath(path))
    if memo is not None and directory in memo:
        return memo[directory]
    root = package_root(path)
    if root is None:
        out = ""
    elif memo is not None and root in memo:
        out = memo[root]
    else:
        out = _signature(root)
        if memo is not None:
            memo[root] = out
    if memo is not None:
        memo[directory] = out
    return out


def _signature(root: str) -> str:
    lines = []
    _WALKS.pop(root, None)
    for f in data_files(root):
        try:
            st = os.stat(f)
        except OSError:
            continue
        lines.append(f"{f}\t{st.st_mtime_ns}\t{st.st_size}")
    return "\n".join(lines)


# -- YAML subset -----------------------------------------------------------------------------------------------
_PLAIN_SPECIAL = frozenset("&*!|>%@`")


def parse_yaml(text: str) -> Any:
    """Block mappings and sequences, flow `[...]`/`{...}`, plain and quoted scalars; ValueError otherwise."""
    lines: list[list[Any]] = []
    for raw in text.splitlines():
        stripped = _strip_comment(raw).rstrip()
        if not stripped.strip() or stripped.strip() in ("---", "..."):
            continue
        if "\t" in raw[:len(raw) - len(raw.lstrip())]:
            raise ValueError("tab indentation")
        indent = len(stripped) - len(stripped.lstrip(" "))
        lines.append([indent, stripped.strip()])
    if not lines:
        return None
    value, end = _block(lines, 0, lines[0][0])
    if end != len(lines):
        raise ValueError(f"unexpected indentation at entry {end}")
    return value


def _strip_comment(line: str) -> str:
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'" and (i == 0 or line[i - 1] in " [{,:"):
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


def _block(lines: list[list[Any]], i: int, indent: int) -> tuple[Any, int]:
    if lines[i][1] == "-" or lines[i][1].startswith("- "):
        return _sequence(lines, i, indent)
    return _mapping(lines, i, indent)


def _sequence(lines: list[list[Any]], i: int, indent: int) -> tuple[list[Any], int]:
    out: list[Any] = []
    while i < len(lines) and lines[i][0] == indent and (lines[i][1] == "-" or lines[i][1].startswith("- ")):
        rest = lines[i][1][1:]
        inner = rest.lstrip(" ")
        if not inner:
            if i + 1 < len(lines) and lines[i + 1][0] > indent:
                value, i = _block(lines, i + 1, lines[i + 1][0])
            else:
                value, i = None, i + 1
        elif _is_key(inner):
            lines[i] = [indent + 1 + len(rest) - len(inner), inner]   # `- a: 1` opens a mapping at `a`
            value, i = _mapping(lines, i, lines[i][0])
        else:
            value, i = _scalar(inner), i + 1
        out.append(value)
    return out, i


def _is_key(text: str) -> bool:
    return _split_key(text) is not None and text[0] not in "[{"


def _split_key(text: str) -> tuple[str, str] | None:
    if text[0] in "\"'":
        end = text.find(text[0], 1)
        if end < 0 or not text[end + 1:].lstrip().startswith(":"):
            return None
        rest = text[end + 1:].lstrip()[1:]
        return text[1:end], rest.strip()
    m = re.match(r"([^:#]+?)\s*:(?:\s+(.*)|$)", text)
    if m is None:
        return None
    return m.group(1), (m.group(2) or "").strip()


def _mapping(lines: list[list[Any]], i: int, indent: int) -> tuple[dict[Any, Any], int]:
    out: dict[Any, Any] = {}
    while i < len(lines) and lines[i][0] == indent:
        split = _split_key(lines[i][1])
        if split is None or lines[i][1].startswith("- "):
            raise ValueError(f"not a mapping entry: {lines[i][1]!r}")
        key_text, rest = split
        key = _scalar(key_text) if lines[i][1][0] not in "\"'" else key_text
        if rest:
            value, i = _scalar(rest), i + 1
        elif i + 1 < len(lines) and lines[i + 1][0] > indent:
            value, i = _block(lines, i + 1, lines[i + 1][0])
        elif i + 1 < len(lines) and lines[i + 1][0] == indent and lines[i + 1][1].startswith("-"):
            value, i = _sequence(lines, i + 1, indent)   # `key:` then `- item` at the key's indentation
        else:
            value, i = None, i + 1
        out[key] = value
    return out, i


def _scalar(text: str) -> Any:
    text = text.strip()
    if text.startswith(("[", "{")):
        value, end = _flow(text, 0)
        if text[end:].strip():
            raise ValueError(f"text after a flow collection: {text!r}")
        return value
    if text[:1] in _PLAIN_SPECIAL or text[:1] in ("|", ">"):
        raise ValueError(f"YAML feature outside the subset: {text!r}")
    if text[:1] in "\"'":
        if len(text) < 2 or text[-1] != text[0]:
            raise ValueError(f"unterminated string: {text!r}")
        return text[1:-1]
    if text in ("null", "Null", "NULL", "~", ""):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    if re.fullmatch(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?", text):
        return float(text)
    return text


def _flow(text: str, i: int) -> tuple[Any, int]:
    """A flow collection starting at text[i] (`[` or `{`); returns it and the index after its close."""
    close = "]" if text[i] == "[" else "}"
    items: list[Any] = []
    mapping: dict[Any, Any] = {}
    i += 1
    while True:
        while i < len(text) and text[i] == " ":
            i += 1
        if i >= len(text):
            raise ValueError("unterminated flow collection")
        if text[i] == close:
            return (items if close == "]" else mapping), i + 1
        if text[i] in "[{":
            item, i = _flow(text, i)
        else:
            j = i
            quote = text[i] if text[i] in "\"'" else ""
            if quote:
                j = text.find(quote, i + 1)
                if j < 0:
                    raise ValueError("unterminated string")
                j += 1
            while j < len(text) and text[j] not in ",]}" and not (close == "}" and text[j] == ":"
                                                                  and not quote):
                j += 1
            item, i = _scalar(text[i:j]), j
        while i < len(text) and text[i] == " ":
            i += 1
        if close == "}":
            if i >= len(text) or text[i] != ":":
                raise ValueError("flow mapping entry without a value")
            i += 1
            while i < len(text) and text[i] == " ":
                i += 1
            if text[i] in "[{":
                value, i = _flow(text, i)
            else:
                j = i
                while j < len(text) and text[j] not in ",}":
                    j += 1
                value, i = _scalar(text[i:j]), j
            mapping[item] = value
        else:
            items.append(item)
        while i < len(text) and text[i] == " ":
            i += 1
        if i < len(text) and text[i] == ",":
            i += 1
