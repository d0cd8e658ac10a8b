"""Uses of `triton.language` inside jit functions that no reading of the source can make work.

Every attribute chain, name and call inside a `@triton.jit` function whose name resolves (through the file's
imports, kernlint.frontend.names) into `triton.language` is looked up in the API table of the targeted
release (kernlint.frontend.triton_api). Four problems are reported, each one certain:

- an attribute no release in the table has (`tl.cidv`);
- an attribute the targeted release lacks but another release has (`tl.libdevice`, gone since Triton 2.1);
- a call of a dtype object (`tl.float32(x)`; dtypes are not callable, `x.to(tl.float32)` converts);
- a keyword argument the called function does not accept (`tl.load(p, msk=m)`).

A use is skipped when its meaning depends on something kernlint does not decide: its root name is bound in
the function (a parameter or local shadows the import) or bound twice in the file (`try: import ... except:
... = ...`). A use under a guard (a jit function or import inside an `if`/`try`, or an `if` in the body whose
condition reads a global, such as a version check) is judged against every release: only what no release
accepts is reported there. Host code is not checked: its `triton.language` uses are dtype tables and
annotations, and a kernel only fails when it is compiled.
"""
from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

import libcst as cst

from kernlint.frontend.api_problems import ApiMisuse, ApiProblem  # re-exported: defined without libcst
from kernlint.frontend.facts import JitFunction
from kernlint.frontend.names import NameResolver
from kernlint.frontend.triton_api import PACKAGE, Member, TritonApi, load, release_scope, scope_label
from kernlint.frontend.walk import iter_nodes, iter_visit

MAX_SUGGESTIONS = 3     # enough for "tl.math.erf or tl.extra.cuda.libdevice.erf", short enough to read
# where a function missing from one module is most usefully found: portable names first, vendor ones after
PREFERRED_HOMES = (f"{PACKAGE}.math", f"{PACKAGE}.extra.cuda.libdevice", PACKAGE, f"{PACKAGE}.extra.libdevice")


@dataclass(frozen=True, slots=True)
class _Lookup:
    member: Member | None        # what the full chain names, when it resolved to a member
    missing: str | None = None   # the first module attribute that does not exist
    module: str | None = None    # the module it was looked up in
    rest: tuple[str, ...] = ()   # the chain's parts after the missing one


def _lookup(api: TritonApi, qualname: str, release: str) -> _Lookup | None:
    """Walk `triton.language.a.b.c` through the table; None when it leaves the table's reach (an attribute of a
    function or value, an open module) or the module itself is not in `release`."""
    parts = qualname.split(".")
    if parts[:2] != PACKAGE.split("."):
        return None
    module = PACKAGE
    if not api.has_module(module, release):
        return None
    member: Member | None = None
    for i, part in enumerate(parts[2:], start=2):
        if api.is_open(module, release):
            return None
        member = api.member(module, part, release)
        if member is None:
            return _Lookup(None, part, module, tuple(parts[i + 1:]))
        if i == len(parts) - 1:
            return _Lookup(member)
        if member.kind != "module" or member.module is None or not api.has_module(member.module, release):
            return None   # `tl.float32.primitive_bitwidth`, `tl.core.tensor.T`: attributes the table does not list
        module = member.module
    return _Lookup(member, module=module)


def _root(node: cst.BaseExpression) -> cst.Name | None:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node if isinstance(node, cst.Name) else None


