"""Files outside the run that define the jit helpers its kernels call: a bounded Python import search.

A kernel's estimates need the bodies of the helpers it calls (a `tl.dot` inside fla's `safe_dot` is most of
the kernel's shared memory). When the helper's module is not among the files given (`kernlint check
fla/ops/mesa_net/chunk_h_fwd.py`, whose `safe_dot` lives in fla/ops/utils/op.py), it is looked up the way
Python's import system would find it from the given file: `fla.ops.utils.op` as `<dir>/fla/ops/utils/op.py`
or `<dir>/fla/ops/utils/op/__init__.py` under each directory above the file. A found file is context only:
its helpers and constants are used, nothing in it is reported. Without it the call is modelled as an
element-wise op and the kernel says so (KL002), as before.

Only names the run's jit code references and no file of the run defines are followed; standard modules
(triton, torch, builtins, ...) never are. The search is bounded (MAX_FILES, MAX_ROUNDS for helpers of
helpers) so a large repository cannot turn one check into a crawl.
"""
from __future__ import annotations

import ast
import os
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from kernlint.pipeline.results import ParsedFile

Interface = tuple[frozenset[str], frozenset[str]]   # (names a file defines, names it references)
T = TypeVar("T")

MAX_FILES = 64      # context files added to one run
MAX_ROUNDS = 4      # helpers of helpers of helpers
MAX_LEVELS = 8      # directories above a file that are searched
NOT_FOLLOWED = ("module:", "builtins.", "triton.", "torch.", "numpy.", "math.", "helion.", "functools.",
                "typing.", "os.", "sys.")


def interface(p: ParsedFile) -> Interface:
    """What a parsed file defines (its jit functions, its module) and references (launched and called names)."""
    if p.facts is None:
        return frozenset(), frozenset()
    module = f"module:{p.facts.module_name}"  # files that map to one module name see each other's names
    defines = {module, *(j.full_name for j in p.facts.jit_functions)}
    refs = {module, *(s.callee for s in p.facts.launches), *p.facts.called_jit_names}
    return frozenset(defines), frozenset(refs)


def search_dirs(paths: Iterable[str]) -> list[str]:
    """The directories above each given file, nearest first (as written: relative paths stay relative, so
    the files found are spelled like the files given)."""
    out: dict[str, None] = {}
    for path in paths:
        d = os.path.dirname(path)
        for _ in range(MAX_LEVELS):
            out.setdefault(d, None)
            if d in ("", os.sep) or os.path.dirname(d) == d:
                break
            d = os.path.dirname(d)
        out.setdefault("", None)
    return list(out)


def module_file(module: str, dirs: Iterable[str], exists: Callable[[str], bool] = os.path.isfile) -> str | None:
    """The file that defines `module` under one of `dirs`, if its path gives that module name back."""
    from kernlint.core.module_names import package_module_name

    parts = module.split(".")
    for d in dirs:
        for cand in (os.path.join(d, *parts) + ".py", os.path.join(d, *parts, "__init__.py")):
            if exists(cand) and package_module_name(cand, exists) == module:
                return os.path.normpath(cand)
    return None


def _wanted(ifaces: Iterable[Interface]) -> set[str]:
    ifaces = list(ifaces)
    defined = {name for d, _ in ifaces for name in d}
    return {r for _, refs in ifaces for r in refs
            if r not in defined and "." in r and not r.startswith(NOT_FOLLOWED)}


def follow(given: list[tuple[str, Interface]], load: Callable[[list[str]], list[tuple[Interface, T]]],
           exists: Callable[[str], bool] = os.path.isfile, base: str = "") -> list[tuple[str, Interface, T]]:
    """Context files for the run `given` ((path, interface) of each file): the modules defining names the
    run references but does not define, then theirs (up to MAX_ROUNDS), at most MAX_FILES. `load(paths)`
    reads and parses new files, returning (interface, payload) for each. Paths are as given (module names
    come from them); `base` is the directory they are relative to when it is not the working directory
    (the editor lints a document under its project root)."""
    if base:
        on_disk = exists
        exists = lambda p: on_disk(os.path.join(base, p))  # noqa: E731  (paths stay relative to base)
    known = {os.path.normpath(p) for p, _ in given}
    dirs = search_dirs([p for p, _ in given if p != "-"])
    ifaces = [i for _, i in given]
    looked: dict[str, str | None] = {}
    added: list[tuple[str, Interface, T]] = []
    for _ in range(MAX_ROUNDS):
        new: list[str] = []
        for ref in sorted(_wanted(ifaces)):
            parts = ref.split(".")
            for k in range(len(parts) - 1, 0, -1):   # `a.b.c.f`: module a.b.c, else a.b (a re-export), ...
                module = ".".join(parts[:k])
                if module not in looked:
                    looked[module] = module_file(module, dirs, exists)
                found = looked[module]
                if found is not None:
                    if found not in known and len(added) + len(new) < MAX_FILES:
                        known.add(found)
                        new.append(found)
                    break
        if not new:
            break
        loaded = load(new)
        added.extend((path, iface, payload) for path, (iface, payload) in zip(new, loaded))
        ifaces.extend(iface for iface, _ in loaded)
        dirs = search_dirs([*(p for p, _ in given if p != "-"), *(p for p, _, _ in added)])
    return added


