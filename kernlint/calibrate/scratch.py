"""The scratch module calibrate compiles: built from source, so the user's module is never imported.

Triton needs a real ``JITFunction`` (it reads the function's source and resolves its globals and ``@jit``
helpers), but importing the user's module would run its top-level code (loading models, touching GPUs,
reading files). Instead this writes a new module that holds only

  * ``import triton`` / ``import triton.language as tl`` and the source modules' own top-level import lines
    that import nothing but triton names (``from triton.language import dot``);
  * the module-level constants the kernel and its helpers read, evaluated by kernlint's static evaluator
    and written as literals (``RCP_LN2 = tl.constexpr(1.4426950408889634)``); a constant that does not
    evaluate is left out and named in ``unevaluated`` (never copied: its source would run on import);
  * the jit helpers the kernel calls, found by qualified name in the same file or in other files of the tree
    (``from pkg.utils import helper``), recursively;
  * the kernel itself. Functions get a ``@triton.jit`` written by kernlint (``@autotune``/``@heuristics``
    are dropped because calibrate passes every constexpr and launch option itself), defaults as literals
    and ``tl.constexpr`` as the only annotation (scratch_values.py). Their bodies are copied, because Triton
    compiles them, unless they name a way into Python (``getattr``, ``tl.core.builtins``, dunders): then
    the scratch module is ``refused`` and nothing compiles.

Names bound inside module-level ``if``/``try`` blocks (Triton helpers picked per version, constants picked per
device) are re-bound as described in scratch_globals.py; a constant taken from one branch of a condition is
listed in ``assumed``. Globals that resolve to anything else (torch, host functions) are listed in ``missing``;
if the kernel really uses one, Triton's error names it. Building never imports anything: libcst only.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from kernlint.calibrate.scratch_globals import (alias_import, code as _code, conditional_assignment, global_refs,
                                               import_targets, is_triton as _is_triton, module_attribute_reads,
                                               triton_bindings)
from kernlint.calibrate.scratch_values import (DOOR_ATTRS, Refused, ValueEvaluator, body_refusal,
                                               is_constexpr_call, literal, rewrite_function)
from kernlint.frontend.facts import JitFunction, ModuleFacts
from kernlint.frontend.kernels import JIT_NAMES, collect_module_facts, module_name_for
from kernlint.frontend.names import NameResolver
from kernlint.frontend.parse import ParseFailure, parse_bytes
from kernlint.ir.symbolic import Unknown

# Re-export chains followed (`pkg/__init__.py` re-exporting `pkg.helper.x`): real packages use one or two
_REEXPORT_DEPTH = 6
HEADER = "# Scratch module written by `kernlint calibrate` from {files}.\n# The original modules were never imported.\n"


class ScratchError(Exception):
    """The scratch module cannot be built (name clash, unparsable file, kernel not found)."""


@dataclass
class ParsedModule:
    label: str                 # path as kernlint names it (module name = module_name_for(label))
    file: Path                 # the real file
    data: bytes
    module: cst.Module
    facts: ModuleFacts
    names: NameResolver

    def jit(self, qualname: str) -> JitFunction | None:
        return next((j for j in self.facts.jit_functions if j.qualname == qualname), None)


class SourceTree:
    """Parses the kernel's file and, on demand, the files its helpers come from (never imports them)."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = roots
        self.modules: dict[str, ParsedModule] = {}   # module name → parsed
        self._misses: set[str] = set()

    def load(self, label: str, file: Path) -> ParsedModule:
        name = module_name_for(label)
        if name in self.modules:
            return self.modules[name]
        data = file.read_bytes()
        parsed = parse_bytes(data)
        if isinstance(parsed, ParseFailure):
            raise ScratchError(f"{label}: {parsed.message}")
        facts, names = collect_module_facts(label, parsed.module)
        pm = ParsedModule(label, file, data, parsed.module, facts, names)
        self.modules[name] = pm
        return pm

    def module(self, name: str) -> ParsedModule | None:
        if name in self.modules:
            return self.modules[name]
        if name in self._misses or not name:
            return None
        rel = Path(*name.split("."))
        for root in self.roots:
            for cand in (root / rel.with_suffix(".py"), root / rel / "__init__.py"):
                if cand.is_file():
                    return self.load(cand.relative_to(root).as_posix(), cand)
        self._misses.add(name)
        return None

    def jit_by_full_name(self, full: str) -> tuple[JitFunction, ParsedModule] | None:
        parts = full.split(".")
        for i in range(len(parts) - 1, 0, -1):
            pm = self.module(".".join(parts[:i]))
            if pm is not None:
                jit = pm.jit(".".join(parts[i:]))
                if jit is not None:
                    return jit, pm
        return None