def _bound_locals(fn: cst.FunctionDef) -> set[str]:
    """Names the function binds itself: parameters and every assignment, loop, with, import or def target."""
    names = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
    for star in (fn.params.star_arg, fn.params.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)

    # a plain walk (kernlint.frontend.walk): a libcst visitor rebuilt every node it passed, which made these
    # scans most of the API rules' time (a set of names: the order of the walk does not matter)
    for node in iter_nodes(fn.body):
        kind = type(node)
        if kind is cst.AssignTarget or kind is cst.AnnAssign or kind is cst.AugAssign or kind is cst.For \
                or kind is cst.CompFor or kind is cst.NamedExpr:
            names.update(_target_names(node.target))  # type: ignore[attr-defined]
        elif kind is cst.AsName:
            names.update(_target_names(node.name))  # type: ignore[attr-defined]
        elif kind is cst.ImportAlias:
            if node.asname is None:  # type: ignore[attr-defined]
                head = _root(node.name)  # type: ignore[attr-defined]
                if head is not None:
                    names.add(head.value)
        elif kind is cst.FunctionDef:
            names.add(node.name.value)  # type: ignore[attr-defined]
    return names


def _target_names(node: cst.BaseExpression) -> Iterator[str]:
    if isinstance(node, cst.Name):
        yield node.value
    elif isinstance(node, (cst.Tuple, cst.List)):
        for el in node.elements:
            yield from _target_names(el.value)
    elif isinstance(node, cst.StarredElement):
        yield from _target_names(node.value)


