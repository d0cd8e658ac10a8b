"""The config store (`kernlint.lock.json`): versioned, human-reviewable, keyed by kernel id, target, bucket.

Kernel id = module path + qualname + sha256 of the kernel's source (DESIGN.md §8), so an entry whose
kernel changed is detected as stale (`stale_entries`) and the shim falls back to the author's config.
This module must stay importable without libcst or the analysis: the shim reads stores with it.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from kernlint.atomic_io import write_atomic

SCHEMA = "kernlint.lock/1"


class StoreError(ValueError):
    """A corrupt or foreign store; the message names the file and the problem."""


def source_hash(source: str) -> str:
    # normalised line endings and trailing whitespace: a re-save by another editor is not a change
    text = "\n".join(line.rstrip() for line in source.replace("\r\n", "\n").splitlines()).strip()
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


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

    def to_json(self) -> dict[str, Any]:
        out = {"kernel": self.kernel, "target": self.target, "bucket": self.bucket, "config": self.config,
               "estimate": self.estimate, "rationale": self.rationale}
        if self.space is not None:
            out["space"] = self.space
        return out


def write_store(path: str, entries: list[Entry], generator: str) -> None:
    data = {"schema": SCHEMA, "generator": generator,
            "entries": sorted((e.to_json() for e in entries), key=lambda e: (e["kernel"], e["target"], e["bucket"]))}
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    write_atomic(path, text.encode("utf-8"), keep_mode=False)  # a reader never sees half a store


def read_store(path: str) -> list[Entry]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the config store: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path}: not a kernlint config store (invalid JSON: {exc})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise StoreError(f"{path}: not a kernlint config store (schema {found!r}, expected {SCHEMA!r})")
    out: list[Entry] = []
    for i, e in enumerate(data.get("entries") or []):
        try:
            cfg = e["config"]
            if not isinstance(cfg.get("kwargs", {}), dict) or not isinstance(cfg.get("num_warps", 4), int):
                raise TypeError("config")
            out.append(Entry(str(e["kernel"]), str(e["target"]), str(e.get("bucket", "*")), cfg,
                             dict(e.get("estimate") or {}), str(e.get("rationale", "")),
                             dict(e["space"]) if isinstance(e.get("space"), dict) else None))
        except (KeyError, TypeError, AttributeError) as exc:
            raise StoreError(f"{path}: entry {i} is malformed ({exc})") from None
    return out


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
