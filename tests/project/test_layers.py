"""Import contract: kernlint's layers point one way and its packages import each other in no cycle.

Layers, lowest first; a module imports kernlint modules of its own unit or of a lower layer only:

    base      hardware/, core/ (diagnostic, text_lines, source_files, module_names, deep_stack, cancel,
              atomic_io, config_store: the store format the shim and recommend share), kernlint/__init__
    ir        the graph and symbolic values: no libcst, no frontend
    frontend  facts read from source (libcst; host_facts with ast)
    lowering  libcst → graph          } siblings: the analyses read the graph, never how it was built,
    analysis  estimates per config    } and the lowering knows nothing of estimates
    top       everything else: pipeline/ (api, results, runner, cache, settings, the rule API, ...), rules/,
              report/, lsp/, fix/, cli/, calibrate/, recommend/, shim/, kernlint.triton

A unit is a subpackage of kernlint (`core`, `frontend`, `pipeline`, `report`, ...; rules/ is `kernlint.rules`)
or a top-level module (`triton`). Every import counts: module level, under `if TYPE_CHECKING:` and inside
functions. A function-level import that crosses a layer must be listed in LAZY_CROSSINGS with its reason
(none is needed today). Besides the layers: the shim imports only base units (it never loads the linter);
reporters never import the orchestrator (pipeline.api, runner, cache) or the command line, only
pipeline.results; recommend never imports the shim (both read kernlint.core.config_store);
libcst stays out of ir and analysis; Triton, torch and Helion are imported inside functions of the few
modules that compile, run or patch kernels, nowhere else.

The graph is read with `ast` from the source (nothing is imported): one parse of ~180 files, a second or two.
"""
from __future__ import annotations

import ast
import functools
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

BASE = frozenset({"kernlint", "hardware", "core"})
LAYER = {"ir": 1, "frontend": 2, "lowering": 3, "analysis": 3}
TOP = 4
SIBLINGS = frozenset({"lowering", "analysis"})   # same layer, neither imports the other

# The only units each of these may import from kernlint.
ONLY = {"shim": BASE}
# Modules (and the modules under them) a unit must not import.
FORBIDDEN = {
    # reporters read kernlint.pipeline.results, never the orchestrator or the command line
    "report": ("kernlint.pipeline.api", "kernlint.pipeline.runner", "kernlint.pipeline.cache", "kernlint.cli"),
    "recommend": ("kernlint.shim",),   # both read kernlint.core.config_store; applying an entry is the shim's
}
# Third-party packages: where they may be imported at all (always inside a function).
LIBCST_FREE = frozenset({"ir", "analysis", *BASE})
RUNTIME_PACKAGES = ("triton", "torch", "helion")
RUNTIME_IMPORTERS = ("kernlint.calibrate", "kernlint.shim", "kernlint.triton", "kernlint.recommend.verify")

# (importing module, imported module): function-level imports allowed to cross a layer, each with why.
LAZY_CROSSINGS: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Import:
    module: str       # importing module
    target: str       # imported name, resolved to a module of the tree where it is one
    line: int
    kind: str         # "top", "typing" (under TYPE_CHECKING) or "lazy" (inside a function)

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.target} ({self.kind})"