class _Checker:
    """Judges the uses in one jit function: `run` walks its body in libcst visitor order (visit_X on the way
    down, leave_X on the way up), without libcst's visitor machinery, which rebuilt every node it passed."""

    def __init__(self, api: TritonApi, names: NameResolver, jit: JitFunction, scope: tuple[str, ...]) -> None:
        self.api, self.names, self.jit, self.scope = api, names, jit, scope
        self.release = scope_label(scope)   # how findings name what they were judged against
        self.locals = _bound_locals(jit.node)
        self.found: list[ApiMisuse] = []
        self.done: set[int] = set()        # ids of Attribute/Name nodes inside a chain already judged
        self.guards = 0                    # enclosing `if`s whose condition reads a global (version checks)
        self.module_code = cst.Module(body=[])
        # start lines of the enclosing nodes that have a recorded position (statements, calls): names and
        # attributes have none, so a finding sits on its statement's line and `code` marks it there
        self.lines: list[tuple[cst.CSTNode, int]] = [(jit.node, jit.line)]

    def run(self, root: cst.CSTNode) -> None:
        visits: dict[type, Callable[[Any], object]] = {
            cst.If: self.visit_If, cst.IfExp: self.visit_IfExp, cst.Attribute: self.visit_Attribute,
            cst.Name: self.visit_Name, cst.Call: self.visit_Call}
        leaves: dict[type, Callable[[Any], object]] = {cst.If: self.leave_If, cst.IfExp: self.leave_IfExp}
        lines, names = self.lines, self.names
        for node, entering in iter_visit(root, None):
            if entering:
                if names.range(node) is not None:
                    lines.append((node, names.line(node)))
                visit = visits.get(type(node))
                if visit is not None:
                    visit(node)
            else:
                leave = leaves.get(type(node))
                if leave is not None:
                    leave(node)
                if lines[-1][0] is node:
                    lines.pop()

    @property
    def line(self) -> int:
        return self.lines[-1][1]

    # -- guards: a body `if` on a global value -------------------------------------------------------
    def _reads_global(self, test: cst.BaseExpression) -> bool:
        return any(type(n) is cst.Name and n.value not in self.locals  # type: ignore[attr-defined]
                   for n in iter_nodes(test))

    def visit_If(self, node: cst.If) -> None:
        self.guards += self._reads_global(node.test)

    def leave_If(self, original_node: cst.If) -> None:
        self.guards -= self._reads_global(original_node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self.guards += self._reads_global(node.test)

    def leave_IfExp(self, original_node: cst.IfExp) -> None:
        self.guards -= self._reads_global(original_node.test)

    # -- uses -------------------------------------------------------------------------------------------
    def _text(self, node: cst.CSTNode) -> str:
        return self.module_code.code_for_node(node)

    def _qualname(self, node: cst.BaseExpression) -> tuple[str, bool] | None:
        """(qualified name under triton.language, guarded) or None when the chain is not judged."""
        root = _root(node)
        if root is None or root.value in self.locals or self.names.is_ambiguous(root.value):
            return None
        q = next(iter(self.names.qualnames(node)), None)
        if q is None or not (q == PACKAGE or q.startswith(PACKAGE + ".")):
            return None
        guarded = bool(self.guards) or self.names.is_conditional(root.value) or self.names.is_conditional(
            self.jit.qualname)
        return q, guarded

    def _spell(self, node: cst.BaseExpression, qualname: str) -> str:
        """How the source would spell `qualname` (a triton.language name) with the aliases it uses."""
        root = _root(node)
        if root is not None:
            for alias_q in self.names.qualnames(root):
                if alias_q == PACKAGE:
                    return root.value + qualname[len(PACKAGE):]
                if alias_q == "triton" and qualname.startswith(PACKAGE):
                    return root.value + qualname[len("triton"):]
        return qualname

    def _looked_up(self, node: cst.Attribute | cst.Name
                   ) -> tuple[str, bool, tuple[str, ...], list[_Lookup | None]] | None:
        """The name's qualified form, whether it is guarded, the releases it is judged in (every release under a
        version guard) and its lookup in each; None when the chain is not a triton.language name."""
        found = self._qualname(node)
        if found is None:
            return None
        q, guarded = found
        releases = tuple(self.api.releases) if guarded else self.scope
        return q, guarded, releases, [_lookup(self.api, q, r) for r in releases]

    def _chain(self, node: cst.Attribute | cst.Name) -> None:
        sub: cst.BaseExpression = node
        while isinstance(sub, cst.Attribute):
            self.done.add(id(sub))
            sub = sub.value
        self.done.add(id(sub))
        found = self._looked_up(node)
        if found is None:
            return
        q, guarded, releases, looked = found
        if any(x is None or x.missing is None for x in looked):
            return   # some release in scope has it (or the table cannot tell)
        first = looked[-1]
        assert first is not None and first.missing is not None and first.module is not None
        missing_q = f"{first.module}.{first.missing}"
        having = self.api.releases_with(first.module, first.missing)
        line, code = self.line, self._text(node)
        # a name other releases have is no typo: only a moved module gets a suggestion (where its function is now)
        suggestions = self._suggest(node, first, releases[-1], typo=not having)
        if having:
            if guarded:
                return   # another release has it, and the code is written to run on more than one
            self.found.append(ApiMisuse(ApiProblem.NOT_IN_RELEASE, line, code, self.jit.qualname, missing_q,
                                        self.release, suggestions, having))
        else:
            self.found.append(ApiMisuse(ApiProblem.UNKNOWN_ATTRIBUTE, line, code, self.jit.qualname, missing_q,
                                        "every release" if guarded else self.release, suggestions, guarded=guarded))

    def _suggest(self, node: cst.BaseExpression, looked: _Lookup, release: str, typo: bool) -> tuple[str, ...]:
        assert looked.missing is not None and looked.module is not None
        if looked.rest:
            # a module that moved (`tl.libdevice.erf`): where the function it was used for lives now
            homes = self.api.homes(looked.rest[0], release)
            homes.sort(key=lambda m: PREFERRED_HOMES.index(m) if m in PREFERRED_HOMES else len(PREFERRED_HOMES))
            if homes:
                tail = ".".join(looked.rest)
                return tuple(self._spell(node, f"{h}.{tail}") for h in homes[:MAX_SUGGESTIONS])
        if not typo:
            return ()
        public = [n for n in self.api.members(looked.module, release) if not n.startswith("_")]
        close = difflib.get_close_matches(looked.missing, public, n=MAX_SUGGESTIONS)
        rest = "".join(f".{p}" for p in looked.rest)
        return tuple(self._spell(node, f"{looked.module}.{c}{rest}") for c in close)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if id(node) not in self.done:
            self._chain(node)
        return True

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self.done:
            self._chain(node)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, (cst.Attribute, cst.Name)):
            return
        found = self._looked_up(func)
        if found is None:
            return
        q, guarded, _, looked = found
        members = [x.member for x in looked if x is not None and x.missing is None and x.member is not None]
        if len(members) != len(looked):
            return   # missing (reported as an attribute) or beyond the table in some release in scope
        judged = "every release" if guarded else self.release
        if all(m.kind == "dtype" for m in members):
            fix: tuple[str, ...] = ()
            if len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
                arg = node.args[0].value
                text = self._text(arg)
                if _is_constant(arg):   # a Python number has no `.to`: build a typed scalar instead
                    fix = (f"tl.full((), {text}, {self._text(func)})".replace("tl.", self._spell(func, PACKAGE) + ".", 1),)
                else:
                    fix = (f"{text if _is_simple(arg) else f'({text})'}.to({self._text(func)})",)
            self.found.append(ApiMisuse(ApiProblem.DTYPE_CALL, self.line, self._text(node), self.jit.qualname, q,
                                        judged, fix, guarded=guarded))
            return
        accepted = [m.keywords() for m in members]
        if any(a is None for a in accepted):
            return
        for arg in node.args:
            if arg.keyword is None:
                continue
            kw = arg.keyword.value
            if any(kw in a for a in accepted if a is not None):
                continue
            known = sorted({k for a in accepted if a is not None for k in a if not k.startswith("_")})
            close = tuple(difflib.get_close_matches(kw, known, n=MAX_SUGGESTIONS))
            code = self._text(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT,
                                               whitespace_after_arg=cst.SimpleWhitespace("")))
            self.found.append(ApiMisuse(ApiProblem.UNKNOWN_KEYWORD, self.line, code.strip(), self.jit.qualname, q,
                                        judged, close, keyword=kw, guarded=guarded))


