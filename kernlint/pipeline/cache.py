"""On-disk cache of per-file lint results (`.kernlint_cache/`), safe with concurrent processes.

Two kinds of entry, both small JSON files written atomically (tempfile in the same directory, then
`os.replace`, so a reader sees a whole old file or a whole new one and two writers of the same key write
the same bytes):

* `iface`: what a file offers to and takes from other files (jit functions it defines, kernels it
  launches and helpers it calls), keyed by (model, path, content). It lets `runner` compute a file's
  dependencies without parsing anything.
* `result`: a file's diagnostics, warnings and kernel/estimate counts, keyed by (model, resolved settings,
  path, content, and the paths and contents of every file it depends on in this run).

The model hash covers kernlint's version and the source of every module that can change a result (the
frontend, IR, analyses, hardware table, rules, suppression and settings code), so editing any of them
invalidates the cache. The kernels' estimates are not cached: formats and commands that need them (json,
explain) bypass the cache; everything else reads diagnostics and counts only.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
from functools import lru_cache
from pathlib import Path
from typing import Any

from kernlint import __version__
from kernlint.core.atomic_io import write_atomic
from kernlint.core.diagnostic import Confidence, Diagnostic, Pos, Severity, Span

CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by kernlint.\n"
                "# For information about cache directory tags see https://bford.info/cachedir/\n")
_SCHEMA = 1
# Parts of the package (paths relative to kernlint/) that only present results; every other module can change one.
_NOT_MODEL = {"report", "lsp", "calibrate", "recommend", "shim", "cli", "__main__.py", "pipeline/cache.py",
              "pipeline/runner.py"}


def digest(*parts: bytes | str) -> str:
    h = hashlib.blake2b(digest_size=20)
    for p in parts:
        # surrogateescape: a file name that is not UTF-8 reaches Python as lone surrogates (PEP 383); it must
        # hash like any other name instead of crashing the run
        b = p.encode("utf-8", "surrogateescape") if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def _model_files() -> list[Path]:
    package = Path(__file__).resolve().parents[1]

    def presents_only(rel: Path) -> bool:
        return rel.parts[0] in _NOT_MODEL or rel.as_posix() in _NOT_MODEL

    files = [p for p in package.rglob("*.py") if not presents_only(p.relative_to(package))]
    files.extend(package.glob("data/*.json"))   # shipped tables rules read (the Triton API table)
    spec = importlib.util.find_spec("kernlint.rules")
    for location in (spec.submodule_search_locations or []) if spec else []:
        files.extend(Path(location).rglob("*.py"))
    return sorted(set(files))


@lru_cache(maxsize=1)
def model_hash() -> str:
    h = hashlib.blake2b(digest_size=20)
    h.update(f"kernlint {__version__} schema {_SCHEMA}".encode())
    for f in _model_files():
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def diagnostic_to_json(d: Diagnostic) -> dict[str, Any]:
    return {"code": d.code, "span": [d.span.path, d.span.start.line, d.span.start.col, d.span.end.line, d.span.end.col],
            "message": d.message, "severity": d.severity.value, "confidence": d.confidence.value, "rule": d.rule,
            "kernel": d.kernel, "target": d.target, "config": d.config, "notes": list(d.notes)}


def diagnostic_from_json(o: dict[str, Any]) -> Diagnostic:
    path, line, col, end_line, end_col = o["span"]
    return Diagnostic(o["code"], Span(path, Pos(line, col), Pos(end_line, end_col)), o["message"],
                      Severity(o["severity"]), Confidence(o["confidence"]), o["rule"], o["kernel"], o["target"],
                      o["config"], tuple(o["notes"]))


class Cache:
    def __init__(self, directory: str | Path) -> None:
        self.root = Path(directory)
        self.dir = self.root / f"v{_SCHEMA}" / model_hash()[:16]
        self._ready = False

    def _ensure(self) -> None:
        if self._ready:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        tag = self.root / "CACHEDIR.TAG"
        if not tag.exists():
            _atomic_write(tag, CACHEDIR_TAG.encode())
            _atomic_write(self.root / ".gitignore", b"# created by kernlint\n*\n")
        self._ready = True

    def _path(self, kind: str, key: str) -> Path:
        return self.dir / f"{kind}-{key}.json"

    def get(self, kind: str, key: str) -> Any | None:
        try:
            with open(self._path(kind, key), "rb") as fh:
                return json.loads(fh.read())
        except (OSError, ValueError):
            return None  # missing, or unreadable: a miss, never an error

    def put(self, kind: str, key: str, value: Any) -> None:
        try:
            self._ensure()
            _atomic_write(self._path(kind, key), json.dumps(value, separators=(",", ":")).encode())
        except OSError:
            pass  # a read-only checkout still lints, just without a cache


def _atomic_write(path: Path, data: bytes) -> None:
    write_atomic(path, data, keep_mode=False)


def clean(directory: str | Path) -> bool:
    """Remove a kernlint cache directory; refuses a directory without kernlint's CACHEDIR.TAG."""
    root = Path(directory)
    if not root.is_dir():
        return False
    tag = root / "CACHEDIR.TAG"
    if not tag.is_file() or "kernlint" not in tag.read_text(errors="replace"):
        raise OSError(f"{root} does not look like a kernlint cache (no kernlint CACHEDIR.TAG); not removing it")
    shutil.rmtree(root)
    return True
