"""Symbolic compile-time expressions over constexpr names (shapes like `BLOCK_M`, `BLOCK_N // 2`).

Shapes in the graph stay symbolic so that one graph serves every config of a sweep; `evaluate` binds the
constexpr values of one config. Construction folds constants so concrete shapes stay cheap.
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Callable, Mapping, Union

Scalar = Union[int, float, bool, str, None]


class Expr:
    __slots__ = ()

    def evaluate(self, env: Mapping[str, Scalar]) -> Scalar | "Unknown":
        raise NotImplementedError

    def free_symbols(self) -> frozenset[str]:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Unknown:
    """A value that cannot be known statically; `reason` says why, for diagnostics."""

    reason: str


@dataclass(frozen=True, slots=True)
class Const(Expr):
    value: Scalar

    def evaluate(self, env: Mapping[str, Scalar]) -> Scalar | Unknown:
        return self.value

    def free_symbols(self) -> frozenset[str]:
        return frozenset()

    def __str__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True, slots=True)
class Sym(Expr):
    name: str

    def evaluate(self, env: Mapping[str, Scalar]) -> Scalar | Unknown:
        if self.name in env:
            return env[self.name]
        return Unknown(f"{self.name} has no value in this config")

    def free_symbols(self) -> frozenset[str]:
        return frozenset({self.name})

    def __str__(self) -> str:
        return self.name


def _floordiv(a: Scalar, b: Scalar) -> Scalar:
    return a // b  # type: ignore[operator]


def _cdiv(a: Scalar, b: Scalar) -> Scalar:
    return -(-a // b)  # type: ignore[operator]


def _next_pow2(a: Scalar) -> Scalar:
    n = int(a)  # type: ignore[arg-type]
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


BINARY_OPS: dict[str, Callable[[Scalar, Scalar], Scalar]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": _floordiv,
    "%": operator.mod, "**": operator.pow, "<<": operator.lshift, ">>": operator.rshift,
    "&": operator.and_, "|": operator.or_, "^": operator.xor,
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
    ">=": operator.ge, "and": lambda a, b: a and b, "or": lambda a, b: a or b,
    "min": min, "max": max, "cdiv": _cdiv,  # type: ignore[dict-item]
}
UNARY_OPS: dict[str, Callable[[Scalar], Scalar]] = {
    "-": operator.neg, "+": operator.pos, "not": operator.not_, "~": operator.invert,
    "next_power_of_2": _next_pow2, "log2": lambda a: int(math.log2(a)),  # type: ignore[arg-type]
}


@dataclass(frozen=True, slots=True)
class BinExpr(Expr):
    op: str
    left: Expr
    right: Expr

    def evaluate(self, env: Mapping[str, Scalar]) -> Scalar | Unknown:
        a = self.left.evaluate(env)
        if isinstance(a, Unknown):
            return a
        b = self.right.evaluate(env)
        if isinstance(b, Unknown):
            return b
        try:
            return BINARY_OPS[self.op](a, b)
        except Exception as exc:  # division by zero, type mix-ups in user code: unknown, not a crash
            return Unknown(f"cannot evaluate {self}: {exc}")

    def free_symbols(self) -> frozenset[str]:
        return self.left.free_symbols() | self.right.free_symbols()

    def __str__(self) -> str:
        if self.op in ("min", "max", "cdiv"):
            return f"{self.op}({self.left}, {self.right})"
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True, slots=True)
class UnExpr(Expr):
    op: str
    operand: Expr

    def evaluate(self, env: Mapping[str, Scalar]) -> Scalar | Unknown:
        a = self.operand.evaluate(env)
        if isinstance(a, Unknown):
            return a
        try:
            return UNARY_OPS[self.op](a)
        except Exception as exc:
            return Unknown(f"cannot evaluate {self}: {exc}")

    def free_symbols(self) -> frozenset[str]:
        return self.operand.free_symbols()

    def __str__(self) -> str:
        return f"{self.op}({self.operand})" if self.op.isalpha() else f"{self.op}{self.operand}"


@dataclass(frozen=True, slots=True)
class CondExpr(Expr):
    """`then if test else other` on a constexpr test: Triton picks the branch at compile time, so one config
    sees one of them (a shape dimension of `o_cm[:, None] if X_DIM == 2 else 0` is BM or 1)."""
    test: Expr
    then: Expr
    other: Expr

    def evaluate(self, env: Mapping[str, Scalar]) -> Scalar | Unknown:
        t = self.test.evaluate(env)
        if isinstance(t, Unknown):
            return t
        return (self.then if t else self.other).evaluate(env)

    def free_symbols(self) -> frozenset[str]:
        return self.test.free_symbols() | self.then.free_symbols() | self.other.free_symbols()

    def __str__(self) -> str:
        return f"({self.then} if {self.test} else {self.other})"

    def chosen(self, env: Mapping[str, Scalar]) -> Expr:
        """The branch this config takes (itself while the test is unknown), for shape labels."""
        t = self.test.evaluate(env)
        if isinstance(t, Unknown):
            return self
        branch = self.then if t else self.other
        return branch.chosen(env) if isinstance(branch, CondExpr) else branch


def shown(dim: Expr, env: Mapping[str, Scalar]) -> Expr:
    """A shape dimension for messages: a constexpr choice shows the branch this config takes."""
    return dim.chosen(env) if isinstance(dim, CondExpr) else dim


def select(test: Expr, then: Expr, other: Expr) -> Expr:
    """Build `then if test else other`, folding a known test and equal branches."""
    if then == other:
        return then
    if isinstance(test, Const):
        return then if test.value else other
    return CondExpr(test, then, other)


def binary(op: str, left: Expr, right: Expr) -> Expr:
    """Build `left op right`, folding constants and identities (`x - 0`, `x * 1`) so shapes read well."""
    if isinstance(left, Const) and isinstance(right, Const):
        value = BinExpr(op, left, right).evaluate({})
        if not isinstance(value, Unknown):
            return Const(value)
    if isinstance(right, Const) and ((op in ("+", "-") and right.value == 0) or (op in ("*", "//") and right.value == 1)):
        return left
    if isinstance(left, Const) and ((op == "+" and left.value == 0) or (op == "*" and left.value == 1)):
        return right
    return BinExpr(op, left, right)


def unary(op: str, operand: Expr) -> Expr:
    if isinstance(operand, Const):
        value = UnExpr(op, operand).evaluate({})
        if not isinstance(value, Unknown):
            return Const(value)
    return UnExpr(op, operand)


def as_int(value: Scalar | Unknown) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value)