def _is_constant(node: cst.BaseExpression) -> bool:
    """A number literal, a negated one, or `float("inf")`-style builtins call: Python values, not tensors."""
    if isinstance(node, cst.UnaryOperation):
        return _is_constant(node.expression)
    if isinstance(node, cst.Call):
        return isinstance(node.func, cst.Name) and node.func.value in ("float", "int")
    return isinstance(node, (cst.Integer, cst.Float))


def _is_simple(node: cst.BaseExpression) -> bool:
    """An operand `.to(...)` can follow without parentheses."""
    return isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float))


def api_misuses(jits: Sequence[JitFunction], names: NameResolver, api: TritonApi,
                scope: tuple[str, ...]) -> list[ApiMisuse]:
    """Every certain misuse of `triton.language` in the given jit functions: wrong in every release of `scope`."""
    out: list[ApiMisuse] = []
    for jit in jits:
        if jit.module == "triton" or jit.module.startswith("triton."):
            continue   # Triton's own sources are written against their own release, not the targeted one
        checker = _Checker(api, names, jit, scope)
        checker.run(jit.node.body)
        out.extend(checker.found)
    return sorted(set(out), key=misuse_order)


def misuse_order(m: ApiMisuse) -> tuple[int, str, str, str]:
    """The order findings are listed in (kernlint.pipeline.incremental merges per-function scans in it)."""
    return (m.line, m.code, m.problem.value, m.keyword or "")


_MEMO: WeakKeyDictionary[NameResolver, dict[tuple[tuple[str, ...], tuple[int, ...]], list[ApiMisuse]]] = WeakKeyDictionary()


def file_misuses(jits: Sequence[JitFunction], names: NameResolver, release: str | None) -> list[ApiMisuse]:
    """`api_misuses` against the shipped table, computed once per file and release (four rules read it)."""
    api = load()
    key = (release_scope(release), tuple(id(j.node) for j in jits))
    per_file = _MEMO.setdefault(names, {})
    if key not in per_file:
        per_file[key] = api_misuses(jits, names, api, key[0])
    return per_file[key]
