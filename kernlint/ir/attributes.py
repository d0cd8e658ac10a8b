"""Typed attributes of ops: one frozen class per op kind (or per group of kinds that share them).

`Op.attrs` holds an instance of the class `ATTRIBUTES` names for the op's kind. `Lowerer.emit` builds it
from its keyword arguments with `make_attrs`, which rejects a keyword the kind does not declare (an
internal error: a typo or an attribute no analysis would read). Every field has a default, the neutral
value of an attribute the lowering did not give (`carried` is `()`, `fn` is None). Readers take the typed view through `Op.for_attrs()`, `Op.elementwise_attrs()` … (each asserts the
kind), so mypy checks every attribute name and type.

`OpAttrs` is the base of every class and carries the two compiler hints Triton lets a kernel attach to any
value after it is made (`tl.multiple_of`, `tl.max_contiguous`): the lowering records them on the producing
op with `with_hint` (a new frozen instance; ops are immutable).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from kernlint.ir.kinds import OpKind
from kernlint.ir.symbolic import Expr

if TYPE_CHECKING:
    from kernlint.ir.nodes import Carried, Value


@dataclass(frozen=True, slots=True)
class OpAttrs:
    """Attributes every op may have; the whole attribute set of kinds that declare nothing else (cast, view,
    reshape, trans, join, split, store, atomic, make_block_ptr, advance, make_descriptor)."""

    # `tl.multiple_of(x, n)` / `tl.max_contiguous(x, n)` on the op's result: the hint as written (a constexpr
    # value or a tuple of them); None when the kernel gave none
    multiple_of: Any = None
    max_contiguous: Any = None

    def with_hint(self, name: str, hint: Any) -> OpAttrs:
        """These attributes with one compiler hint set (`multiple_of` or `max_contiguous`)."""
        if name not in ("multiple_of", "max_contiguous"):
            raise ValueError(f"unknown compiler hint {name!r}")
        return dataclasses.replace(self, **{name: hint})


@dataclass(frozen=True, slots=True)
class ParamAttrs(OpAttrs):
    index: int = 0                     # position in the kernel's signature


@dataclass(frozen=True, slots=True)
class ProgramIdAttrs(OpAttrs):
    fn: str | None = None              # "program_id" or "num_programs"; None for Helion's grid index
    axis: int | None = None            # None when not a constant


@dataclass(frozen=True, slots=True)
class ArangeAttrs(OpAttrs):
    start: Expr | None = None          # None for a Helion tile's index range
    end: Expr | None = None


@dataclass(frozen=True, slots=True)
class FullAttrs(OpAttrs):
    zeros: bool = False                # tl.zeros / hl.zeros (an accumulator's initial value)


@dataclass(frozen=True, slots=True)
class ElementwiseAttrs(OpAttrs):
    fn: str | None = None              # "+", "where", "exp", "hl.xyz", "cdiv", a Helion tile attribute …
    scalar: Expr | None = None         # the constexpr operand of a binary op (`x * 1`, `1 - x`)
    scalar_first: bool = False         # … written first (`1 - x`)
    varies: bool = False               # never loop-invariant (a Helion tile's offsets)
    unscaled: bool = False             # Helion offsets whose stride factor the graph leaves out
    choice: Expr | None = None         # `a if CONSTEXPR else b`: the constexpr condition
    sides: tuple[Any, Any] = (None, None)  # … and its two branches (a Value, a constexpr Expr or None)


@dataclass(frozen=True, slots=True)
class LoadAttrs(OpAttrs):
    block_ptr: bool = False            # through a block pointer or tensor descriptor
    masked: bool = False


@dataclass(frozen=True, slots=True)
class DotAttrs(OpAttrs):
    M: Expr | None = None              # the product's dimensions as written (a: M×K, b: K×N)
    N: Expr | None = None
    K: Expr | None = None
    a_dtype: str | None = None
    b_dtype: str | None = None
    input_precision: Expr | None = None  # the constexpr keyword, when given
    allow_tf32: Expr | None = None


@dataclass(frozen=True, slots=True)
class ReduceAttrs(OpAttrs):
    axis: int | None = None            # None: over the whole tile
    fn: str | None = None              # "sum", "max", "argmax", "reduce" …
    in_shape: tuple[Expr, ...] = ()    # the reduced operand's shape


@dataclass(frozen=True, slots=True)
class AxisAttrs(OpAttrs):
    """scan and gather: the axis they run along."""

    axis: int | None = None


@dataclass(frozen=True, slots=True)
class ForAttrs(OpAttrs):
    loop: str = "range"                # "range", "static_range" or "while"
    num_stages: Expr | None = None     # `tl.range(..., num_stages=)` when given
    carried: tuple[Carried, ...] = ()
    bounds: tuple[Expr | None, ...] = ()         # start, stop, step as constexpr expressions (None: run-time)
    flatten: Expr | bool = False       # `tl.range(..., flatten=)`
    rebinds_outer: bool = True         # the body assigns a name bound before the loop
    iv: Value | None = None            # the induction variable
    bound_values: tuple[Value | None, ...] = ()  # the run-time bounds in place
    # hints set on block arguments in the body: block argument id → {"multiple_of": hint, ...}
    arg_hints: Mapping[int, Mapping[str, Any]] = field(default_factory=lambda: MappingProxyType({}))
    steering: tuple[Value, ...] = ()   # run-time values that steer the loop (bounds, a while condition)


@dataclass(frozen=True, slots=True)
class IfAttrs(OpAttrs):
    cond: Expr | None = None           # the condition when it is a constexpr expression left undecided
    merges: tuple[tuple[Value, Value, Value], ...] = ()  # (merged result, then value, else value)


# OpKind → the attribute class of its ops: every kind has one (tests/ir/test_attributes.py checks it)
ATTRIBUTES: Mapping[OpKind, type[OpAttrs]] = MappingProxyType({
    OpKind.PARAM: ParamAttrs, OpKind.PROGRAM_ID: ProgramIdAttrs, OpKind.ARANGE: ArangeAttrs,
    OpKind.FULL: FullAttrs, OpKind.ELEMENTWISE: ElementwiseAttrs, OpKind.CAST: OpAttrs,
    OpKind.VIEW: OpAttrs, OpKind.RESHAPE: OpAttrs, OpKind.TRANS: OpAttrs, OpKind.JOIN: OpAttrs,
    OpKind.SPLIT: OpAttrs, OpKind.GATHER: AxisAttrs, OpKind.LOAD: LoadAttrs, OpKind.STORE: OpAttrs,
    OpKind.ATOMIC: OpAttrs, OpKind.DOT: DotAttrs, OpKind.REDUCE: ReduceAttrs, OpKind.SCAN: AxisAttrs,
    OpKind.MAKE_BLOCK_PTR: OpAttrs, OpKind.ADVANCE: OpAttrs, OpKind.MAKE_DESCRIPTOR: OpAttrs,
    OpKind.FOR: ForAttrs, OpKind.IF: IfAttrs,
})


def make_attrs(kind: OpKind, values: Mapping[str, Any]) -> OpAttrs:
    """The attributes of an op of `kind` from keyword values; a key the kind does not declare is an internal
    error (ValueError naming the kind and the key)."""
    cls = ATTRIBUTES[kind]
    declared = {f.name for f in dataclasses.fields(cls)}
    for key in values:
        if key not in declared:
            raise ValueError(f"lowering gave a {kind} op the attribute {key!r}, which {cls.__name__} does not "
                             f"declare (kernlint/ir/attributes.py)")
    return cls(**values)
