"""Find Triton jit functions, autotune/heuristics decorators, module constants and launch sites."""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper

from kernlint.frontend.config_functions import ModuleFunctions
from kernlint.frontend.data_configs import DataConfigs
from kernlint.frontend.data_configs import resolve as resolve_data_configs
from kernlint.frontend.facts import (
    NO_DEFAULT, AutotuneSpec, HeuristicValue, JitFunction, LaunchSite, ModuleFacts, Param, UnresolvedDecorator,
)
from kernlint.frontend.names import NameResolver
from kernlint.frontend.static_eval import ConfigLiteral, StaticEvaluator
from kernlint.frontend.walk import iter_nodes, iter_visit
from kernlint.ir.symbolic import Unknown
from kernlint.core.module_names import module_name_for  # re-exported: other modules import it from here
from kernlint.core.module_names import package_module_name

JIT_NAMES = ("triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit")
AUTOTUNE_NAMES = ("triton.autotune", "triton.runtime.autotune", "triton.runtime.autotuner.autotune")
HEURISTICS_NAMES = ("triton.heuristics", "triton.runtime.heuristics", "triton.runtime.autotuner.heuristics")
CONSTEXPR_NAMES = ("triton.language.constexpr", "triton.language.core.constexpr")
# A decorator's last name that marks a kernel in Triton code (`@triton.jit`, `@jit`, `@triton.autotune(...)`)
_JIT_LIKE = frozenset(("jit", "autotune", "heuristics"))
# Libraries with a `jit` of their own (numba.jit, jax.jit, torch.jit.script, ...): never a Triton kernel
_OTHER_JITS = frozenset(("numba", "jax", "torch", "cupy", "taichi", "warp", "mlx", "cutlass", "tilelang", "helion",
                         "triton", "builtins"))
# What a Triton kernel's body says: `tl.`-style calls of the language module, or a program id
_TRITON_BODY = re.compile(r"\btl\.\w|\bprogram_id\s*\(|\btriton\.language\.")


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _returns_value(fn: cst.FunctionDef) -> bool:
    """Whether the function's own body (not a nested def or lambda) has `return <expr>` other than `None`."""
    # walk.iter_nodes, not libcst's `children` (which rebuilt every node it passed: 2.7 of 14.5 s of a profiled
    # language-server re-lint of a 1,000-line file)
    nested = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
    for node in iter_nodes(fn.body, skip=lambda n: isinstance(n, nested)):
        if isinstance(node, cst.Return):
            value = node.value
            if value is not None and not (isinstance(value, cst.Name) and value.value == "None"):
                return True
    return False




def collect_constants(module: cst.Module, evaluator: StaticEvaluator) -> dict[str, Any]:
    """Module-level `NAME = <static>` / `NAME: tl.constexpr = <static>`; later assignments win."""
    constants: dict[str, Any] = {}
    evaluator.constants = constants
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            target: cst.BaseExpression | None = None
            value: cst.BaseExpression | None = None
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target, value = small.targets[0].target, small.value
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                target, value = small.target, small.value
            if isinstance(target, cst.Name) and value is not None:
                result = evaluator.evaluate(value)
                if isinstance(result, Unknown):
                    constants.pop(target.value, None)
                else:
                    constants[target.value] = result
    return constants


# The text pre-scan lives in kernlint.frontend.prescan (no libcst there): re-exported for older imports.
from kernlint.frontend.prescan import facts_without_kernels, may_define_or_launch  # noqa: E402,F401


class _LazyLocals:
    """A host function's static locals, computed on first use: only functions that launch need them."""

    def __init__(self, compute: Callable[[], dict[str, Any]]) -> None:
        self._compute: Callable[[], dict[str, Any]] | None = compute
        self._value: dict[str, Any] = {}

    def get(self) -> dict[str, Any]:
        if self._compute is not None:
            self._value, self._compute = self._compute(), None
        return self._value


_SCOPES = frozenset((cst.FunctionDef, cst.ClassDef))


