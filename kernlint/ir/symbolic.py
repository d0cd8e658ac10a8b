"""Symbolic compile-time expressions over constexpr names (shapes like `BLOCK_M`, `BLOCK_N // 2`).

Shapes in the graph stay symbolic so that one graph serves every config of a sweep; `evaluate` binds the
constexpr values of one config. Construction folds constants so concrete shapes stay cheap.
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Union
from collections.abc import Callable, Mapping

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


# Bounds on what constant folding may build. Real kernels use 64-bit masks and config tables of a few
# thousand entries; `9 ** 9 ** 9`, `1 << 10**10` or `[0] * 10**12` in a file would otherwise take minutes
# and gigabytes to compute. A folded value stays under 2 x 4,096 bits, below CPython's 4,300-digit
# (~14,000-bit) int-to-str limit, so a kept value can always be printed in a message.
MAX_INT_BITS = 4096
MAX_SEQUENCE = 1 << 16   # items of a list/tuple or characters of a string built by `*` or `+`


class TooLarge(ArithmeticError):
    """The folded value would exceed MAX_INT_BITS or MAX_SEQUENCE; callers treat it as unknown."""


def _is_int(v: object) -> bool:
    return isinstance(v, int)


def _bounded_pow(a: Scalar, b: Scalar) -> Scalar:
    # the result has at least b * (bit_length(a) - 1) + 1 bits (and at most twice that)
    if _is_int(a) and _is_int(b) and b > 0 and abs(a) > 1 and b * (abs(a).bit_length() - 1) >= MAX_INT_BITS:  # type: ignore[operator, arg-type]
        raise TooLarge(f"{a} ** {b} is too large to evaluate")
    return a ** b  # type: ignore[operator, no-any-return]


def _bounded_lshift(a: Scalar, b: Scalar) -> Scalar:
    if _is_int(a) and _is_int(b) and a and b > 0 and abs(a).bit_length() + b > MAX_INT_BITS:  # type: ignore[operator, arg-type]
        raise TooLarge(f"{a} << {b} is too large to evaluate")
    return a << b  # type: ignore[operator, no-any-return]


def _bounded_mul(a: Scalar, b: Scalar) -> Scalar:
    if _is_int(a) and _is_int(b):
        if abs(a).bit_length() + abs(b).bit_length() > MAX_INT_BITS:  # type: ignore[arg-type]
            raise TooLarge("product too large to evaluate")
    elif (_is_int(b) and isinstance(a, (str, bytes, list, tuple))) or (_is_int(a) and isinstance(b, (str, bytes, list, tuple))):
        seq, n = (a, b) if _is_int(b) else (b, a)
        if len(seq) * max(0, n) > MAX_SEQUENCE:  # type: ignore[arg-type, operator]
            raise TooLarge(f"repetition of {n} items is too large to evaluate")
    return a * b  # type: ignore[operator, no-any-return]


def _bounded_add(a: Scalar, b: Scalar) -> Scalar:
    if isinstance(a, (str, bytes, list, tuple)) and isinstance(b, (str, bytes, list, tuple)) \
            and len(a) + len(b) > MAX_SEQUENCE:
        raise TooLarge("concatenation too large to evaluate")
    return a + b  # type: ignore[operator, no-any-return]


def _bounded_mod(a: Scalar, b: Scalar) -> Scalar:
    if isinstance(a, (str, bytes)):  # printf-style formatting: "%0999999999d" % 1 builds a gigabyte
        raise TooLarge("string formatting is not evaluated")
    return a % b  # type: ignore[operator]


BINARY_OPS: dict[str, Callable[[Scalar, Scalar], Scalar]] = {
    "+": _bounded_add, "-": operator.sub, "*": _bounded_mul, "/": operator.truediv, "//": _floordiv,
    "%": _bounded_mod, "**": _bounded_pow, "<<": _bounded_lshift, ">>": operator.rshift,
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