@dataclass(frozen=True)
class LineSpan:
    """Scratch lines [start, end] hold the function whose `def` is at `orig_line` of `label` (from `start`)."""

    start: int
    end: int
    label: str
    orig_line: int


@dataclass(frozen=True)
class ScratchModule:
    source: str
    kernel: str                          # attribute name of the kernel in the scratch module
    files: tuple[str, ...]               # source files it was built from (labels)
    missing: tuple[str, ...]             # globals it could not provide
    spans: tuple[LineSpan, ...] = field(default=())
    assumed: tuple[str, ...] = ()        # constants taken from one branch of a module-level condition
    refused: tuple[str, ...] = ()        # why it must not be compiled at all (a body that reaches Python)
    unevaluated: tuple[tuple[str, str], ...] = ()   # (constant, why) left out: it did not evaluate statically

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()

    def write(self, directory: Path) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{re.sub(r'[^A-Za-z0-9_]', '_', self.kernel)}_{self.sha256[:16]}.py"
        if not path.exists():
            path.write_text(self.source, encoding="utf-8")
        return path

    def original_location(self, line: int) -> str | None:
        for s in self.spans:
            if s.start <= line <= s.end:
                return f"{s.label}:{s.orig_line + line - s.start}"
        return None


def safe_triton_name(qn: str) -> bool:
    """A triton name the scratch module may import: no segment is a dunder or a door into Python
    (`from triton.knobs import os`)."""
    return _is_triton(qn) and not any(seg.startswith("_") or seg in DOOR_ATTRS for seg in qn.split("."))


def _triton_imports(pm: ParsedModule) -> list[str]:
    """Top-level import lines of a module that import only (safe) triton names."""
    out: list[str] = []
    for stmt in pm.module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                mods = [_code(a.name) for a in small.names]
            elif isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None:
                mods = [_code(small.module)]
            else:
                continue
            if all(_is_triton(m) for m in mods) and all(safe_triton_name(qn) for _, qn in import_targets(small)):
                out.append(_code(small).strip())
    return out


def _jit_only(jit: JitFunction, pm: ParsedModule) -> cst.FunctionDef:
    """The function with its `@triton.jit` decorator only (autotune/heuristics and others dropped)."""
    keep = [d for d in jit.node.decorators if pm.names.refers_to(
        d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator, *JIT_NAMES)]
    return jit.node.with_changes(decorators=keep)


def _constant_stmt(pm: ParsedModule, name: str) -> cst.BaseSmallStatement | None:
    last = None
    for stmt in pm.module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                        isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name:
                    last = small
                elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and \
                        small.target.value == name and small.value is not None:
                    last = small
    return last


