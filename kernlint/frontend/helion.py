"""Find `@helion.kernel` functions and the `helion.Config`s they pin or list, without importing helion.

Helion (pytorch/helion) kernels are ordinary Python functions: host code (allocations, `x.size()`,
`hl.specialize`) around device loops (`for tile in hl.tile(...)`) that Helion turns into one Triton
kernel per config. Here we only collect facts; `kernlint.lowering.helion_lower` builds the dataflow graph.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from kernlint.frontend.facts import JitFunction, Param
from kernlint.core.module_names import package_module_name
from kernlint.frontend.names import NameResolver
from kernlint.frontend.static_eval import StaticEvaluator
from kernlint.ir.symbolic import Unknown

KERNEL_NAMES = ("helion.kernel", "helion.runtime.kernel", "helion.runtime.kernel.kernel")
CONFIG_NAMES = ("helion.Config", "helion.runtime.Config", "helion.runtime.config.Config")
SETTINGS_NAMES = ("helion.Settings", "helion.runtime.Settings", "helion.runtime.settings.Settings")
# Settings are accepted as decorator keywords too (`@helion.kernel(static_shapes=False)`).
KNOWN_SETTINGS = ("static_shapes", "autotune_effort", "use_default_config", "dot_precision", "index_dtype",
                  "autotune_config_overrides", "autotuner_fn", "print_output_code")


@dataclass(frozen=True, slots=True)
class HelionConfig:
    """A statically evaluated `helion.Config(...)`; values that are not static are `Unknown`."""

    values: dict[str, Any]
    line: int
    col: int = 0

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)


@dataclass(frozen=True, slots=True)
class HelionFacts:
    configs: tuple[HelionConfig, ...]
    # "pinned": `config=` (Helion runs exactly that config, like a Triton launch with explicit values);
    # "configs": `configs=[...]` (Helion's autotuner picks among them); "none": Helion autotunes.
    mode: str
    settings: dict[str, Any] = field(default_factory=dict)
    config_problem: str | None = None    # why the config list could not be read statically


@dataclass(frozen=True, slots=True)
class HelionKernel(JitFunction):
    """A `@helion.kernel` function; it reuses JitFunction's fields so reports and rules treat it alike."""

    helion: HelionFacts = HelionFacts((), "none")


def _decorator_kernel_call(expr: cst.BaseExpression, names: NameResolver,
                           aliases: dict[str, cst.Call]) -> tuple[bool, cst.Call | None]:
    """(is a helion kernel decorator, the call carrying its keywords if any)."""
    func = expr.func if isinstance(expr, cst.Call) else expr
    if names.refers_to(func, *KERNEL_NAMES):
        return True, expr if isinstance(expr, cst.Call) else None
    # `fast = helion.kernel(config=...)` at module level, then `@fast`
    if isinstance(expr, cst.Name) and expr.value in aliases:
        return True, aliases[expr.value]
    return False, None