def modules(root: Path) -> dict[str, Path]:
    """Dotted name → file, for kernlint/ and rules/ (installed as kernlint.rules)."""
    found: dict[str, Path] = {}
    for folder, package in (("kernlint", "kernlint"), ("rules", "kernlint.rules")):
        for path in sorted((root / folder).rglob("*.py")):
            parts = list(path.relative_to(root / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def _imports_of(name: str, path: Path, known: dict[str, Path]) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

    def absolute(node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = package[:len(package) - node.level + 1]
        return ".".join(base + ([node.module] if node.module else []))

    def visit(node: ast.AST, kind: str) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield Import(name, alias.name, child.lineno, kind)
            elif isinstance(child, ast.ImportFrom):
                base = absolute(child)
                for alias in child.names:
                    full = f"{base}.{alias.name}"
                    yield Import(name, full if full in known else base, child.lineno, kind)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                yield from visit(child, "lazy")
            elif isinstance(child, ast.If) and kind == "top" and "TYPE_CHECKING" in ast.unparse(child.test):
                for stmt in child.body:
                    yield from visit(ast.Module([stmt], []), "typing")
                for stmt in child.orelse:
                    yield from visit(ast.Module([stmt], []), kind)
            else:
                yield from visit(child, kind)

    yield from visit(tree, "top")


@functools.cache
def graph(root: Path) -> tuple[dict[str, Path], list[Import]]:
    known = modules(root)
    return known, [imp for name, path in known.items() for imp in _imports_of(name, path, known)]


def resolve(target: str, known: dict[str, Path]) -> str | None:
    """The tree's module that `target` names or lies in (`kernlint.ir.nodes.Op` → `kernlint.ir.nodes`)."""
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target or None


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "kernlint"


def layer(u: str) -> int:
    return 0 if u in BASE else LAYER.get(u, TOP)


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def internal_edges(root: Path) -> list[tuple[Import, str]]:
    """Imports between two different units: (import, imported module)."""
    known, imports = graph(root)
    edges = []
    for imp in imports:
        if not imp.target.startswith("kernlint"):
            continue
        target = resolve(imp.target, known)
        if target is not None and unit(target) != unit(imp.module):
            edges.append((imp, target))
    return edges


def layer_violations(root: Path) -> list[str]:
    problems = []
    for imp, target in internal_edges(root):
        a, b = unit(imp.module), unit(target)
        why = None
        if layer(b) > layer(a):
            why = f"{a} (layer {layer(a)}) imports {b} (layer {layer(b)})"
        elif a in SIBLINGS and b in SIBLINGS:
            why = f"{a} and {b} are sibling layers"
        elif a in ONLY and b not in ONLY[a]:
            why = f"{a} may import only {', '.join(sorted(ONLY[a]))}"
        elif _within(target, FORBIDDEN.get(a, ())):
            why = f"{a} must not import {target}"
        if why is None:
            continue
        if imp.kind == "lazy" and (imp.module, target) in LAZY_CROSSINGS:
            continue
        problems.append(f"{imp}: {why}")
    return problems


def package_cycles(root: Path) -> list[list[str]]:
    """Strongly connected sets of units (Tarjan), with every kind of import and no exception."""
    deps: dict[str, set[str]] = defaultdict(set)
    for imp, target in internal_edges(root):
        deps[unit(imp.module)].add(unit(target))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(deps[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for v in sorted(deps):
        if v not in index:
            connect(v)
    return cycles


def third_party_violations(root: Path) -> list[str]:
    known, imports = graph(root)
    problems = []
    for imp in imports:
        top = imp.target.split(".")[0]
        if top == "libcst" and unit(imp.module) in LIBCST_FREE:
            problems.append(f"{imp}: {unit(imp.module)} must not read libcst")
        if top in RUNTIME_PACKAGES:
            allowed = imp.module.startswith(RUNTIME_IMPORTERS) and imp.kind == "lazy"
            if not allowed:
                problems.append(f"{imp}: {top} is imported only inside functions of {', '.join(RUNTIME_IMPORTERS)}")
    return problems


# ---------------------------------------------------------------------------------------------------- the tree

def test_layers_point_one_way() -> None:
    assert layer_violations(ROOT) == []


def test_no_cycle_between_packages() -> None:
    assert package_cycles(ROOT) == []


def test_libcst_triton_and_torch_stay_where_they_belong() -> None:
    assert third_party_violations(ROOT) == []


def test_documented_lazy_crossings_exist() -> None:
    """An exception whose import is gone is removed with it, so the list says what crosses today."""
    lazy = {(imp.module, target) for imp, target in internal_edges(ROOT) if imp.kind == "lazy"}
    assert set(LAZY_CROSSINGS) <= lazy


def test_the_layers_are_as_documented() -> None:
    """Every subpackage of kernlint is a unit the contract places; a new one is placed on purpose."""
    packages = {p.name for p in (ROOT / "kernlint").iterdir() if (p / "__init__.py").exists() and not p.is_symlink()}
    placed = {"core", "hardware", "ir", "frontend", "lowering", "analysis"}
    top = {"pipeline", "cli", "calibrate", "fix", "lsp", "recommend", "report", "shim"}
    assert packages == placed | top
    assert BASE - {"kernlint"} <= packages
    # the only modules beside the packages: the package's own, `python -m kernlint` and the public autotune helpers
    loose = {p.name for p in (ROOT / "kernlint").glob("*.py")}
    assert loose == {"__init__.py", "__main__.py", "triton.py"}


# --------------------------------------------------------------------------- the checker on a tree made to fail

def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in {"kernlint/__init__.py": "", "rules/__init__.py": "", **files}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_a_back_edge_is_reported(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "kernlint/ir/__init__.py": "",
        "kernlint/ir/nodes.py": "from kernlint.frontend.facts import JitFunction\n",   # ir → frontend
        "kernlint/frontend/__init__.py": "",
        "kernlint/frontend/facts.py": "from kernlint.ir.nodes import Op\nJitFunction = 1\n",
        "kernlint/analysis/__init__.py": "",
        "kernlint/analysis/estimate.py": "def f():\n    from kernlint.lowering import lower\n",   # sibling
        "kernlint/lowering/__init__.py": "",
        "kernlint/lowering/lower.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                      "    from kernlint.pipeline.settings import Settings\n",   # up to the top
        "kernlint/pipeline/__init__.py": "",
        "kernlint/pipeline/settings.py": "Settings = 1\n",
        "kernlint/pipeline/api.py": "f = 1\n",
        "kernlint/pipeline/results.py": "",
        "kernlint/shim/__init__.py": "from kernlint.recommend import core\n",   # the shim loads the linter
        "kernlint/recommend/__init__.py": "",
        "kernlint/recommend/core.py": "",
        "kernlint/report/__init__.py": "from kernlint.pipeline.api import f\n",   # a reporter imports the orchestrator
        "kernlint/report/json.py": "from kernlint.pipeline import results\n",   # ... but may read the results
    })
    problems = layer_violations(root)
    assert any(p.startswith("kernlint.ir.nodes:1 imports kernlint.frontend.facts (top)") for p in problems)
    assert any("kernlint.analysis.estimate:2" in p and "sibling" in p for p in problems)
    assert any(p.startswith("kernlint.lowering.lower:3 imports kernlint.pipeline.settings (typing)") for p in problems)
    assert any(p.startswith("kernlint.shim:1 ") and "shim may import only" in p for p in problems)
    assert any(p.startswith("kernlint.report:1 ") and "must not import kernlint.pipeline.api" in p for p in problems)
    assert len(problems) == 5
    assert package_cycles(root) == [["frontend", "ir"]]


def test_a_cycle_through_lazy_imports_is_reported(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "kernlint/calibrate/__init__.py": "def run():\n    from kernlint.recommend.source import x\n",
        "kernlint/recommend/__init__.py": "",
        "kernlint/recommend/source.py": "x = 1\n",
        "kernlint/recommend/verify.py": "def verify():\n    import kernlint.calibrate\n",
    })
    assert layer_violations(root) == []
    assert package_cycles(root) == [["calibrate", "recommend"]]


def test_third_party_imports_outside_their_modules_are_reported(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "kernlint/ir/__init__.py": "import libcst\n",
        "kernlint/pipeline/__init__.py": "",
        "kernlint/pipeline/api.py": "def f():\n    import torch\n",
        "kernlint/shim/__init__.py": "import triton\n",   # the shim may, but only inside a function
        "kernlint/calibrate/__init__.py": "def f():\n    import triton\n",
    })
    assert third_party_violations(root) == [
        "kernlint.ir:1 imports libcst (top): ir must not read libcst",
        "kernlint.pipeline.api:2 imports torch (lazy): torch is imported only inside functions of " + ", ".join(RUNTIME_IMPORTERS),
        "kernlint.shim:1 imports triton (top): triton is imported only inside functions of " + ", ".join(RUNTIME_IMPORTERS),
    ]
