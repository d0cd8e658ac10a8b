"""What the scratch module may hold: values kernlint evaluated itself, and bodies that cannot reach Python.

Triton compiles the kernel and helper bodies, so those are copied; everything else the scratch module used
to copy from the user's source (module constants, default arguments, annotations, `@triton.jit(...)`
arguments) would run when the scratch module is imported. Those are now evaluated by kernlint's static
evaluator and written as literals (``64``, ``'tf32'``, ``tl.constexpr(64)``, ``tl.float16``); what does not
evaluate is never written. Bodies are checked against what Triton's code generator (and, for --verify, the
interpreter) can reach: a name or attribute that leads to Python's builtins, ``getattr``, modules such as
``os``, or a dunder attribute refuses the whole kernel before anything compiles.
"""
from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import libcst as cst

from kernlint.frontend.static_eval import StaticEvaluator
from kernlint.ir.symbolic import Unknown

CONSTEXPR = "triton.language.constexpr"
# Triton dtype objects a constant or default may name (triton/language/core.py: the module-level dtypes)
DTYPES = frozenset({"int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                    "float8e5", "float8e5b16", "float8e4nv", "float8e4b8", "float8e4b15", "float16", "bfloat16",
                    "float32", "float64", "void", "pi32_t"})
# `@triton.jit(...)` keywords that change the compiled code; `repr`/`launch_metadata` only act at launch
JIT_KWARGS = ("debug", "noinline", "do_not_specialize", "do_not_specialize_on_alignment")
# Builtins a body may name: Triton's code generator knows len/list/range/float/int/isinstance/hasattr/print/
# min/max (CodeGenerator.builtin_namespace, Triton 3.9), the interpreter of --verify the pure ones below;
# every other builtin (getattr, eval, open, __import__, type, vars, ...) is refused wherever it appears
SAFE_BUILTINS = frozenset({"len", "list", "range", "float", "int", "bool", "isinstance", "hasattr", "print",
                           "min", "max", "abs", "tuple", "zip", "enumerate", "round", "sum", "any", "all",
                           "divmod", "pow", "reversed", "sorted", "True", "False", "None", "Ellipsis",
                           "NotImplemented", "ValueError", "AssertionError", "TypeError", "RuntimeError"})
# Attribute names that are modules or doors into the interpreter, reachable from triton's own modules
# (`tl.core.builtins`, `triton.knobs.os`); the worker also resolves every triton attribute chain itself
DOOR_ATTRS = frozenset({"builtins", "os", "sys", "subprocess", "importlib", "shutil", "socket", "ctypes",
                        "pathlib", "io", "pickle", "marshal", "runpy", "code", "codeop", "pty", "signal",
                        "multiprocessing", "threading", "tempfile", "glob", "inspect", "types", "gc",
                        "platform", "sysconfig", "site", "functools", "operator", "eval", "exec", "open",
                        "getattr", "setattr", "delattr", "system", "popen", "spawn", "fork", "execv",
                        "load_module", "exec_module", "import_module", "f_globals", "f_locals", "f_back",
                        "gi_frame", "cr_frame", "tb_frame", "func_globals", "mro"})


@dataclass(frozen=True)
class Dtype:
    """A Triton dtype named by a constant or default (`tl.float16`): written back as `tl.<name>`."""

    name: str


class Refused(Exception):
    """The scratch module cannot hold this kernel safely; the message says why (one line)."""


class ValueEvaluator(StaticEvaluator):
    """The static evaluator plus Triton dtype names; `lookup(name)` resolves other names (constants of this
    or another module of the tree), returning Unknown when they do not evaluate."""

    def __init__(self, names: Any, lookup: Callable[[str], Any]) -> None:
        super().__init__(names, _Lazy(lookup))

    def _eval(self, node: cst.BaseExpression, env: dict[str, Any]) -> Any:
        if isinstance(node, (cst.Attribute, cst.Name)) and not (isinstance(node, cst.Name) and node.value in env):
            for qn in self.names.qualnames(node):
                head, _, attr = qn.rpartition(".")
                if head in ("triton.language", "triton.language.core") and attr in DTYPES:
                    return Dtype(attr)
        return super()._eval(node, env)


class _Lazy(Mapping[str, Any]):
    def __init__(self, lookup: Callable[[str], Any]) -> None:
        self._lookup = lookup
        self._cache: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        if key not in self._cache:
            self._cache[key] = self._lookup(key)
        value = self._cache[key]
        if isinstance(value, Unknown):
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        try:
            self[key]  # type: ignore[index]
        except KeyError:
            return False
        return True

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(())

    def __len__(self) -> int:
        return 0

    def __bool__(self) -> bool:
        return True   # the evaluator replaces a falsy mapping by {}; names are looked up on demand


def literal(value: Any) -> str | None:
    """Source for a value kernlint evaluated, or None when it is not a plain literal."""
    if isinstance(value, Dtype):
        return f"tl.{value.name}"
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, (tuple, list)):
        items = [literal(v) for v in value]
        if any(i is None for i in items):
            return None
        inner = ", ".join(items)  # type: ignore[arg-type]
        return f"({inner}{',' if len(items) == 1 else ''})" if isinstance(value, tuple) else f"[{inner}]"
    return None


