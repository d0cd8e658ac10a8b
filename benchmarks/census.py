"""An independent `ast` census of the kernels a package launches: the yardstick benchmarks/corpus.py holds
kernlint's kernel discovery against. It shares no code with kernlint (only the standard library's `ast`).

A census kernel is
- a function decorated with Triton's `jit` / `autotune` / `heuristics` (however `triton` reached the file:
  `import triton as tr`, `from triton import jit`, or a project module that re-exports triton or
  triton.language, followed through the package the way Python's import system would) whose name is
  subscripted and called, `name[grid](...)` or `mod.name[grid](...)`, somewhere in the package; or
- a function decorated with Helion's `kernel` (`@helion.kernel`, `@helion.kernel(...)`), launched or not.

Matching launches by name over the whole package is deliberately simple: it can over-count (two kernels of
one name in different modules, one launched) and under-count (a kernel launched through a variable), which
the corpus report shows as missed or extra rather than hides.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

TRITON_DECORATORS = frozenset({
    "triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit",
    "triton.autotune", "triton.runtime.autotune", "triton.runtime.autotuner.autotune",
    "triton.heuristics", "triton.runtime.heuristics", "triton.runtime.autotuner.heuristics",
})
HELION_DECORATORS = frozenset({"helion.kernel", "helion.runtime.kernel", "helion.runtime.kernel.kernel"})
_MAX_HOPS = 16   # re-export chains longer than this are not followed (no real package has more than 3)


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else ""
    return node.id if isinstance(node, ast.Name) else ""


def module_name(path: Path, root: Path) -> str:
    """The import name of `path`: directories above it that hold an `__init__.py` are its packages."""
    parts = [path.stem] if path.name != "__init__.py" else []
    d = path.parent
    while d != root.parent and (d / "__init__.py").is_file():
        parts.insert(0, d.name)
        d = d.parent
    return ".".join(parts)


@dataclass
class _Module:
    path: Path
    name: str
    is_package: bool
    tree: ast.Module
    bindings: dict[str, str] = field(default_factory=dict)   # local name -> absolute dotted target


def _bindings(mod: _Module) -> dict[str, str]:
    package = mod.name if mod.is_package else mod.name.rpartition(".")[0]
    out: dict[str, str] = {}
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    head = a.name.split(".")[0]
                    out[head] = head
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".") if package else []
                up = up[: len(up) - (node.level - 1)] if node.level > 1 else up
                base = ".".join(x for x in (*up, base) if x)
            for a in node.names:
                if a.name != "*":
                    out.setdefault(a.asname or a.name, f"{base}.{a.name}" if base else a.name)
    return out


class Census:
    def __init__(self, root: Path, files: list[Path]) -> None:
        self.root = root
        self.modules: dict[str, _Module] = {}
        self.by_path: dict[Path, _Module] = {}
        for p in files:
            try:
                tree = ast.parse(p.read_bytes())
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            m = _Module(p, module_name(p, root), p.name == "__init__.py", tree)
            m.bindings = _bindings(m)
            self.modules.setdefault(m.name, m)
            self.by_path[p] = m

    def resolve(self, dotted: str, mod: _Module) -> str:
        """`dotted` as written in `mod`, made absolute through imports and project re-exports."""
        head, _, rest = dotted.partition(".")
        if head not in mod.bindings:
            return dotted
        full = mod.bindings[head] + (f".{rest}" if rest else "")
        for _ in range(_MAX_HOPS):
            parts = full.split(".")
            # the longest prefix that is a project module, then the next name looked up in that module
            for k in range(len(parts) - 1, 0, -1):
                owner = self.modules.get(".".join(parts[:k]))
                if owner is not None and parts[k] in owner.bindings:
                    full = ".".join([owner.bindings[parts[k]], *parts[k + 1:]])
                    break
            else:
                return full
        return full

    def kernels(self) -> dict[Path, set[int]]:
        """Def lines of census kernels, per file."""
        launched: set[str] = set()
        for m in self.by_path.values():
            for node in ast.walk(m.tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
                    callee = node.func.value
                    if isinstance(callee, ast.Name):
                        launched.add(callee.id)
                    elif isinstance(callee, ast.Attribute):
                        launched.add(callee.attr)
        out: dict[Path, set[int]] = {}
        for p, m in self.by_path.items():
            for node in ast.walk(m.tree):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                names = {self.resolve(_dotted(d), m) for d in node.decorator_list}
                if (names & TRITON_DECORATORS and node.name in launched) or names & HELION_DECORATORS:
                    out.setdefault(p, set()).add(node.lineno)
        return out