class _Collector:
    """Kernels, launch sites and calls from jit code, in one walk of the module (libcst visitor order;
    frontend.walk.iter_visit says why it is not a libcst visitor)."""

    def __init__(self, path: str, module_name: str, names: NameResolver, evaluator: StaticEvaluator) -> None:
        self.path, self.module_name, self.names, self.ev = path, module_name, names, evaluator
        self.scope: list[str] = []
        self.host_locals: list[_LazyLocals] = []
        self.host_dtypes: list[_LazyDtypes] = []
        self.jit_depth = 0
        self.jit: list[JitFunction] = []
        self.launches: list[LaunchSite] = []
        self.called: set[str] = set()
        self.local_jit_names: set[str] = set()
        self.unresolved: list[UnresolvedDecorator] = []

    def run(self, module: cst.Module) -> None:
        for node, entering in iter_visit(module, _SCOPES):
            kind = type(node)
            if kind is cst.Call:
                self.visit_call(node)  # type: ignore[arg-type]
            elif kind is cst.FunctionDef:
                if entering:
                    self.visit_function(node)  # type: ignore[arg-type]
                else:
                    self.leave_function(node)  # type: ignore[arg-type]
            elif kind is cst.ClassDef:
                if entering:
                    self.scope.append(node.name.value)  # type: ignore[attr-defined]
                else:
                    self.scope.pop()

    # -- scopes -----------------------------------------------------------------------------------
    def visit_function(self, node: cst.FunctionDef) -> None:
        qualname = ".".join([*self.scope, node.name.value])
        jit = self._jit_function(node, qualname)
        if jit is not None:
            self.jit.append(jit)
            self.jit_depth += 1
        self.scope.append(node.name.value)
        outer = self.host_locals[-1] if self.host_locals else None
        self.host_locals.append(_LazyLocals(dict) if jit is not None else
                                _LazyLocals(lambda: self._static_locals(node, outer)))
        self.host_dtypes.append(_LazyDtypes(lambda: {} if jit is not None else host_tensor_dtypes(node, self.names)))

    def leave_function(self, original_node: cst.FunctionDef) -> None:
        self.scope.pop()
        self.host_locals.pop()
        self.host_dtypes.pop()
        if self.jit and self.jit[-1].node is original_node:
            self.jit_depth -= 1

    # -- calls ------------------------------------------------------------------------------------
    def visit_call(self, node: cst.Call) -> None:
        if self.jit_depth:
            for name in self.names.qualnames(node.func):
                self.called.add(name if "." in name else f"{self.module_name}.{name}")
            return
        if isinstance(node.func, cst.Subscript):
            self._launch(node, node.func)

    def _launch(self, call: cst.Call, sub: cst.Subscript) -> None:
        callee_names = self.names.qualnames(sub.value)
        if not callee_names:
            return
        # Local kernels resolve to their in-module qualname ("kern", "outer.<locals>.kern" → "outer.kern"),
        # imported ones to their absolute name; `kernlint.pipeline.api` links either form to the JitFunction.
        callee = sorted(callee_names)[0].replace(".<locals>", "")
        env = self.host_locals[-1].get() if self.host_locals else {}
        kwargs = {a.keyword.value: self.ev.evaluate(a.value, env) for a in call.args if a.keyword is not None}
        grid = sub.slice[0].slice if sub.slice else None
        callable_grid = isinstance(grid, cst.Index) and (
            isinstance(grid.value, cst.Lambda)
            or (isinstance(grid.value, cst.Name) and env.get(f"<callable>{grid.value.value}", False)))
        rng = self.names.range(call)
        self.launches.append(LaunchSite(
            callee=callee, line=rng.start.line if rng else 1, col=rng.start.column if rng else 0,
            end_line=rng.end.line if rng else 1, kwargs=kwargs,
            positional=sum(1 for a in call.args if a.keyword is None), grid_is_callable=callable_grid,
            host_function=".".join(self.scope) or None, arg_dtypes=self._arg_dtypes(call)))

    def _arg_dtypes(self, call: cst.Call) -> tuple[tuple[int | str, str, str], ...]:
        """What the host function says about the dtype of each tensor it passes (a Name argument)."""
        if not self.host_dtypes:
            return ()
        known = self.host_dtypes[-1].get()
        if not known:
            return ()
        out: list[tuple[int | str, str, str]] = []
        for i, arg in enumerate(a for a in call.args if not a.star):
            name = _passed_name(arg.value)
            if name is not None and name in known:
                out.append((arg.keyword.value if arg.keyword is not None else i, *known[name]))
        return tuple(out)

    def _static_locals(self, fn: cst.FunctionDef, outer_locals: _LazyLocals | None) -> dict[str, Any]:
        """Single-assignment constants of a host function (`BLOCK = 1024` before a launch)."""
        seen: dict[str, int] = {}
        values: dict[str, Any] = {}
        outer = outer_locals.get() if outer_locals is not None else {}
        for node in _walk_statements(fn.body):
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                name = node.targets[0].target.value
                seen[name] = seen.get(name, 0) + 1
                if isinstance(node.value, cst.Lambda):
                    values[f"<callable>{name}"] = True
                else:
                    values[name] = self.ev.evaluate(node.value, {**outer, **values})
        for stmt in _walk_statements(fn.body):
            if isinstance(stmt, cst.FunctionDef):
                values[f"<callable>{stmt.name.value}"] = True
        return {**outer, **{k: v for k, v in values.items()
                            if k.startswith("<") or (seen.get(k) == 1 and not isinstance(v, Unknown))}}

    # -- decorators -------------------------------------------------------------------------------
    def _jit_function(self, node: cst.FunctionDef, qualname: str) -> JitFunction | None:
        is_jit = False
        autotune: AutotuneSpec | None = None
        heuristics: list[HeuristicValue] = []
        jit_kwargs: dict[str, Any] = {}
        for dec in node.decorators:
            expr = dec.decorator
            func = expr.func if isinstance(expr, cst.Call) else expr
            if self.names.refers_to(func, *JIT_NAMES):
                is_jit = True
                if isinstance(expr, cst.Call):
                    jit_kwargs = {a.keyword.value: self.ev.evaluate(a.value) for a in expr.args if a.keyword}
            elif self.names.refers_to(func, *AUTOTUNE_NAMES) and isinstance(expr, cst.Call):
                autotune = self._autotune(expr)
            elif autotune is None and isinstance(expr, cst.Call) and any(
                    a.keyword is not None and a.keyword.value == "configs" for a in expr.args):
                # a project's own autotuner (flag-gems' `@libtuner(configs=..., key=...)`): its configs are the
                # space the kernel runs in, read like triton.autotune's, never replaced by defaults unsaid
                autotune = self._autotune(expr)
            elif self.names.refers_to(func, *HEURISTICS_NAMES) and isinstance(expr, cst.Call):
                heuristics.extend(self._heuristics(expr))
        if not is_jit:
            self._unresolved_jit(node, qualname)
            return None
        first_line = self.names.line(node.decorators[0]) if node.decorators else self.names.line(node)
        return JitFunction(
            name=node.name.value, qualname=qualname, module=self.module_name, path=self.path, node=node,
            line=self.names.line(node.name), decorator_line=first_line, params=self._params(node),
            autotune=autotune, heuristics=tuple(heuristics), jit_kwargs=jit_kwargs,
            returns_value=_returns_value(node))

    def _unresolved_jit(self, node: cst.FunctionDef, qualname: str) -> None:
        """Record a function decorated like a kernel (`@something.jit`, `@jit`) when the decorator does not
        resolve to triton (imported from a module kernlint could not find) and the body reads like a Triton
        kernel: such a kernel is reported, never silently dropped."""
        for dec in node.decorators:
            expr = dec.decorator
            func = expr.func if isinstance(expr, cst.Call) else expr
            written = _code(func)
            if written.rpartition(".")[2] not in _JIT_LIKE:
                continue
            resolved = next(iter(self.names.qualnames(func)), "")
            if resolved.split(".")[0] in _OTHER_JITS:
                continue
            if _TRITON_BODY.search(_code(node.body)):
                self.unresolved.append(UnresolvedDecorator(self.names.line(node.name), qualname, written))
            return

    def _params(self, node: cst.FunctionDef) -> tuple[Param, ...]:
        out: list[Param] = []
        params = [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]
        for index, p in enumerate(params):
            ann = p.annotation.annotation if p.annotation is not None else None
            is_constexpr = ann is not None and self.names.refers_to(ann, *CONSTEXPR_NAMES)
            default = self.ev.evaluate(p.default) if p.default is not None else NO_DEFAULT
            out.append(Param(p.name.value, index, is_constexpr, default, _code(ann) if ann is not None else None))
        return tuple(out)

    def _autotune(self, call: cst.Call) -> AutotuneSpec:
        configs_node: cst.BaseExpression | None = None
        key_node: cst.BaseExpression | None = None
        has_prune = False
        positional = [a for a in call.args if a.keyword is None]
        if positional:
            configs_node = positional[0].value
        if len(positional) > 1:
            key_node = positional[1].value
        for arg in call.args:
            if arg.keyword is not None:
                if arg.keyword.value == "configs":
                    configs_node = arg.value
                elif arg.keyword.value == "key":
                    key_node = arg.value
                elif arg.keyword.value == "prune_configs_by":
                    has_prune = True
        line = self.names.line(call)
        configs: tuple[ConfigLiteral, ...] = ()
        reason: str | None = "no `configs=` argument"
        data: DataConfigs | str | None = None
        if configs_node is not None:
            value = self.ev.evaluate(configs_node)
            inner = _single_argument(configs_node)
            if isinstance(value, Unknown) and inner is not None:
                # `configs=autotune_configs([triton.Config(...), ...])` (mamba-ssm, 25 kernels): a helper that
                # passes the author's list through, or narrows it at run time. Its literal list is the author's
                # space; never executed, only read.
                listed = self.ev.evaluate(inner)
                if isinstance(listed, (list, tuple)) and listed and all(isinstance(c, ConfigLiteral) for c in listed):
                    value = listed
            data = self._data_configs(configs_node, line) if isinstance(value, Unknown) else None
            if isinstance(data, str) and isinstance(value, Unknown):
                value = Unknown(f"{value.reason}; {data}")
            elif isinstance(data, DataConfigs):
                # the generic file's list; a target with a file of its own reads that one (api.analyse_kernel)
                value = list(data.generic.configs) if data.generic is not None else Unknown(
                    f"configs under `{data.key}` only in per-architecture data files "
                    f"({', '.join(v.path for v in data.variants)})")
            if isinstance(value, Unknown) and isinstance(configs_node, cst.Call) \
                    and not value.reason.startswith("configs from"):
                # `configs=runtime.get_tuned_config("mm")`: a table loaded at run time, named as the source
                reason = f"configs from `{_code(configs_node)}`: not read ({value.reason})"
            elif isinstance(value, Unknown):
                reason = value.reason
            elif isinstance(value, (list, tuple)) and all(isinstance(c, ConfigLiteral) for c in value):
                configs, reason = tuple(value), None
            else:
                reason = "the configs expression does not evaluate to a list of triton.Config"
        key = self.ev.evaluate(key_node) if key_node is not None else ()
        key_names = tuple(str(k) for k in key) if isinstance(key, (list, tuple)) else ()
        return AutotuneSpec(configs, key_names, line, reason, has_prune,
                            data if isinstance(data, DataConfigs) else None)

    def _data_configs(self, node: cst.BaseExpression, line: int) -> DataConfigs | str | None:
        """`runtime.get_tuned_config("mm")`: a call into the file's own package with one literal key, looked
        up in the package's data files (frontend.data_configs); None when the call is not of that form."""
        if not isinstance(node, cst.Call) or len(node.args) != 1 or node.args[0].keyword is not None \
                or node.args[0].star or not isinstance(node.args[0].value, cst.SimpleString):
            return None
        key = node.args[0].value.evaluated_value
        top = self.module_name.split(".")[0]
        if not isinstance(key, str) or not top \
                or not any(q.split(".")[0] == top for q in self.names.qualnames(node.func)):
            return None
        return resolve_data_configs(self.path, key, line)

    def _heuristics(self, call: cst.Call) -> list[HeuristicValue]:
        arg = next((a for a in call.args if a.keyword is None or a.keyword.value == "values"), None)
        if arg is None or not isinstance(arg.value, cst.Dict):
            return []
        out: list[HeuristicValue] = []
        for el in arg.value.elements:
            if not isinstance(el, cst.DictElement):
                continue
            name = self.ev.evaluate(el.key)
            if not isinstance(name, str):
                continue
            body: cst.BaseExpression | None = None
            arg_name = "args"
            if isinstance(el.value, cst.Lambda):
                body = el.value.body
                params = el.value.params.params
                arg_name = params[0].name.value if params else "args"
            out.append(HeuristicValue(name, _code(el.value), self.names.line(el.value), body, arg_name))
        return out