class _Builder:
    def __init__(self, tree: SourceTree) -> None:
        self.tree = tree
        self.imports: list[str] = ["import triton", "import triton.language as tl"]
        self.imported: set[str] = {"triton", "tl"}  # names the copied import lines bind
        self.constants: list[str] = []
        self.functions: list[tuple[str, JitFunction, ParsedModule]] = []
        self.bound: dict[str, str] = {}            # scratch global → what it stands for (clash detection)
        self.missing: list[str] = []
        self.assumed: list[str] = []
        self.refused: list[str] = []
        self.unevaluated: dict[str, str] = {}
        self.files: list[str] = []
        self._done: set[str] = set()
        self.namespaces: list[tuple[str, str, tuple[str, ...]]] = []   # (local, module, attributes read)
        self._evaluating: set[tuple[str, str]] = set()

    def bind(self, name: str, meaning: str) -> bool:
        """Claim a global name; False when already bound to the same thing, error on a clash."""
        have = self.bound.get(name)
        if have == meaning:
            return False
        if have is not None:
            raise ScratchError(f"cannot build the scratch module: `{name}` is both {have} and {meaning}")
        self.bound[name] = meaning
        return True

    def add_module(self, pm: ParsedModule) -> None:
        if pm.label not in self.files:
            self.files.append(pm.label)
            for line in _triton_imports(pm):
                if line not in self.imports:
                    self.imports.append(line)
                    small = cst.parse_statement(line)
                    if isinstance(small, cst.SimpleStatementLine):
                        self.imported.update(local for local, _ in import_targets(small.body[0]))

    def add_function(self, jit: JitFunction, pm: ParsedModule, alias: str | None = None) -> None:
        key = f"{pm.facts.module_name}.{jit.qualname}"
        if alias and alias != jit.name:
            self.add_function(jit, pm)
            if self.bind(alias, f"jit function {key}"):
                self.constants.append(f"{alias} = {jit.name}")
            return
        if not self.bind(jit.name, f"jit function {key}") or key in self._done:
            return
        self._done.add(key)
        self.add_module(pm)
        self.functions.append((key, jit, pm))
        self.resolve(_jit_only(jit, pm), pm, skip=jit.qualname)

    def add_triton_alias(self, local: str, alternatives: list[str]) -> None:
        bad = [qn for qn in alternatives if not safe_triton_name(qn)]
        if bad:
            self.refused.append(f"`{local}` is bound to {bad[0]}, a way into Python")
            return
        if local not in self.imported and self.bind(local, f"triton {' or '.join(alternatives)}"):
            self.constants.append(alias_import(local, alternatives))

    def evaluator(self, pm: ParsedModule) -> ValueEvaluator:
        return ValueEvaluator(pm.names, lambda name: self.value_of(pm, name))

    def value_of(self, pm: ParsedModule, name: str) -> object:
        """The static value of a module-level name of pm (a constant here or one it imports), or Unknown."""
        key = (pm.facts.module_name, name)
        if key in self._evaluating:
            return Unknown(f"`{name}` is defined in terms of itself")
        qns = pm.names.qualnames(cst.Name(name))
        qn = next(iter(qns), name)
        stmt, _ = self._statement(pm, name)
        self._evaluating.add(key)
        try:
            if stmt is not None and stmt.value is not None:
                return self.evaluator(pm).evaluate(stmt.value)
            found = self._foreign(qn) if qn != name else None
            if found is not None:
                return self.value_of(found[0], found[1])
            return Unknown(f"`{name}` is not a module constant")
        finally:
            self._evaluating.discard(key)

    def _statement(self, pm: ParsedModule, name: str) -> tuple[cst.Assign | cst.AnnAssign | None, str | None]:
        stmt = _constant_stmt(pm, name)
        if stmt is not None:
            return stmt, None  # type: ignore[return-value]
        found = conditional_assignment(pm.module, name)
        return (found[0], found[1]) if found else (None, None)

    def _provides(self, pm: ParsedModule, local: str, qn: str, depth: int = 0) -> bool:
        """Whether `local` (qualified `qn` in pm) is something add_global can bind: without adding it."""
        if depth > _REEXPORT_DEPTH:
            return False
        if _is_triton(qn) or pm.jit(qn) is not None:
            return True
        if qn == local:
            if local in pm.facts.constants or self._statement(pm, local)[0] is not None \
                    or local in triton_bindings(pm.module, pm.names):
                return True
            target = self._reexport(pm, local)
            return target is not None and self._provides(pm, local, target, depth + 1)
        found = self._foreign(qn)
        return found is not None and self._provides(found[0], found[1], found[1], depth + 1)

    @staticmethod
    def _reexport(pm: ParsedModule, local: str) -> str | None:
        """What a module-level import of pm binds `local` to (`from pkg.helper import x` in a package's
        `__init__`), or None."""
        return next((q for q in sorted(pm.names.qualnames(cst.Name(local))) if q != local and "<" not in q), None)

    def triton_alternatives(self, pm: ParsedModule, local: str, depth: int = 0) -> list[str] | None:
        """The Triton objects a module-level name of pm is bound to, through re-exports (`from pkg.utils
        import tl_extra_shim`, where pkg.utils re-exports a name bound to `triton.language.extra.libdevice` or
        its older spellings in `try` blocks), or None."""
        if depth > _REEXPORT_DEPTH:
            return None
        bound = triton_bindings(pm.module, pm.names).get(local)
        if bound:
            return bound
        target = self._reexport(pm, local)
        if target is None:
            return None
        if _is_triton(target):
            return [target]
        found = self._foreign(target)
        return self.triton_alternatives(found[0], found[1], depth + 1) if found is not None else None

    def _triton_attribute(self, pm: ParsedModule, local: str) -> list[str] | None:
        """`exp = tl_extra_shim.exp`: a module-level name assigned an attribute of a Triton module alias, as
        the Triton objects it may be (never a dunder or a way into Python)."""
        stmt, _ = self._statement(pm, local)
        value = stmt.value if stmt is not None else None
        if not (isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name)):
            return None
        attr = value.attr.value
        if attr.startswith("_") or attr in DOOR_ATTRS:
            return None
        base = self.triton_alternatives(pm, value.value.value)
        return [f"{b}.{attr}" for b in base] if base else None

    def _foreign(self, qn: str) -> tuple[ParsedModule, str] | None:
        """The parsed module and top-level name an imported qualified name refers to (`pkg.utils.RCP_LN2`)."""
        module, _, attr = qn.rpartition(".")
        pm = self.tree.module(module) if module else None
        return (pm, attr) if pm is not None else None

    def add_constant(self, name: str, pm: ParsedModule) -> None:
        """Bind a module constant as the literal kernlint evaluated (never its source)."""
        if not self.bind(name, f"constant {pm.facts.module_name}.{name}"):
            return
        stmt, condition = self._statement(pm, name)
        value = self.value_of(pm, name)
        text = literal(value)
        if stmt is None or text is None:
            why = value.reason if isinstance(value, Unknown) else f"a {type(value).__name__}, not a literal"
            self.unevaluated[f"{pm.facts.module_name}.{name}"] = why
            self.missing.append(f"{pm.facts.module_name}.{name}")
            return
        constexpr = is_constexpr_call(stmt.value, pm.names) if stmt.value is not None else False
        written = f"tl.constexpr({text})" if constexpr else text
        self.constants.append(f"{name} = {written}")
        if condition is not None:
            self.assumed.append(f"{pm.facts.module_name}.{name} = {written} (assumed `{condition}`)")

    def add_global(self, local: str, qn: str, pm: ParsedModule) -> bool:
        """Bind a module-level name of `pm` (or one it imports) in the scratch module; False if impossible."""
        own = pm.jit(qn)
        if own is not None:
            self.add_function(own, pm, alias=local if local != own.name else None)
        elif qn == local and local in triton_bindings(pm.module, pm.names):
            self.add_triton_alias(local, triton_bindings(pm.module, pm.names)[local])
        elif qn == local and (attr_of := self._triton_attribute(pm, local)) is not None:
            self.add_triton_alias(local, attr_of)
        elif qn == local and (local in pm.facts.constants or self._statement(pm, local)[0] is not None):
            self.add_constant(local, pm)
        elif qn == local and (target := self._reexport(pm, local)) is not None and self._provides(pm, local, target):
            return self.add_global(local, target, pm)
        elif (found := self.tree.jit_by_full_name(qn)) is not None:
            self.add_function(found[0], found[1], alias=local)
        elif (foreign := self._foreign(qn)) is not None and self._provides(foreign[0], foreign[1], foreign[1]):
            other, attr = foreign
            self.add_module(other)
            self.add_global(attr, attr, other)
            if local != attr and self.bind(local, f"alias of {qn}"):
                self.constants.append(f"{local} = {attr}")
        else:
            return False
        return True

    def add_namespace(self, local: str, qn: str, attrs: set[str], pm: ParsedModule) -> bool:
        """`from pkg.utils import extension as tle` ... `tle.program_id(0)`: a project module read through its
        attributes becomes a module object in the scratch module holding what the body reads of it (Triton
        resolves `tle.x` on a global of ModuleType). False when a read attribute cannot be provided."""
        other = self.tree.module(qn)
        if other is None or not attrs:
            return False
        if any(a.startswith("_") or a in DOOR_ATTRS or not self._provides(other, a, a) for a in attrs):
            return False
        self.bind(local, f"module {qn}")   # a second function may read other attributes of the same module
        self.add_module(other)
        for attr in sorted(attrs):
            self.add_global(attr, attr, other)
        have = next((i for i, (name, _, _) in enumerate(self.namespaces) if name == local), None)
        if have is None:
            self.namespaces.append((local, qn, tuple(sorted(attrs))))
        else:
            self.namespaces[have] = (local, qn, tuple(sorted(set(self.namespaces[have][2]) | attrs)))
        return True

    def resolve(self, node: cst.CSTNode, pm: ParsedModule, skip: str) -> None:
        triton_refs: dict[str, list[str]] = {}
        attrs = module_attribute_reads(node)
        for local, qn in global_refs(node, pm.names):
            if qn == skip:
                continue
            if not _is_triton(qn) and local in attrs and self.tree.module(qn) is not None \
                    and pm.jit(qn) is None and self.tree.jit_by_full_name(qn) is None:
                if not self.add_namespace(local, qn, attrs[local], pm) and qn not in self.missing:
                    self.missing.append(qn)
                continue
            if _is_triton(qn):
                # bound by the copied import lines, else by the module's own (conditional) imports
                if local not in self.imported:
                    triton_refs.setdefault(local, []).append(qn)
            elif not self.add_global(local, qn, pm) and qn not in self.missing:
                self.missing.append(qn)
        for local, qns in triton_refs.items():
            self.add_triton_alias(local, triton_bindings(pm.module, pm.names).get(local, qns))

    def render(self, kernel: JitFunction) -> ScratchModule:
        lines = [HEADER.format(files=", ".join(self.files)), *self.imports, "", *self.constants, ""]
        text = "\n".join(lines) + "\n"
        spans: list[LineSpan] = []
        # Helpers first, kernel last; order does not matter to Triton (globals resolve at compile time).
        ordered = [f for f in self.functions if f[1] is not kernel] + [f for f in self.functions if f[1] is kernel]
        refused = list(self.refused)
        for _, jit, pm in ordered:
            where = f"{pm.label}:{jit.line} {jit.qualname}"
            why = body_refusal(jit.node)
            if why:
                refused.append(f"{where}: {why}")
            kept = _jit_only(jit, pm).decorators
            try:
                fn = rewrite_function(jit.node, kept[0] if kept else None, pm.names, self.evaluator(pm), where)
            except Refused as exc:
                refused.append(str(exc))
                fn = jit.node.with_changes(decorators=[], params=cst.Parameters(), returns=None)
            fn_code = _code(fn.with_changes(leading_lines=())).rstrip() + "\n"
            base = text.count("\n") + 3  # two blank lines separate functions
            def_offset = next(i for i, ln in enumerate(fn_code.splitlines()) if ln.lstrip().startswith(("def ", "async def ")))
            spans.append(LineSpan(base + def_offset, base + fn_code.count("\n") - 1, pm.label, jit.line))
            text += "\n\n" + fn_code
        if self.namespaces:   # after the functions: the module objects hold them
            text += "\n\nimport types as _kernlint_types\n"
            for local, qn, names in self.namespaces:
                text += f"{local} = _kernlint_types.ModuleType({qn!r})\n"
                text += "".join(f"{local}.{a} = {a}\n" for a in names)
        if refused:   # nothing of it may run: the module holds only the reason
            text = HEADER.format(files=", ".join(self.files)) + "".join(f"# refused: {r}\n" for r in refused)
        return ScratchModule(text, kernel.name, tuple(self.files), tuple(dict.fromkeys(self.missing)), tuple(spans),
                             tuple(self.assumed), tuple(dict.fromkeys(refused)), tuple(self.unevaluated.items()))