class _Finder(cst.CSTVisitor):
    def __init__(self, path: str, module_name: str, names: NameResolver, ev: StaticEvaluator,
                 assigns: dict[str, cst.BaseExpression]) -> None:
        self.path, self.module_name, self.names, self.ev, self.assigns = path, module_name, names, ev, assigns
        self.aliases = {k: v for k, v in assigns.items() if isinstance(v, cst.Call)
                        and names.refers_to(v.func, *KERNEL_NAMES)}
        self.scope: list[str] = []
        self.found: list[HelionKernel] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scope.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        qualname = ".".join([*self.scope, node.name.value])
        for dec in node.decorators:
            is_kernel, call = _decorator_kernel_call(dec.decorator, self.names, self.aliases)
            if is_kernel:
                self.found.append(self._kernel(node, qualname, call))
                return False  # nested defs inside a Helion kernel are device helpers, not kernels
        self.scope.append(node.name.value)
        return True

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        if self.scope and self.scope[-1] == original_node.name.value:
            self.scope.pop()

    def _kernel(self, node: cst.FunctionDef, qualname: str, call: cst.Call | None) -> HelionKernel:
        params = [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]
        out_params = tuple(
            Param(p.name.value, i, False, annotation=cst.Module([]).code_for_node(p.annotation.annotation)
                  if p.annotation is not None else None) for i, p in enumerate(params))
        facts = self._facts(call) if call is not None else HelionFacts((), "none")
        first = self.names.line(node.decorators[0]) if node.decorators else self.names.line(node)
        return HelionKernel(name=node.name.value, qualname=qualname, module=self.module_name, path=self.path,
                            node=node, line=self.names.line(node.name), decorator_line=first,
                            params=out_params, helion=facts)

    def _facts(self, call: cst.Call) -> HelionFacts:
        configs: list[HelionConfig] = []
        mode, problem = "none", None
        settings: dict[str, Any] = {}
        for arg in call.args:
            key = arg.keyword.value if arg.keyword is not None else None
            if key in ("config", "configs"):
                mode = "pinned" if key == "config" else "configs"
                found = self.configs(arg.value)
                if isinstance(found, str):
                    problem = found
                else:
                    configs.extend(found)
            elif key == "settings":
                node = self._resolve(arg.value)
                if isinstance(node, cst.Call) and self.names.refers_to(node.func, *SETTINGS_NAMES):
                    settings.update(self._kwargs(node))
            elif key is not None:
                settings[key] = self.ev.evaluate(arg.value)
        if mode == "configs" and len(configs) == 1:
            mode = "pinned"  # Helion skips autotuning when the list has a single config
        return HelionFacts(tuple(configs), mode, settings, problem)

    def _resolve(self, node: cst.BaseExpression) -> cst.BaseExpression:
        seen = 0
        while isinstance(node, cst.Name) and node.value in self.assigns and seen < 8:
            node, seen = self.assigns[node.value], seen + 1
        return node

    def _kwargs(self, call: cst.Call) -> dict[str, Any]:
        return {a.keyword.value: self.ev.evaluate(self._resolve(a.value)) for a in call.args if a.keyword}

    def configs(self, node: cst.BaseExpression) -> list[HelionConfig] | str:
        """`helion.Config(...)`, a list/tuple of them, or a module-level name bound to either."""
        node = self._resolve(node)
        if isinstance(node, cst.Call) and self.names.refers_to(node.func, *CONFIG_NAMES):
            values = self._kwargs(node)
            for a in node.args:
                if a.keyword is None and a.star == "**":
                    return f"`**` arguments to helion.Config at line {self.names.line(node)}"
            return [HelionConfig(values, self.names.line(node), self.names.col(node))]
        if isinstance(node, (cst.List, cst.Tuple)):
            out: list[HelionConfig] = []
            for el in node.elements:
                sub = self.configs(el.value)
                if isinstance(sub, str):
                    return sub
                out.extend(sub)
            return out
        return (f"the configs expression `{cst.Module([]).code_for_node(node)[:60]}` at line "
                f"{self.names.line(node)} is not a literal list of helion.Config")


def _module_assigns(module: cst.Module) -> dict[str, cst.BaseExpression]:
    """Module-level `NAME = expr` (last one wins): config lists and decorator aliases live here."""
    out: dict[str, cst.BaseExpression] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                        small.targets[0].target, cst.Name):
                    out[small.targets[0].target.value] = small.value
                elif isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(
                        small.target, cst.Name):
                    out[small.target.value] = small.value
    return out


def mentions_helion(text: str | None) -> bool:
    """Cheap pre-filter: a file that never says `helion` has no Helion kernel (keeps the Triton path fast)."""
    return text is not None and "helion" in text


def collect_helion_kernels(path: str, module: cst.Module, names: NameResolver,
                           constants: dict[str, Any]) -> list[HelionKernel]:
    finder = _Finder(path, package_module_name(path), names, StaticEvaluator(names, constants), _module_assigns(module))
    module.visit(finder)
    return finder.found


def unknown_reason(value: Any) -> str | None:
    return value.reason if isinstance(value, Unknown) else None
