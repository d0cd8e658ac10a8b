"""The module name kernlint gives a file: `examples/sub/x.py` → `examples.sub.x` (paths are taken relative to
where kernlint runs). Pure string work in a module of its own, so the runtime shim and the config store can
name kernels exactly as the frontend does without importing the frontend (libcst)."""
from __future__ import annotations


def module_name_for(path: str) -> str:
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts:
        return ""
    if parts[-1].endswith(".py"):
        parts[-1] = parts[-1][:-3]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(p for p in parts if p.isidentifier())