# -- re-exported names ---------------------------------------------------------------------------
# Module heads never looked up on disk when following a re-export: the name is already what it means.
STANDARD_HEADS = frozenset(p.rstrip(".") for p in NOT_FOLLOWED if not p.endswith(":"))
MAX_HOPS = 8        # `a imports triton from b, which imports it from c, ...`: no real package needs more than 3


def _module_bindings(path: str, package: str) -> dict[str, str]:
    """A module's import bindings (local name → absolute dotted target): its module-level imports, under
    `if`/`try`/`with` too (`try: import triton` guards), not those inside functions or classes, which bind
    no module attribute. Assignments are not bindings here: `triton = None` in an `except ImportError:` is
    the fallback, not the name a kernel's decorator means."""
    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    out: dict[str, str] = {}
    for node in _module_statements(tree.body):
        if isinstance(node, ast.Import):
            for a in node.names:
                out.setdefault(a.asname or a.name.split(".")[0], a.name if a.asname else a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                base = ".".join(p for p in (*parts, base) if p)
            for a in node.names:
                if a.name != "*":
                    out.setdefault(a.asname or a.name, f"{base}.{a.name}" if base else a.name)
    return out


def _module_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run at module level: the body and the bodies of its compound statements, never a
    function's or a class's (only statements are visited, no expression: a large module costs little)."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for attr in ("body", "orelse", "finalbody"):
            stack.extend(reversed([s for s in getattr(stmt, attr, None) or () if isinstance(s, ast.stmt)]))
        for handler in getattr(stmt, "handlers", None) or ():
            stack.extend(reversed(handler.body))


class Reexports:
    """Follows a name imported from a project module to what that module imported it as, the way Python's
    import system binds it: `from deepspeed.ops.triton_ops._triton import triton` is `triton` when _triton.py
    does `import triton`. Modules are found as `module_file` finds a helper's module (directories above the
    importing file, inside or outside the checked paths); each is read once per resolver with `ast`."""

    def __init__(self, exists: Callable[[str], bool] = os.path.isfile) -> None:
        self._exists = exists
        self._files: dict[tuple[str, tuple[str, ...]], str | None] = {}
        self._bindings: dict[str, dict[str, str]] = {}

    def resolve(self, name: str, near: str) -> str:
        """`name` (absolute, dotted) as the file at `near` imported it, with every re-export followed."""
        dirs = tuple(search_dirs([near])) if near not in ("", "-") and not near.startswith("<") else ("",)
        for _ in range(MAX_HOPS):
            parts = name.split(".")
            if parts[0] in STANDARD_HEADS or len(parts) < 2:
                return name
            for k in range(len(parts) - 1, 0, -1):   # the longest prefix that is a module, then its binding
                module = ".".join(parts[:k])
                path = self._file(module, dirs)
                if path is None:
                    continue
                target = self._module(path, module).get(parts[k])
                if target is None:
                    return name                       # defined there (a def, a class, a constant)
                name = ".".join([target, *parts[k + 1:]])
                break
            else:
                return name
        return name

    def _file(self, module: str, dirs: tuple[str, ...]) -> str | None:
        key = (module, dirs)
        if key not in self._files:
            self._files[key] = module_file(module, dirs, self._exists)
        return self._files[key]

    def _module(self, path: str, module: str) -> dict[str, str]:
        if path not in self._bindings:
            package = module if os.path.basename(path) == "__init__.py" else module.rpartition(".")[0]
            self._bindings[path] = _module_bindings(path, package)
        return self._bindings[path]
