"""Autotune lists a package loads from its own data files: `configs=runtime.get_tuned_config("mm")`.

A call into the kernel's own package with one literal key reads, at run time, a YAML/JSON table the package
ships (flag-gems: `runtime/backend/_nvidia/tune_configs.yaml`, with per-architecture copies such as
`_nvidia/hopper/tune_configs.yaml` that win on that GPU). kernlint never runs the loader; it reads the
package's data files as text and takes the list under that key when its entries are configs:
- `{META: {BLOCK_M: 64, ...}, num_warps: 4, num_stages: 3}` (also `kwargs:` for the constexprs);
- `{gen: true, param_map: {META: {BLOCK_M: block_m}, num_warps: warps}, block_m: [32, 64], warps: [4, 8]}`,
  the cross product of the named lists (flag-gems' generated entries), in the loader's order.
Files in another vendor's backend directory (frontend.vendor) are not candidates. A file below a directory
named for a GPU architecture (`hopper/`, `ampere/`, `sm90/`) is that architecture's variant; the rest are the
generic list. More than one generic file holding the key with different lists is ambiguous: not resolved.

YAML is read by a parser of the block/flow subset such tables use (no anchors, tags or multi-line strings): no
YAML library is needed, and a file outside the subset is simply not a candidate.
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from typing import Any

from kernlint.frontend.static_eval import LAUNCH_OPTIONS, ConfigLiteral
from kernlint.frontend.vendor import vendor_backend

DATA_SUFFIXES = (".yaml", ".yml", ".json")
MAX_FILES = 2_000            # data files walked in one package (flag-gems 5.0.2 ships 33)
MAX_FILE_BYTES = 4 << 20     # a larger data file is not read
MAX_CONFIGS = 4_096          # static_eval.MAX_ITEMS: a longer list is not a config list kernlint reads

# Directory names that mean one GPU architecture → the compute-capability majors they cover. flag-gems maps
# the device's major to a directory name (`ARCH_MAP = {"9": "hopper", "8": "ampere"}` in _nvidia/__init__.py).
ARCH_DIRS: dict[str, frozenset[int]] = {
    "ampere": frozenset({8}), "ada": frozenset({8}), "hopper": frozenset({9}), "blackwell": frozenset({10, 12}),
}
_SM_DIR = re.compile(r"^sm_?(\d{2,3})a?$")


@dataclass(frozen=True, slots=True)
class DataTable:
    """One data file's list under the key: `arch` is the capability majors it is for (empty: generic)."""
    path: str                              # relative to the package's parent directory (`flag_gems/...`)
    arch: frozenset[int]
    configs: tuple[ConfigLiteral, ...]


@dataclass(frozen=True, slots=True)
class DataConfigs:
    key: str
    generic: DataTable | None
    variants: tuple[DataTable, ...]        # per-architecture files

    def for_capabilities(self, capabilities: list[int]) -> DataTable | None:
        """The table every target reads: its architecture's file where the package has one, else the
        generic one. None when the targets would read different files."""
        chosen = [self.table_for(c) for c in capabilities]
        return chosen[0] if chosen and all(t is chosen[0] for t in chosen) else None

    def table_for(self, capability: int) -> DataTable | None:
        major = capability // 10
        return next((v for v in self.variants if major in v.arch), self.generic)


