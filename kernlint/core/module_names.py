"""The module name kernlint gives a file: inside a package, the name Python's import system gives it
(`package_module_name`); elsewhere its path's (`examples/sub/x.py` → `examples.sub.x`, relative to where
kernlint runs). A module of its own (no libcst), so the runtime shim and the config store can name kernels
exactly as the frontend does without importing the frontend."""
from __future__ import annotations

import os
from collections.abc import Callable

_MAX_DEPTH = 32   # nested packages deeper than this are not walked (no real package comes close)


def module_name_for(path: str) -> str:
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts:
        return ""
    if parts[-1].endswith(".py"):
        parts[-1] = parts[-1][:-3]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(p for p in parts if p.isidentifier())


def _package_prefix(directory: str, isfile: Callable[[str], bool]) -> list[str] | None:
    """The package a directory is, as Python's import system finds it: the directory and every directory above
    it that holds an `__init__.py` (`/x/pkg/sub` → ["pkg", "sub"]); None when it is not a regular package."""
    parts: list[str] = []
    d = directory
    for _ in range(_MAX_DEPTH):
        if not isfile(os.path.join(d, "__init__.py")):
            break
        parts.insert(0, os.path.basename(d))
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return parts or None


def package_module_name(path: str, isfile: Callable[[str], bool] | None = None) -> str:
    """The module name Python would give `path`, however the path is spelled: a file inside a regular package
    is named from its package structure (directories with `__init__.py` upward, `/abs/pkg/mod.py` and
    `pkg/mod.py` are both `pkg.mod`). A file outside any package (a script, an example) keeps the name of its
    path relative to the working directory when it lies below it, else of its absolute path (as
    `module_name_for`), which is also how the runtime shim names a script's kernels."""
    if path in ("", "-") or path.startswith("<"):
        return module_name_for(path)
    absolute = os.path.abspath(path)
    directory = os.path.dirname(absolute)
    prefix = _package_prefix(directory, isfile or os.path.isfile)   # not cached: a long-lived editor sees new packages
    if prefix is not None:
        stem = os.path.basename(absolute)
        leaf = [] if stem == "__init__.py" else [stem[:-3] if stem.endswith(".py") else stem]
        return ".".join(p for p in (*prefix, *leaf) if p.isidentifier())
    rel = os.path.relpath(absolute)
    # below the working directory: named relative to it; elsewhere by the absolute path, so `../x/k.py` and
    # `/abs/x/k.py` agree (naming the relative spelling depended on how deep the working directory sat)
    return module_name_for(rel if not rel.startswith("..") else absolute)
