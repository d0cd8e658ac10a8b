"""Evaluate literal-ish Python expressions from the syntax tree, without eval.

Used for module constants, `triton.Config` lists (including comprehensions over literals and
`itertools.product`), launch-site keyword values and `@triton.heuristics` lambdas whose bodies only do
arithmetic on the kernel's arguments. Anything else becomes `Unknown(reason)`.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from kernlint.frontend.names import NameResolver
from kernlint.ir.symbolic import BINARY_OPS, MAX_SEQUENCE, TooLarge, Unknown

CONFIG_NAMES = ("triton.Config", "triton.runtime.Config", "triton.runtime.autotuner.Config")
# Triton's launch options (CUDAOptions fields people pass per launch / per Config).
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
MAX_ITEMS = 4096  # a comprehension producing more configs than this is treated as unknown
# Nodes visited by one `evaluate` (comprehension iterations included; ~3 us each): a 4,096-entry config table
# with a few conditions each is ~10^5; nested comprehensions that filter everything out could otherwise
# loop 4,096^3 times without yielding.
MAX_STEPS = 250_000
# Digits of an integer literal: 4,096 bits is at most 1,234 decimal digits (ir.symbolic.MAX_INT_BITS);
# a hexadecimal literal is not covered by CPython's int-from-str digit limit.
MAX_LITERAL_CHARS = 1_300


@dataclass(frozen=True, slots=True)
class ConfigLiteral:
    """A statically evaluated `triton.Config(...)`."""

    kwargs: Mapping[str, Any]
    options: Mapping[str, Any]
    line: int
    col: int = 0
    unknown: Mapping[str, str] = field(default_factory=dict)  # name → why it is not known


_CMP = {cst.Equal: "==", cst.NotEqual: "!=", cst.LessThan: "<", cst.LessThanEqual: "<=",
        cst.GreaterThan: ">", cst.GreaterThanEqual: ">="}
_BIN = {cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.FloorDivide: "//",
        cst.Modulo: "%", cst.Power: "**", cst.LeftShift: "<<", cst.RightShift: ">>",
        cst.BitAnd: "&", cst.BitOr: "|", cst.BitXor: "^"}


def _range(*args: int) -> list[int]:
    r = range(*args)
    if len(r) > MAX_SEQUENCE:
        _give(f"range of {len(r):,} items is not evaluated")
    return list(r)


def _product(*iterables: Any) -> list[tuple[Any, ...]]:
    pools = [tuple(it) for it in iterables]
    total = 1
    for pool in pools:
        total *= len(pool)
        if total > MAX_SEQUENCE:
            _give(f"itertools.product of more than {MAX_SEQUENCE:,} items is not evaluated")
    return list(itertools.product(*pools))


def _next_power_of_2(n: int) -> int:
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


# Pure functions a config or launch expression may call, by qualified name.
PURE_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "triton.next_power_of_2": _next_power_of_2, "triton.cdiv": _cdiv,
    "triton.language.constexpr": lambda v: v, "triton.language.cdiv": _cdiv,
    "builtins.min": min, "builtins.max": max, "builtins.abs": abs, "builtins.int": int,
    "builtins.range": _range, "builtins.list": list, "builtins.tuple": tuple,
    "builtins.len": len, "builtins.sorted": sorted, "builtins.dict": dict,
    "itertools.product": _product,
}


class StaticEvaluator:
    def __init__(self, names: NameResolver, constants: Mapping[str, Any] | None = None) -> None:
        self.names = names
        self.constants: Mapping[str, Any] = constants or {}
        self._steps = 0
        self._active = 0   # evaluate() calls in progress: the step budget spans the outermost one
        # calls to the module's own functions (config_functions.ModuleFunctions): a value, or None to give up
        self.call_hook: Callable[[cst.Call, dict[str, Any]], Any] | None = None

    def evaluate(self, node: cst.BaseExpression, env: Mapping[str, Any] | None = None) -> Any:
        if not self._active:
            self._steps = 0
        self._active += 1
        try:
            return self._eval(node, dict(env or {}))
        except RecursionError:
            return Unknown("expression too deeply nested")
        except _Give as give:
            return give.unknown
        except TooLarge as exc:
            return Unknown(str(exc))
        except Exception as exc:  # arithmetic on odd literals in user code: unknown, never a crash
            return Unknown(f"cannot evaluate statically: {type(exc).__name__}")
        finally:
            self._active -= 1

    # -- internals --------------------------------------------------------------------------------
    def _eval(self, node: cst.BaseExpression, env: dict[str, Any]) -> Any:
        self._steps += 1
        if self._steps > MAX_STEPS:
            _give(f"more than {MAX_STEPS:,} evaluation steps")
        if isinstance(node, cst.Integer):
            if len(node.value) > MAX_LITERAL_CHARS:
                _give(f"integer literal of {len(node.value):,} digits")
            return int(node.value.replace("_", ""), 0)
        if isinstance(node, cst.Float):
            return float(node.value.replace("_", ""))
        if isinstance(node, cst.SimpleString):
            return node.evaluated_value
        if isinstance(node, cst.ConcatenatedString):
            value = node.evaluated_value
            return value if isinstance(value, str) else _give("byte strings are not config values")
        if isinstance(node, cst.Name):
            return self._name(node, env)
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            items: list[Any] = []
            for el in node.elements:
                if isinstance(el, cst.StarredElement):
                    items.extend(self._known(self._eval(el.value, env)))
                else:
                    items.append(self._known(self._eval(el.value, env)))
            return tuple(items) if isinstance(node, cst.Tuple) else items
        if isinstance(node, cst.Dict):
            out: dict[Any, Any] = {}
            for el in node.elements:
                if isinstance(el, cst.StarredDictElement):
                    out.update(self._known(self._eval(el.value, env)))
                else:
                    out[self._known(self._eval(el.key, env))] = self._eval(el.value, env)
            return out
        if isinstance(node, cst.UnaryOperation):
            value = self._known(self._eval(node.expression, env))
            if isinstance(node.operator, cst.Minus):
                return -value
            if isinstance(node.operator, cst.Plus):
                return +value
            if isinstance(node.operator, cst.Not):
                return not value
            return ~value
        if isinstance(node, cst.BinaryOperation):
            op = _BIN.get(type(node.operator))
            if op is None:
                return _give(f"operator {type(node.operator).__name__} not evaluated")
            left = self._known(self._eval(node.left, env))
            right = self._known(self._eval(node.right, env))
            return BINARY_OPS[op](left, right)
        if isinstance(node, cst.BooleanOperation):
            left = self._known(self._eval(node.left, env))
            if isinstance(node.operator, cst.And):
                return left and self._known(self._eval(node.right, env))
            return left or self._known(self._eval(node.right, env))
        if isinstance(node, cst.Comparison):
            left = self._known(self._eval(node.left, env))
            result = True
            for target in node.comparisons:
                right = self._known(self._eval(target.comparator, env))
                if isinstance(target.operator, cst.In):
                    ok = left in right
                elif isinstance(target.operator, cst.NotIn):
                    ok = left not in right
                elif isinstance(target.operator, (cst.Is, cst.IsNot)) and (left is None or right is None):
                    # `args["BIAS"] is not None` in a heuristics lambda, with BIAS passed as None (--arg)
                    ok = (left is right) == isinstance(target.operator, cst.Is)
                else:
                    op = _CMP.get(type(target.operator))
                    if op is None:
                        return _give("comparison not evaluated")
                    ok = BINARY_OPS[op](left, right)
                result = result and bool(ok)
                left = right
            return result
        if isinstance(node, cst.IfExp):
            return self._eval(node.body if self._known(self._eval(node.test, env)) else node.orelse, env)
        if isinstance(node, cst.Subscript) and len(node.slice) == 1:
            base = self._known(self._eval(node.value, env))
            index = node.slice[0].slice
            if isinstance(index, cst.Index):
                return base[self._known(self._eval(index.value, env))]
            return _give("slices are not evaluated")
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return list(self._comprehension(node.elt, node.for_in, env))
        if isinstance(node, cst.Call):
            return self._call(node, env)
        return _give(f"{type(node).__name__} is not a static value")

    def _name(self, node: cst.Name, env: dict[str, Any]) -> Any:
        if node.value in env:
            return env[node.value]
        if node.value in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.value]
        if node.value in self.constants:
            return self.constants[node.value]
        return _give(f"`{node.value}` is not a module constant")

    def _comprehension(self, elt: cst.BaseExpression, comp: cst.CompFor, env: dict[str, Any]) -> Iterator[Any]:
        iterable = self._known(self._eval(comp.iter, env))
        count = 0
        for item in iterable:
            local = dict(env)
            self._bind(comp.target, item, local)
            if not all(self._known(self._eval(cond.test, local)) for cond in comp.ifs):
                continue
            if comp.inner_for_in is not None:
                yield from self._comprehension(elt, comp.inner_for_in, local)
            else:
                count += 1
                if count > MAX_ITEMS:
                    _give(f"comprehension yields more than {MAX_ITEMS} items")
                yield self._eval(elt, local)

    def _bind(self, target: cst.BaseExpression, value: Any, env: dict[str, Any]) -> None:
        if isinstance(target, cst.Name):
            env[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = list(value)
            if len(values) != len(target.elements):
                _give("unpacking length mismatch")
            for el, v in zip(target.elements, values):
                self._bind(el.value, v, env)
        else:
            _give("unsupported comprehension target")

    def _call(self, node: cst.Call, env: dict[str, Any]) -> Any:
        names = self.names.qualnames(node.func)
        if not names.isdisjoint(CONFIG_NAMES):
            return self._config(node, env)
        for name in names:
            fn = PURE_FUNCTIONS.get(name)
            if fn is not None:
                args = [self._known(self._eval(a.value, env)) for a in node.args if not a.keyword and not a.star]
                if any(a.star for a in node.args):
                    for a in node.args:
                        if a.star == "*":
                            args.extend(self._known(self._eval(a.value, env)))
                kwargs = {a.keyword.value: self._known(self._eval(a.value, env)) for a in node.args if a.keyword}
                return fn(*args, **kwargs)
        if self.call_hook is not None:
            found = self.call_hook(node, env)
            if found is not None:
                return found
        label = next(iter(sorted(names)), None) or cst.Module([]).code_for_node(node.func)
        return _give(f"call to `{label}` is not evaluated statically")

    def _config(self, node: cst.Call, env: dict[str, Any]) -> ConfigLiteral:
        kwargs: dict[str, Any] = {}
        options: dict[str, Any] = {}
        unknown: dict[str, str] = {}
        positional = [a for a in node.args if not a.keyword]
        if positional:
            first = self.evaluate(positional[0].value, env)
            if isinstance(first, Unknown):
                _give(f"triton.Config kwargs: {first.reason}")
            kwargs.update(first)
        for idx, arg in enumerate(positional[1:], start=1):  # Config(kwargs, num_warps, num_stages, ...)
            name = ("num_warps", "num_stages", "num_ctas", "maxnreg")[idx - 1] if idx <= 4 else f"arg{idx}"
            options[name] = self.evaluate(arg.value, env)
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in LAUNCH_OPTIONS:
                options[arg.keyword.value] = self.evaluate(arg.value, env)
            elif arg.keyword is not None and arg.keyword.value == "kwargs":
                kwargs.update(self._known(self._eval(arg.value, env)))
        for store in (kwargs, options):
            for key, value in list(store.items()):
                if isinstance(value, Unknown):
                    unknown[key] = value.reason
                    del store[key]
        return ConfigLiteral(kwargs, options, self.names.line(node), self.names.col(node), unknown)

    @staticmethod
    def _known(value: Any) -> Any:
        if isinstance(value, Unknown):
            raise _Give(value)
        return value


class _Give(Exception):
    def __init__(self, unknown: Unknown) -> None:
        self.unknown = unknown


def _give(reason: str) -> Any:
    raise _Give(Unknown(reason))