class _LazyDtypes:
    def __init__(self, compute: Callable[[], dict[str, tuple[str, str]]]) -> None:
        self._compute: Callable[[], dict[str, tuple[str, str]]] | None = compute
        self._value: dict[str, tuple[str, str]] = {}

    def get(self) -> dict[str, tuple[str, str]]:
        if self._compute is not None:
            self._value, self._compute = self._compute(), None
        return self._value


# torch methods that return a tensor of the dtype of their receiver (a launch often passes `x.contiguous()`)
_SAME_DTYPE_METHODS = frozenset(("contiguous", "reshape", "flatten", "t", "transpose", "permute", "squeeze",
                                 "unsqueeze", "expand", "clone", "detach"))
# torch factories whose `dtype=` is the dtype of the tensor they return
_FACTORIES = frozenset(("empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like",
                        "randn", "rand", "randint", "empty_strided", "arange", "tensor"))


def _passed_name(node: cst.BaseExpression) -> str | None:
    """`x` for a launch argument `x`, `x.contiguous()`, `x.view(-1)` (a shape view keeps the dtype)."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        method = node.func.attr.value
        if method not in _SAME_DTYPE_METHODS and not (method == "view" and not any(
                isinstance(a.value, cst.Attribute) for a in node.args)):
            return None
        node = node.func.value
    return node.value if isinstance(node, cst.Name) else None


def _torch_dtype(node: cst.BaseExpression | None, names: NameResolver) -> str | None:
    if node is None:
        return None
    for qn in names.qualnames(node):
        if qn.startswith("torch."):
            from kernlint.frontend.arg_values import DTYPE_ALIASES, SHORT_DTYPES
            short = DTYPE_ALIASES.get(qn[6:], qn[6:])
            if short in SHORT_DTYPES:
                return short
    return None


def _dtype_asserts(test: cst.BaseExpression, names: NameResolver) -> list[tuple[str, str, str]]:
    """(tensor name, dtype, source text) an `assert` states: `a.dtype == torch.int8`, `a.dtype is torch.int8`,
    joined with `and`."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _dtype_asserts(test.left, names) + _dtype_asserts(test.right, names)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return []
    comp = test.comparisons[0]
    if not isinstance(comp.operator, (cst.Equal, cst.Is)):
        return []
    out: list[tuple[str, str, str]] = []
    for side, other in ((test.left, comp.comparator), (comp.comparator, test.left)):
        if isinstance(side, cst.Attribute) and side.attr.value == "dtype" and isinstance(side.value, cst.Name):
            dtype = _torch_dtype(other, names)
            if dtype is not None:
                out.append((side.value.value, dtype, _code(test)))
    return out


