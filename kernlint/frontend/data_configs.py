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

The files are found and read by frontend.data_files (no YAML library; a file outside its subset is not a
candidate).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from kernlint.frontend.data_files import data_files, load_data, package_root
from kernlint.frontend.static_eval import LAUNCH_OPTIONS, ConfigLiteral
from kernlint.frontend.vendor import vendor_backend

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

    def for_capabilities(self, capabilities: list[int]) -> tuple[bool, DataTable | None]:
        """(whether every target reads the same file, that file): its architecture's where the package has
        one, else the generic one (None where there is none)."""
        chosen = [self.table_for(c) for c in capabilities] or [self.generic]
        return all(t is chosen[0] for t in chosen), chosen[0]

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
    for path in data_files(root):
        rel = os.path.relpath(path, base)
        if vendor_backend(rel, None) is not None:
            continue   # another vendor's table (`_amd/tune_configs.yaml`)
        data = load_data(path)
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