def arch_of(directory_parts: list[str]) -> frozenset[int]:
    for part in reversed(directory_parts):
        name = part.lower().lstrip("_")
        if name in ARCH_DIRS:
            return ARCH_DIRS[name]
        if (m := _SM_DIR.match(name)) is not None:
            return frozenset({int(m.group(1)) // 10})
    return frozenset()


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


def _data_files(root: str) -> list[str]:
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


def _load(path: str) -> Any:
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


def _option(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _entry_configs(entry: Any, line: int) -> list[ConfigLiteral] | None:
    if not isinstance(entry, dict):
        return None
    if "param_map" in entry:
        return _generated(entry, line)
    kwargs = entry.get("META", entry.get("kwargs"))
    if not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs):
        return None
    if any(k not in ("META", "kwargs", *LAUNCH_OPTIONS) for k in entry):
        return None
    options = {k: entry[k] for k in LAUNCH_OPTIONS if k in entry and _option(entry[k])}
    return [ConfigLiteral(dict(kwargs), options, line)]


def _generated(entry: dict[str, Any], line: int) -> list[ConfigLiteral] | None:
    """flag-gems' `gen` entry: META fields (or whole META dicts) and options from named lists, crossed in
    the loader's order (configloader.to_gen_config: META fields first, then the options, as the map lists them;
    its stack pops the last value first, so the product comes out reversed)."""
    param_map = entry["param_map"]
    if not isinstance(param_map, dict) or "META" not in param_map:
        return None

    def values(source: Any) -> list[Any] | None:
        if isinstance(source, list):
            return source
        if _option(source):
            return [source]
        found = entry.get(source) if isinstance(source, str) else None
        return found if isinstance(found, list) else None

    plan: list[tuple[str, str, list[Any]]] = []    # (kind, key, values)
    meta = param_map["META"]
    if isinstance(meta, dict):
        for k, source in meta.items():
            vs = values(source)
            if vs is None:
                return None
            plan.append(("meta_field", k, vs))
    else:
        vs = values(meta)
        if vs is None or not all(isinstance(v, dict) for v in vs):
            return None
        plan.append(("meta_block", "META", vs))
    for k, source in param_map.items():
        if k != "META":
            vs = values(source)
            if vs is None or k not in LAUNCH_OPTIONS:
                return None
            plan.append(("option", k, vs))
    total = 1
    for _, _, vs in plan:
        total *= len(vs)
    if total > MAX_CONFIGS:
        return None
    out: list[ConfigLiteral] = []

    def walk(step: int, kwargs: dict[str, Any], options: dict[str, Any]) -> None:
        if step == len(plan):
            out.append(ConfigLiteral(dict(kwargs), dict(options), line))
            return
        kind, k, vs = plan[step]
        for v in reversed(vs):   # the loader's stack order
            if kind == "meta_field":
                walk(step + 1, {**kwargs, k: v}, options)
            elif kind == "meta_block":
                walk(step + 1, dict(v), options)
            else:
                walk(step + 1, kwargs, {**options, k: v})
    walk(0, {}, {})
    out.reverse()
    if not all(all(_option(v) for v in c.options.values()) for c in out):
        return None
    return out


def table_configs(value: Any, line: int) -> tuple[ConfigLiteral, ...] | None:
    """The configs of a data file's list, or None when it is not a list of config entries."""
    if not isinstance(value, list) or not value:
        return None
    out: list[ConfigLiteral] = []
    for entry in value:
        got = _entry_configs(entry, line)
        if got is None:
            return None
        out.extend(got)
        if len(out) > MAX_CONFIGS:
            return None
    return tuple(out)


def resolve(source_path: str, key: str, line: int) -> DataConfigs | str:
    """The lists under `key` in the data files of the package holding `source_path`, or why there are none."""
    root = package_root(source_path)
    if root is None:
        return "the file is not in a package that could ship a data file"
    base = os.path.dirname(root)
    generic: list[DataTable] = []
    variants: list[DataTable] = []
    for path in _data_files(root):
        rel = os.path.relpath(path, base)
        if vendor_backend(rel, None) is not None:
            continue   # another vendor's table (`_amd/tune_configs.yaml`)
        data = _load(path)
        if not isinstance(data, dict) or key not in data:
            continue
        configs = table_configs(data[key], line)
        if configs is None:
            continue
        parts = rel.replace(os.sep, "/").split("/")[1:-1]
        table = DataTable(rel.replace(os.sep, "/"), arch_of(parts), configs)
        (variants if table.arch else generic).append(table)
    if any(t.configs != generic[0].configs for t in generic):
        return (f"`{key}` lists differ in {len(generic)} data files of the package "
                f"({', '.join(t.path for t in generic)}): which one is read is not known")
    if not generic and not variants:
        return f"no data file of the package lists configs under `{key}`"
    return DataConfigs(key, generic[0] if generic else None, tuple(variants))


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
