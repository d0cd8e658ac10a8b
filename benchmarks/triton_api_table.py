"""Generate kernlint/data/triton_api.json: the public `triton.language` API of each Triton release.

    python benchmarks/triton_api_table.py            # download each pinned wheel, parse, write the table
    python benchmarks/triton_api_table.py --check    # regenerate in memory and compare with the shipped file

Each pinned wheel is downloaded with `pip download` (one at a time, checked against its SHA-256), only its
`triton/language/**.py` files are read (with `ast`, from the zip; Triton is never imported or run), and the
wheel is deleted. The table records, per module of `triton.language` (`tl`, `tl.math`, `tl.extra.cuda.libdevice`,
...), each attribute a kernel can reach and, per release, what it is: a function with its parameter names, a
class with its constructor's parameters, a dtype object, a submodule, or another value. The lint path reads
it through kernlint/frontend/triton_api.py (the API-misuse rules KL310-KL313).

What counts as an attribute of a module (an over-approximation, so that a name is only called unknown when
no release can have it): every top-level binding of its file (defs, classes, assignments, imports, star
imports; also inside top-level `if`/`try`/`with` blocks, whichever branch runs), its literal `__all__`, and
for a package every submodule file or directory (a package's submodules become attributes once anything
imports them, and `tl.extra` imports its backends dynamically). A module with a module-level `__getattr__`
is marked open: any attribute may exist.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import io
import json
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "kernlint" / "data" / "triton_api.json"
# (release, wheel file, sha256): the newest patch of each minor release, CPython 3.11 x86-64 Linux wheels
# from PyPI (`pip index versions triton` lists them; digests recorded at first download). 2.0, 2.3, 3.0 and
# 3.1 are there so that names removed before 3.2 (`tl.libdevice`, gone since 2.1) are reported as removed,
# not as typos; `triton-version` may select them too.
PINNED: tuple[tuple[str, str, str], ...] = (
    ("2.0.0", "triton-2.0.0-1-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
     "226941c7b8595219ddef59a1fdb821e8c744289a132415ddd584facedeb475b1"),
    ("2.3.1", "triton-2.3.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
     "c9d64ae33bcb3a7a18081e3a746e8cf87ca8623ca13d2c362413ce7a486f893e"),
    ("3.0.0", "triton-3.0.0-1-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
     "5ce8520437c602fb633f1324cc3871c47bee3b67acf9756c1a66309b60e3216c"),
    ("3.1.0", "triton-3.1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
     "0f34f6e7885d1bf0eaaf7ba875a5f0ce6f3c13ba98f9503651c1e6dc6757ed5c"),
    ("3.2.0", "triton-3.2.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
     "8009a1fb093ee8546495e96731336a33fb8856a38e45bb4ab6affd6dbc3ba220"),
    ("3.3.1", "triton-3.3.1-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
     "b31e3aa26f8cb3cc5bf4e187bf737cbacf17311e1112b781d4a059353dfd731b"),
    ("3.4.0", "triton-3.4.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
     "7b70f5e6a41e52e48cfc087436c8a28c17ff98db369447bcaff3b887a3ab4467"),
    ("3.5.1", "triton-3.5.1-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
     "61413522a48add32302353fdbaaf92daaaab06f6b5e3229940d21b5207f47579"),
    ("3.6.0", "triton-3.6.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
     "e8e323d608e3a9bfcc2d9efcc90ceefb764a82b99dea12a86d643c72539ad5d3"),
    ("3.7.1", "triton-3.7.1-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
     "6744957e9fd610a29680ec2346057d0c86948ed3812468670719f391e94b44a5"),
    ("3.8.0", "triton-3.8.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
     "68988ac85d5e7086baeda0ddc175af9667db7529b3c5e11a5c0601b8bef2200a"),
    ("3.9.0", "triton-3.9.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
     "1622118a038b0c6e16fa4a0305da62c8b3c15904ee1cc4d4e65846a25969e41e"),
)
PACKAGE = "triton.language"
DTYPE_CONSTRUCTORS = {"dtype"}   # core.py: `float32 = dtype('fp32')`; dtype objects have no __call__
MAX_ALIAS_DEPTH = 20             # import chains are a few links long; the bound only stops cycles


# -- one release: files → modules → members ------------------------------------------------------

@dataclass
class ModuleSource:
    name: str                      # triton.language.extra.cuda
    is_package: bool
    tree: ast.Module
    submodules: set[str] = field(default_factory=set)


def wheel_files(wheel: bytes) -> dict[str, bytes]:
    """The `triton/language/**.py` files of a wheel (path → content)."""
    with zipfile.ZipFile(io.BytesIO(wheel)) as z:
        return {path: z.read(path) for path in z.namelist()
                if path.startswith("triton/language/") and path.endswith(".py") and ".." not in path.split("/")}


def parse_modules(files: dict[str, bytes]) -> dict[str, ModuleSource]:
    """Every module of `triton.language`, parsed (never executed)."""
    mods: dict[str, ModuleSource] = {}
    for path, text in files.items():
        parts = path.split("/")
        is_pkg = parts[-1] == "__init__.py"
        name = ".".join(parts[:-1] if is_pkg else [*parts[:-1], parts[-1][:-3]])
        mods[name] = ModuleSource(name, is_pkg, ast.parse(text, path))
    for name in mods:   # packages without an __init__ (namespace directories) still have submodules
        parent = name.rpartition(".")[0]
        while parent.startswith(PACKAGE) and parent not in mods:
            mods.setdefault(parent, ModuleSource(parent, True, ast.Module(body=[], type_ignores=[])))
            parent = parent.rpartition(".")[0]
    for name in mods:
        parent, _, leaf = name.rpartition(".")
        if parent in mods:
            mods[parent].submodules.add(leaf)
    return mods


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """Module statements, with the bodies of top-level if/try/with/for blocks flattened in (every branch)."""
    out: list[ast.stmt] = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With)):
            out.extend(_top_level(stmt.body) + _top_level(getattr(stmt, "orelse", [])))
        elif isinstance(stmt, ast.Try):
            out.extend(_top_level(stmt.body) + _top_level(stmt.orelse) + _top_level(stmt.finalbody))
            for h in stmt.handlers:
                out.extend(_top_level(h.body))
    return out


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef, drop_self: bool = False) -> dict[str, object]:
    a = fn.args
    positional = [p.arg for p in (*a.posonlyargs, *a.args)]
    if drop_self and positional:
        positional = positional[1:]
    posonly = len(a.posonlyargs) - (1 if drop_self and a.posonlyargs else 0)
    out: dict[str, object] = {"params": positional}
    # only what is not the default is written, to keep the shipped table small
    if posonly > 0:
        out["posonly"] = posonly
    if a.kwonlyargs:
        out["kwonly"] = [p.arg for p in a.kwonlyargs]
    if a.vararg is not None:
        out["varargs"] = True
    if a.kwarg is not None:
        out["varkw"] = True
    return out


class Release:
    """The members of each `triton.language` module of one release, with import aliases followed."""

    def __init__(self, mods: dict[str, ModuleSource]) -> None:
        self.mods = mods
        self.raw: dict[str, dict[str, tuple]] = {name: self._bindings(m) for name, m in mods.items()}
        self.open = {name for name, m in mods.items() if any(
            isinstance(s, ast.FunctionDef) and s.name == "__getattr__" for s in _top_level(m.tree.body))}

    def _absolute(self, module: ModuleSource, level: int, target: str | None) -> str:
        base = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
        if level > 1:
            base = base[: len(base) - (level - 1)]
        return ".".join([*base, *([target] if target else [])])

    def _bindings(self, m: ModuleSource) -> dict[str, tuple]:
        """name → ("def", entry) | ("alias", module, name) | ("module", module) | ("dtype",) | ("value",)."""
        out: dict[str, tuple] = {}
        for leaf in m.submodules:
            out[leaf] = ("module", f"{m.name}.{leaf}")
        for s in _top_level(m.tree.body):
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[s.name] = ("def", {"kind": "function", **_params(s)})
            elif isinstance(s, ast.ClassDef):
                init = next((b for b in s.body if isinstance(b, ast.FunctionDef) and b.name == "__init__"), None)
                entry: dict[str, object] = {"kind": "class"}
                if init is not None:
                    entry.update(_params(init, drop_self=True))
                out[s.name] = ("def", entry)
            elif isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None:
                targets = s.targets if isinstance(s, ast.Assign) else [s.target]
                value = s.value
                if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in DTYPE_CONSTRUCTORS:
                    kind: tuple = ("dtype",)
                elif isinstance(value, ast.Name):
                    kind = ("alias", m.name, value.id)
                else:
                    kind = ("value",)
                for t in targets:
                    if isinstance(t, ast.Name) and t.id != "__all__":
                        out[t.id] = kind
            elif isinstance(s, ast.Import):
                for a in s.names:
                    if a.asname:
                        out[a.asname] = ("module", a.name) if a.name.startswith(PACKAGE) else ("value",)
                    else:
                        out.setdefault(a.name.split(".")[0], ("value",))
            elif isinstance(s, ast.ImportFrom):
                src = self._absolute(m, s.level, s.module) if s.level else (s.module or "")
                for a in s.names:
                    if a.name == "*":
                        continue   # expanded in members(), once every module's bindings are known
                    local = a.asname or a.name
                    if not src.startswith(PACKAGE):
                        out[local] = ("value",)
                    elif f"{src}.{a.name}" in self.mods:
                        out[local] = ("module", f"{src}.{a.name}")
                    else:
                        out[local] = ("alias", src, a.name)
        for name in _literal_all(m.tree):
            out.setdefault(name, ("value",))
        return out

    def members(self, module: str, seen: frozenset[str] = frozenset()) -> dict[str, tuple]:
        """Bindings of a module including star imports (public names of the source module)."""
        out = dict(self.raw.get(module, {}))
        m = self.mods.get(module)
        if m is None or module in seen:
            return out
        for s in _top_level(m.tree.body):
            if isinstance(s, ast.ImportFrom) and any(a.name == "*" for a in s.names):
                src = self._absolute(m, s.level, s.module) if s.level else (s.module or "")
                if src in self.mods:
                    names = _literal_all(self.mods[src].tree)
                    theirs = self.members(src, seen | {module})
                    for n, b in theirs.items():
                        if (n in names) if names else not n.startswith("_"):
                            out.setdefault(n, ("alias", src, n) if b[0] != "module" else b)
        return out

    def resolve(self, binding: tuple, depth: int = 0) -> dict[str, object]:
        """The table entry of a binding, following aliases to the definition."""
        if binding[0] == "def":
            return dict(binding[1])
        if binding[0] == "module":
            return {"kind": "module", "module": binding[1]}
        if binding[0] == "dtype":
            return {"kind": "dtype"}
        if binding[0] == "alias" and depth < MAX_ALIAS_DEPTH:
            _, module, name = binding
            target = self.members(module).get(name)
            if target is not None and target != binding:
                return self.resolve(target, depth + 1)
        return {"kind": "value"}

    def table(self) -> dict[str, dict[str, object]]:
        """module name → {"open": bool, "members": {name: entry}} for every module of the package."""
        out: dict[str, dict[str, object]] = {}
        for module in sorted(self.mods):
            members = {n: self.resolve(b) for n, b in sorted(self.members(module).items())
                       if not (n.startswith("__") and n.endswith("__"))}
            out[module] = {"open": module in self.open, "members": members}
        return out


def _literal_all(tree: ast.Module) -> list[str]:
    for s in _top_level(tree.body):
        if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in s.targets):
            if isinstance(s.value, (ast.List, ast.Tuple)):
                return [e.value for e in s.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def tensor_methods(mods: dict[str, ModuleSource]) -> list[str]:
    """Methods of `tl.tensor`: its class body plus functions decorated `@_tensor_member_fn` (core attaches them)."""
    names: set[str] = set()
    for m in mods.values():
        for s in _top_level(m.tree.body):
            if isinstance(s, ast.ClassDef) and s.name == "tensor" and m.name.endswith(".core"):
                names |= {b.name for b in s.body if isinstance(b, ast.FunctionDef) and not b.name.startswith("_")}
            if isinstance(s, ast.FunctionDef) and any(
                    (d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")) == "_tensor_member_fn"
                    for d in s.decorator_list):
                names.add(s.name)
    return sorted(names)


# -- all releases: merge into one compact table ----------------------------------------------------

def merge(per_release: dict[str, dict[str, dict[str, object]]], methods: dict[str, list[str]]) -> dict[str, object]:
    """One entry per (module, member) listing the variants it had: {"in": [releases], ...entry}."""
    releases = list(per_release)
    modules: dict[str, dict[str, object]] = {}
    for rel, table in per_release.items():
        for module, info in table.items():
            mod = modules.setdefault(module, {"in": [], "open": [], "members": {}})
            mod["in"].append(rel)   # type: ignore[union-attr]
            if info["open"]:
                mod["open"].append(rel)   # type: ignore[union-attr]
            for name, entry in info["members"].items():   # type: ignore[union-attr]
                variants = mod["members"].setdefault(name, [])   # type: ignore[union-attr]
                same = next((v for v in variants if {k: x for k, x in v.items() if k != "in"} == entry), None)
                if same is None:
                    variants.append({"in": [rel], **entry})
                else:
                    same["in"].append(rel)
    all_methods: dict[str, list[str]] = {}
    for rel, names in methods.items():
        for n in names:
            all_methods.setdefault(n, []).append(rel)
    return {"releases": releases, "modules": modules, "tensor_methods": all_methods}


def download(release: str, filename: str, sha256: str, into: Path) -> bytes:
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version",
                    "3.11", "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64",
                    "--platform", "manylinux2014_x86_64", f"triton=={release}", "-d", str(into), "-q"], check=True)
    path = into / filename
    data = path.read_bytes()
    path.unlink()
    digest = hashlib.sha256(data).hexdigest()
    if sha256 and digest != sha256:
        raise SystemExit(f"{filename}: sha256 {digest} does not match the pinned {sha256}")
    return data


def build(wheels: dict[str, Path] | None = None) -> dict[str, object]:
    per_release: dict[str, dict[str, dict[str, object]]] = {}
    methods: dict[str, list[str]] = {}
    provenance = []
    with tempfile.TemporaryDirectory() as tmp:
        for release, filename, sha256 in PINNED:
            data = wheels[release].read_bytes() if wheels and release in wheels else download(release, filename, sha256, Path(tmp))
            digest = hashlib.sha256(data).hexdigest()
            if sha256 and digest != sha256:
                raise SystemExit(f"{filename}: sha256 {digest} does not match the pinned {sha256}")
            mods = parse_modules(wheel_files(data))
            key = ".".join(release.split(".")[:2])   # `triton-version = "3.4"` names the minor release
            per_release[key] = Release(mods).table()
            methods[key] = tensor_methods(mods)
            provenance.append({"release": key, "version": release, "wheel": filename, "sha256": digest})
            print(f"{release}: {len(mods)} modules, {len(per_release[key][PACKAGE]['members'])} tl names", file=sys.stderr)
    table = merge(per_release, methods)
    return {"generated_by": "benchmarks/triton_api_table.py", "wheels": provenance, **table}


def dump(table: dict[str, object]) -> str:
    return json.dumps(table, sort_keys=True, separators=(",", ":")) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the shipped table instead of writing it")
    ap.add_argument("--wheel", action="append", default=[], metavar="RELEASE=PATH",
                    help="use an already downloaded wheel (its sha256 is still checked)")
    args = ap.parse_args(argv)
    wheels = {r: Path(p) for r, _, p in (w.partition("=") for w in args.wheel)}
    text = dump(build(wheels))
    if args.check:
        same = OUT.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{OUT} differs from a fresh build", file=sys.stderr)
        return 0 if same else 1
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({len(text) // 1024} KiB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