def host_tensor_dtypes(fn: cst.FunctionDef, names: NameResolver) -> dict[str, tuple[str, str]]:
    """Tensor name → (dtype, why) in a host function: a dtype assert, or a single assignment from a torch
    factory with `dtype=` (`torch.empty(M, N, dtype=torch.float32)`) or `.to(torch.X)`. A name with two
    different statements is left out."""
    found: dict[str, set[tuple[str, str]]] = {}
    assigned: dict[str, int] = {}
    for node in iter_nodes(fn.body, skip=lambda n: isinstance(n, (cst.FunctionDef, cst.Lambda)) and n is not fn):
        if isinstance(node, cst.Assert):
            for name, dtype, text in _dtype_asserts(node.test, names):
                found.setdefault(name, set()).add((dtype, f"`assert {text}` in {fn.name.value}"))
        elif isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            name = node.targets[0].target.value
            assigned[name] = assigned.get(name, 0) + 1
            value = node.value
            if not isinstance(value, cst.Call):
                continue
            dtype_node = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "dtype"),
                              None)
            func = value.func
            method = func.attr.value if isinstance(func, cst.Attribute) else ""
            if method == "to" and dtype_node is None and value.args:
                dtype_node = value.args[0].value
            elif not (method in _FACTORIES and any(q.startswith("torch.") for q in names.qualnames(func))):
                continue
            dtype = _torch_dtype(dtype_node, names)
            if dtype is not None:
                found.setdefault(name, set()).add((dtype, f"`{name}` is created with dtype={_code(dtype_node)} "
                                                          f"in {fn.name.value} (line {names.line(node.value)})"))
    out: dict[str, tuple[str, str]] = {}
    for name, evidence in found.items():
        if len({d for d, _ in evidence}) == 1 and assigned.get(name, 0) <= 1:
            out[name] = min(evidence, key=lambda e: e[1])
    return out