def is_constexpr_call(node: cst.BaseExpression, names: Any) -> bool:
    return isinstance(node, cst.Call) and CONSTEXPR in names.qualnames(node.func)


def _is_constexpr_annotation(node: cst.BaseExpression, names: Any) -> bool:
    if isinstance(node, cst.SimpleString):
        return "constexpr" in str(node.evaluated_value)
    return CONSTEXPR in names.qualnames(node)


def rewrite_function(fn: cst.FunctionDef, jit_decorator: cst.Decorator | None, names: Any,
                     ev: ValueEvaluator, where: str) -> cst.FunctionDef:
    """The function as the scratch module holds it: `@triton.jit` written by kernlint with evaluated
    keywords, `tl.constexpr` the only annotation, defaults as literals; the body unchanged."""
    deco_src = "triton.jit"
    if jit_decorator is not None and isinstance(jit_decorator.decorator, cst.Call):
        kws: list[str] = []
        for arg in jit_decorator.decorator.args:
            key = arg.keyword.value if arg.keyword is not None else None
            if key not in JIT_KWARGS:
                continue    # positional (`jit(fn)`) or launch-only keywords: not part of the compile
            text = literal(ev.evaluate(arg.value))
            if text is None:
                raise Refused(f"{where}: @triton.jit({key}=...) {_why(ev.evaluate(arg.value))}")
            kws.append(f"{key}={text}")
        if kws:
            deco_src += f"({', '.join(kws)})"
    params: list[cst.Param] = []
    for p in fn.params.params:
        ann = cst.Annotation(cst.parse_expression("tl.constexpr")) \
            if p.annotation is not None and _is_constexpr_annotation(p.annotation.annotation, names) else None
        default = None
        if p.default is not None:
            value = ev.evaluate(p.default)
            text = literal(value)
            if text is None:
                raise Refused(f"{where}: the default of `{p.name.value}` {_why(value)}")
            default = cst.parse_expression(text)
        params.append(p.with_changes(annotation=ann, default=default,
                                     equal=cst.AssignEqual() if default is not None else cst.MaybeSentinel.DEFAULT))
    if fn.params.star_arg not in (cst.MaybeSentinel.DEFAULT, None) or fn.params.kwonly_params \
            or fn.params.star_kwarg is not None or fn.params.posonly_params:
        raise Refused(f"{where}: only plain parameters are supported in a jit function")
    return fn.with_changes(decorators=[cst.Decorator(cst.parse_expression(deco_src))],
                           params=fn.params.with_changes(params=params), returns=None)


def _why(value: Any) -> str:
    if isinstance(value, Unknown):
        return f"does not evaluate statically ({value.reason})"
    return f"is not a literal kernlint can write ({type(value).__name__})"


def _bound_names(fn: cst.FunctionDef) -> tuple[set[str], set[int]]:
    """Names the body binds (assignment, loop, comprehension, `with ... as`, walrus targets) and the ids
    of the Name nodes that are those targets."""
    names: set[str] = set()
    targets: set[int] = set()

    def mark(node: cst.CSTNode | None) -> None:
        if node is None:
            return
        if isinstance(node, cst.Name):
            names.add(node.value)
            targets.add(id(node))
        elif isinstance(node, (cst.Tuple, cst.List)):
            for el in node.elements:
                mark(el.value)
        elif isinstance(node, cst.StarredElement):
            mark(node.value)

    class _T(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            mark(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            mark(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            mark(node.target)

        def visit_For(self, node: cst.For) -> None:
            mark(node.target)

        def visit_CompFor(self, node: cst.CompFor) -> None:
            mark(node.target)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            mark(node.target)

        def visit_AsName(self, node: cst.AsName) -> None:
            mark(node.name)

    fn.body.visit(_T())
    return names, targets


def body_refusal(fn: cst.FunctionDef) -> str | None:
    """Why the body must not be compiled (it names a way into Python), or None.

    A builtin outside SAFE_BUILTINS is refused wherever the body reads it, unless a parameter of that name
    shadows it, or the body assigns it (a real local in the interpreter) and it is not `getattr`, the one
    such builtin Triton's code generator resolves before a local of that name exists (`getattr = getattr`)."""
    found: list[str] = []
    py_builtins = set(dir(builtins))
    params = {p.name.value for p in fn.params.params}
    bound, targets = _bound_names(fn)

    class _V(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            attr = node.attr.value
            if (attr.startswith("__") and attr.endswith("__")) or attr in DOOR_ATTRS:
                found.append(f"`.{attr}`")
            node.value.visit(self)   # the attribute's own name is not a reference to a builtin
            return False

        def visit_Name(self, node: cst.Name) -> None:
            name = node.value
            if name.startswith("__") or name == "getattr":
                found.append(f"`{name}`")
            elif id(node) not in targets and name in py_builtins and name not in SAFE_BUILTINS \
                    and name not in params and name not in bound:
                found.append(f"`{name}`")

        def visit_Arg(self, node: cst.Arg) -> bool:
            node.value.visit(self)   # `f(open=1)`: a keyword name is not a reference
            return False

    fn.body.visit(_V())
    found += [f"`{p}`" for p in params if p.startswith("__")]
    if not found:
        return None
    return f"the kernel body reaches Python builtins or modules through {', '.join(dict.fromkeys(found))}"