def build_scratch(tree: SourceTree, pm: ParsedModule, kernel: JitFunction) -> ScratchModule:
    """The scratch module source for ``kernel`` of ``pm`` (its helpers may come from other files of ``tree``)."""
    b = _Builder(tree)
    b.add_module(pm)
    b.add_function(kernel, pm)
    return b.render(kernel)


def find_kernel(pm: ParsedModule, name: str | None) -> JitFunction:
    jits = pm.facts.jit_functions
    if name is not None:   # an exact qualified name wins over a method of the same name (`ka` vs `NS.ka`)
        found = [j for j in jits if j.qualname == name] or [j for j in jits if j.name == name]
    else:
        called = pm.facts.called_jit_names
        found = [j for j in jits if j.full_name not in called] or list(jits)
    if not found:
        known = ", ".join(j.qualname for j in jits) or "none"
        raise ScratchError(f"no Triton kernel {name!r} in {pm.label} (jit functions: {known})" if name
                           else f"no Triton kernel in {pm.label}")
    if len(found) > 1:
        raise ScratchError(f"{pm.label} has several kernels ({', '.join(j.qualname for j in found)}): "
                           f"pick one with {pm.label}::KERNEL")
    return found[0]


def source_tree_for(label: str) -> tuple[SourceTree, ParsedModule]:
    """Parse FILE (as given on the command line) with helper lookup rooted at the cwd and the file's parents."""
    file = Path(label)
    if not file.is_file():
        raise ScratchError(f"{label}: no such file")
    # The directory the file's module name is counted from (`.corpus/by-project` for
    # `.corpus/by-project/unsloth/unsloth/kernels/geglu.py`, module `unsloth.unsloth.kernels.geglu`): its
    # relative imports (`from .utils import x`) resolve to names under that prefix, found from this root
    # even when the path runs through a symlink that `resolve()` would leave.
    depth = len(module_name_for(label).split("."))
    named_root = file.parents[depth - 1] if 0 < depth <= len(file.parents) else None
    roots = [Path.cwd(), *([named_root] if named_root is not None else []), *file.resolve().parents]
    tree = SourceTree(list(dict.fromkeys(roots)))
    return tree, tree.load(label, file)
