"""The config store (`kernlint.lock.json`): versioned, human-reviewable, keyed by kernel id, target, bucket.

Kernel id = module path + qualname + sha256 of the kernel's source (docs/design.md), so an entry whose
kernel changed is detected as stale (`stale_entries`) and the shim falls back to the author's config.
`kernlint recommend` writes stores and the shim reads them with this one module; it must stay importable
without libcst, the analysis or kernlint.recommend (the shim never loads the linter; tests/project/test_layers.py).
"""
from __future__ import annotations

import ast
import hashlib
import json
import textwrap
from dataclasses import dataclass
from typing import Any

from kernlint.core.atomic_io import write_atomic

SCHEMA = "kernlint.lock/1"


class StoreError(ValueError):
    """A corrupt or foreign store; the message names the file and the problem."""


def source_hash(source: str) -> str:
    # normalised line endings and trailing whitespace: a re-save by another editor is not a change
    text = "\n".join(line.rstrip() for line in source.replace("\r\n", "\n").splitlines()).strip()
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def def_text(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The text a kernel id hashes: the first decorator's line to ast's `end_lineno`, dedented, from
    `text.splitlines()`. Comment lines after the last statement are not part of it. The decorators are: a
    recommendation was chosen inside the author's `@triton.autotune` configs and `@triton.heuristics`, so an
    author who narrows them (say, drops the block sizes that compute NaN) makes its entry stale instead of
    having the shim apply a config they removed. `kernlint recommend` (recommend.cli.kernel_source), KL406 and
    the shim all slice with this, so they agree on every kernel (the shim used to hash `inspect.getsource`,
    which keeps trailing comments: a fresh entry read as stale)."""
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return textwrap.dedent("\n".join(lines[first - 1: node.end_lineno]))


def qualname_key(qualname: str) -> str:
    """`make.<locals>.k5` (Python's __qualname__ of a kernel defined in a function) → `make.k5` (recommend's)."""
    return qualname.replace(".<locals>", "")


def same_module(a: str, b: str) -> bool:
    """Module ids come from paths relative to wherever kernlint ran: `pkg.ops` and `src.pkg.ops` are one."""
    return a == b or a.endswith("." + b) or b.endswith("." + a)


def kernel_id(module: str, qualname: str, source: str) -> str:
    return f"{module}:{qualname}@{source_hash(source)}"


def split_id(kid: str) -> tuple[str, str, str]:
    name, _, digest = kid.rpartition("@")
    module, _, qualname = name.rpartition(":")
    return module, qualname, digest


@dataclass
class Entry:
    kernel: str                 # kernel id
    target: str
    bucket: str                 # "M=4096,N=4096" or "*"
    config: dict[str, Any]      # {"kwargs": {...}, "num_warps": 8, "num_stages": 3}
    estimate: dict[str, Any]
    rationale: str
    # {"in_author_space": False, "outside": {"BLOCK_SIZE": "4096"}, "verified": "..."}; None (and no key in
    # the file) for a config inside the author's space, so stores written before this field read unchanged
    space: dict[str, Any] | None = None
    # why the author's config stays for this kernel/bucket: the shim applies nothing here (not even the "*"
    # entry), and `config` is the author's config for the reader, when known
    keep: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"kernel": self.kernel, "target": self.target, "bucket": self.bucket, "config": self.config,
               "estimate": self.estimate, "rationale": self.rationale}
        if self.space is not None:
            out["space"] = self.space
        if self.keep is not None:
            out["keep"] = self.keep
        return out


def write_store(path: str, entries: list[Entry], generator: str) -> None:
    data = {"schema": SCHEMA, "generator": generator,
            "entries": sorted((e.to_json() for e in entries), key=lambda e: (e["kernel"], e["target"], e["bucket"]))}
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    write_atomic(path, text.encode("utf-8"), keep_mode=False)  # a reader never sees half a store


# An entry is a few hundred bytes (one per kernel, target and size bucket): 16 MB is tens of thousands of
# them, beyond any real project; a larger file is refused before it is parsed.
MAX_STORE_BYTES = 16 * 1024 * 1024


def read_store(path: str) -> list[Entry]:
    """The entries of a store; any problem is one StoreError naming the file and what is wrong (the shim turns
    it into a log line inside the user's program, `kernlint check` into KL406), never another exception."""
    from kernlint.core.source_files import read_source

    raw = read_source(path, MAX_STORE_BYTES)   # never a FIFO or /dev/zero, never more than the limit
    if isinstance(raw, OSError):
        raise StoreError(f"{path}: cannot read the config store: {raw.strerror}")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path}: not a kernlint config store (invalid JSON: {exc})") from None
    except ValueError as exc:   # an integer of more than 4,300 digits (CPython's int-from-str limit)
        raise StoreError(f"{path}: not a kernlint config store ({str(exc)[:120]})") from None
    except RecursionError:
        raise StoreError(f"{path}: not a kernlint config store (JSON nested too deeply)") from None
    found = data.get("schema") if isinstance(data, dict) else type(data).__name__
    if isinstance(found, str) and found.startswith("kernlint.lock/") and found != SCHEMA:
        raise StoreError(f"{path}: unsupported config store version {found!r} (this kernlint reads {SCHEMA!r}); "
                         f"regenerate it with `kernlint recommend` or upgrade kernlint")
    if found != SCHEMA:
        raise StoreError(f"{path}: not a kernlint config store (schema {found!r}, expected {SCHEMA!r})")
    entries = data.get("entries") or []
    if not isinstance(entries, list):
        raise StoreError(f"{path}: `entries` must be a list, not {type(entries).__name__}")
    return [_entry(path, i, e) for i, e in enumerate(entries)]


def _entry(path: str, i: int, e: Any) -> Entry:
    def bad(field: str, want: str, got: Any) -> StoreError:
        return StoreError(f"{path}: entry {i} is malformed: `{field}` must be {want}, not {got!r}"[:300])

    if not isinstance(e, dict):
        raise bad("entry", "an object", e)
    for key in ("kernel", "target"):
        if not isinstance(e.get(key), str):
            raise bad(key, "a string", e.get(key))
    cfg = e.get("config")
    if not isinstance(cfg, dict):
        raise bad("config", "an object", cfg)
    if not isinstance(cfg.get("kwargs", {}), dict):
        raise bad("config.kwargs", "an object", cfg.get("kwargs"))
    helion = cfg.get("frontend") == "helion"
    for name, v in (cfg.get("kwargs") or {}).items():
        # a constexpr value Triton can specialise on: a list or object raised TypeError at the kernel's launch.
        # A helion.Config takes lists (block_sizes=[64, 64, 32], loop_orders=[[0, 1]]): short ones of scalars
        if not _scalar(v) and not (helion and _short_list(v, depth=2)):
            raise bad(f"config.kwargs.{name}", "a number, string or boolean" + (" (or a short list of them)"
                                                                               if helion else ""), v)
    for key, top in (("num_warps", 64), ("num_stages", 64), ("maxnreg", 256)):
        v = cfg.get(key)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
            raise bad(f"config.{key}", "a positive integer", v)
        if v is not None and v > top:   # above Triton's own limits (32 warps of 1,024 threads, 255 registers a thread)
            raise bad(f"config.{key}", f"at most {top}", v)
    if not isinstance(e.get("bucket", "*"), str) or not isinstance(e.get("rationale", ""), str):
        raise bad("bucket/rationale", "a string", e.get("bucket"))
    for key in ("estimate", "space"):
        if e.get(key) is not None and not isinstance(e[key], dict):
            raise bad(key, "an object", e[key])
    if e.get("keep") is not None and not isinstance(e["keep"], str):
        raise bad("keep", "a string", e["keep"])
    return Entry(e["kernel"], e["target"], str(e.get("bucket", "*")), cfg, dict(e.get("estimate") or {}),
                 str(e.get("rationale", "")), dict(e["space"]) if isinstance(e.get("space"), dict) else None,
                 e.get("keep"))


def _scalar(v: Any) -> bool:
    return isinstance(v, (int, float, str)) and not (isinstance(v, int) and not isinstance(v, bool)
                                                      and abs(v) >= 1 << 63)


# longest list a helion.Config field holds in practice (one entry per tiled dimension or loop): a bound, not a fit
_MAX_LIST = 64


def _short_list(v: Any, depth: int) -> bool:
    return isinstance(v, list) and len(v) <= _MAX_LIST and all(
        _scalar(x) or (depth > 1 and _short_list(x, depth - 1)) for x in v)


def stale_entries(entries: list[Entry], current: dict[tuple[str, str], str]) -> list[tuple[Entry, str]]:
    """Entries whose kernel (module, qualname) now hashes differently, or no longer exists."""
    out: list[tuple[Entry, str]] = []
    for e in entries:
        module, qualname, digest = split_id(e.kernel)
        now = current.get((module, qualname))
        if now is None:
            out.append((e, "kernel not found"))
        elif now != digest:
            out.append((e, "kernel source changed since the recommendation"))
    return out
