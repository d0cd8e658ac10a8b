"""A live kernel's store identity — module id, qualname, source hash — computed the way `kernlint recommend`
and KL406 compute it from the file, so an entry fresh for one is fresh for all three."""
from __future__ import annotations

import ast
import functools
import inspect
import linecache
import os
import sys
import textwrap
from typing import Any

from kernlint.core.module_names import module_name_for
from kernlint.core.config_store import def_text, qualname_key

_MAX_LAYERS = 32     # longer than any real decorator stack; a cycle of `.fn` must not hang a launch


def unwrap(obj: Any) -> tuple[Any, Any]:
    """(the JITFunction / InterpretedFunction, its Python function) under any Autotuner / Heuristics layers:
    each layer keeps the next in `.fn`, the JIT object keeps the Python function there. A plain function
    is its own pair."""
    jit = obj
    for _ in range(_MAX_LAYERS):
        inner = getattr(jit, "fn", None)
        if inner is None:
            return jit, jit
        if inspect.isfunction(inner):
            return jit, inner
        jit = inner
    return jit, getattr(jit, "fn", jit)


def qualname_of(fn: Any) -> str:
    return qualname_key(getattr(fn, "__qualname__", "") or getattr(fn, "__name__", ""))


def _source_file(fn: Any) -> str:
    code = getattr(fn, "__code__", None)
    return code.co_filename if code is not None else ""


def module_ids(fn: Any) -> tuple[str, ...]:
    """The module ids a store entry for `fn` may carry. A kernel of the script being run (`__main__`) is
    named by its file, as recommend names it: the path relative to the working directory when it lies
    below it (`pkg/ops.py` → `pkg.ops`), else the absolute path (which ends with the same id); with
    `python -m pkg.ops` also the module's import name."""
    module = getattr(fn, "__module__", "") or ""
    if module != "__main__":
        return (module,)
    ids: list[str] = []
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and getattr(spec, "name", "") not in ("", "__main__"):
        ids.append(spec.name)
    path = _source_file(fn)
    if path and not path.startswith("<"):          # "<stdin>", "<string>": no file, nothing to name it by
        path = os.path.abspath(path)
        try:
            rel = os.path.relpath(path)
        except ValueError:                          # another drive (Windows): no relative path
            rel = path
        ids.append(module_name_for(rel if not rel.startswith("..") else path))
    return tuple(dict.fromkeys(i for i in ids if i))


@functools.lru_cache(maxsize=64)
def _defs(text: str) -> dict[tuple[str, int], str]:
    """(name, first line incl. decorators) → the def's text as the store hashes it, for every def in `text`."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    lines = text.splitlines()                       # as recommend.cli.kernel_source splits the file
    out: dict[tuple[str, int], str] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            out.setdefault((node.name, first), def_text(lines, node))
    return out


def kernel_source(fn: Any) -> str:
    """`fn`'s text as the store hashes it (`store.def_text`: first decorator to the last statement, dedented), read
    from the file the function was compiled from. `co_firstlineno` is the first decorator's line, which
    tells apart two defs of one name in a file."""
    fn = unwrap(fn)[1]
    code = getattr(fn, "__code__", None)
    if code is not None:
        lines = linecache.getlines(code.co_filename, getattr(fn, "__globals__", None))
        found = _defs("".join(lines)).get((fn.__name__, code.co_firstlineno)) if lines else None
        if found is not None:
            return found
    return _inspect_source(fn)


def _inspect_source(fn: Any) -> str:
    """Fallback when the file cannot be parsed: inspect's block, decorators included (keeps trailing comments)."""
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return ""