def _single_argument(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """The argument of a call with exactly one positional argument and no keywords (`wrap([...])`), else None."""
    if isinstance(node, cst.Call) and len(node.args) == 1 and node.args[0].keyword is None \
            and not node.args[0].star:
        return node.args[0].value
    return None


def _walk_statements(body: cst.BaseSuite) -> list[cst.CSTNode]:
    """Assignments and nested defs of a function body, without entering nested functions or lambdas."""
    return [n for n in iter_nodes(body, skip=lambda n: isinstance(n, (cst.FunctionDef, cst.Lambda)))
            if isinstance(n, (cst.Assign, cst.FunctionDef)) and n is not body]


def collect_module_facts(path: str, module: cst.Module, package: str | None = None,
                         text: str | None = None,
                         reexports: Callable[[str], str] | None = None) -> tuple[ModuleFacts, NameResolver]:
    """`reexports` maps an imported name to what the module it comes from bound it to (kernlint.pipeline.imports:
    `from pkg.triton_utils import triton` is triton itself); without it imports are taken as written."""
    module_name = package_module_name(path)
    if package is None:
        package = module_name.rpartition(".")[0] if not path.endswith("__init__.py") else module_name
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    names = NameResolver(wrapper, package, text)
    if reexports is not None and (text is None or may_define_or_launch(text)):
        names.follow_imports(reexports)
    evaluator = StaticEvaluator(names)
    evaluator.call_hook = ModuleFunctions(evaluator, module)   # `configs=get_autotune_config()`
    constants = collect_constants(module, evaluator)
    collector = _Collector(path, module_name, names, evaluator)
    if text is None or may_define_or_launch(text):
        collector.run(module)
    facts = ModuleFacts(path=path, module_name=module_name, jit_functions=tuple(collector.jit),
                        launches=tuple(collector.launches), constants=constants,
                        called_jit_names=frozenset(collector.called), unresolved=tuple(collector.unresolved))
    return facts, names
