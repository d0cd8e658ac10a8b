"""Immutable dataflow graph of one kernel.

Values are tiles (or scalars, shape `()`) with symbolic shapes; ops consume and produce values; loops and
ifs are structured ops with nested regions (like MLIR's scf dialect), which keeps liveness simple and exact
for the structured control flow Triton allows.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kernlint.ir.attributes import (ArangeAttrs, AxisAttrs, DotAttrs, ElementwiseAttrs, ForAttrs, FullAttrs,
                                    IfAttrs, LoadAttrs, OpAttrs, ParamAttrs, ProgramIdAttrs, ReduceAttrs)
from kernlint.ir.cache_keys import Analysis, CacheKey
from kernlint.ir.kinds import OpKind as OpKind   # re-exported: kernlint.ir.nodes.OpKind is the usual import
from kernlint.ir.symbolic import Expr

_A = TypeVar("_A", bound=OpAttrs)

# Element sizes in bytes; "ptr" values are 64-bit addresses whatever they point to.
DTYPE_BYTES: dict[str, float] = {
    "i1": 1, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "i32": 4, "u32": 4, "i64": 8, "u64": 8,
    "fp8e4nv": 1, "fp8e5": 1, "fp8e4b15": 1, "fp8e4b8": 1, "fp8e5b16": 1,
    "fp16": 2, "bf16": 2, "fp32": 4, "tf32": 4, "fp64": 8,
}


def is_pointer(dtype: str) -> bool:
    return dtype.startswith("ptr<") or dtype.startswith("blockptr<") or dtype.startswith("desc<")


def pointee(dtype: str) -> str:
    """`ptr<fp16>` → `fp16`; anything else unchanged."""
    if "<" in dtype and dtype.endswith(">"):
        return dtype[dtype.index("<") + 1: -1]
    return dtype


def element_bytes(dtype: str) -> float:
    if is_pointer(dtype):
        return 8
    return DTYPE_BYTES.get(dtype, 4)


@dataclass(frozen=True, slots=True)
class Value:
    id: int
    shape: tuple[Expr, ...]
    dtype: str
    name: str = ""

    @property
    def is_tile(self) -> bool:
        return len(self.shape) > 0

    def __str__(self) -> str:
        dims = "x".join(str(d) for d in self.shape)
        return f"%{self.id}{':' + self.name if self.name else ''}<{dims + 'x' if dims else ''}{self.dtype}>"


@dataclass(frozen=True, slots=True)
class Region:
    ops: tuple["Op", ...]


@dataclass(frozen=True, slots=True)
class Carried:
    """A loop-carried variable: value entering the loop, block argument, value yielded by the body."""

    name: str
    init: Value
    arg: Value
    yielded: Value


@dataclass(frozen=True, slots=True)
class Op:
    id: int
    kind: OpKind
    result: Value | None
    operands: tuple[Value, ...]
    line: int
    # the attributes of its kind (kernlint/ir/attributes.py: ATTRIBUTES names the class of each kind); read
    # them through the typed accessors below, which assert the kind
    attrs: OpAttrs = field(default_factory=OpAttrs, hash=False, compare=False)
    regions: tuple[Region, ...] = ()
    results: tuple[Value, ...] = ()    # extra results (if-merges, split, loop results)

    def all_results(self) -> tuple[Value, ...]:
        return ((self.result,) if self.result is not None else ()) + self.results

    def _typed(self, cls: type[_A], *kinds: OpKind) -> _A:
        if self.kind not in kinds or not isinstance(self.attrs, cls):
            raise TypeError(f"{cls.__name__} asked of a {self.kind} op (line {self.line})")
        return self.attrs

    def param_attrs(self) -> ParamAttrs:
        return self._typed(ParamAttrs, OpKind.PARAM)

    def program_id_attrs(self) -> ProgramIdAttrs:
        return self._typed(ProgramIdAttrs, OpKind.PROGRAM_ID)

    def arange_attrs(self) -> ArangeAttrs:
        return self._typed(ArangeAttrs, OpKind.ARANGE)

    def full_attrs(self) -> FullAttrs:
        return self._typed(FullAttrs, OpKind.FULL)

    def elementwise_attrs(self) -> ElementwiseAttrs:
        return self._typed(ElementwiseAttrs, OpKind.ELEMENTWISE)

    def load_attrs(self) -> LoadAttrs:
        return self._typed(LoadAttrs, OpKind.LOAD)

    def dot_attrs(self) -> DotAttrs:
        return self._typed(DotAttrs, OpKind.DOT)

    def reduce_attrs(self) -> ReduceAttrs:
        return self._typed(ReduceAttrs, OpKind.REDUCE)

    def axis_attrs(self) -> AxisAttrs:
        """scan and gather."""
        return self._typed(AxisAttrs, OpKind.SCAN, OpKind.GATHER)

    def for_attrs(self) -> ForAttrs:
        return self._typed(ForAttrs, OpKind.FOR)

    def if_attrs(self) -> IfAttrs:
        return self._typed(IfAttrs, OpKind.IF)

    @property
    def fn(self) -> str | None:
        """The function of an elementwise, reduce or program_id op (`+`, `exp`, `sum`, `num_programs`);
        None for any other kind."""
        if self.kind == OpKind.ELEMENTWISE:
            return self.elementwise_attrs().fn
        if self.kind == OpKind.REDUCE:
            return self.reduce_attrs().fn
        if self.kind == OpKind.PROGRAM_ID:
            return self.program_id_attrs().fn
        return None

    @property
    def carried(self) -> tuple[Carried, ...]:
        """A loop's carried variables; () for any other kind."""
        return self.for_attrs().carried if self.kind == OpKind.FOR else ()

    @property
    def merges(self) -> tuple[tuple[Value, Value, Value], ...]:
        """An `if`'s (merged result, then value, else value) triples; () for any other kind."""
        return self.if_attrs().merges if self.kind == OpKind.IF else ()


@dataclass(frozen=True, slots=True)
class Unmodelled:
    line: int
    construct: str                     # what was not understood, for the KL002 diagnostic


# KernelIR.cache key of the producer/user index
_DEF_USE = Analysis.DEF_USE.key()


@dataclass(frozen=True, slots=True)
class KernelIR:
    name: str
    body: Region
    constexprs: tuple[str, ...]
    pointer_params: dict[str, str]     # param name → assumed pointee dtype
    assumptions: tuple[str, ...]       # defaults used ("x_ptr: *fp16 (default)")
    unmodelled: tuple[Unmodelled, ...]
    value_count: int
    value_names: dict[int, str] = field(default_factory=dict, hash=False, compare=False)
    returned: tuple[Value, ...] = ()   # what a jit helper analysed on its own returns (kept as if stored)
    # The constexprs whose `if`s (statements, `a if C else b`) were left undecided: both branches are in this
    # graph, and names bound differently in them are merged, which loses what a branch knew at compile time
    # (`seqlen = MAX_SEQLEN` against a loaded length: the merge is a run-time value, so loop bounds built
    # from it are unknown). `specialise(binding)` lowers the kernel again with those constexprs bound, as
    # Triton's code generator does per config (analysis/estimate.py uses it).
    branch_symbols: frozenset[str] = frozenset()
    specialise: Callable[[Mapping[str, Any]], "KernelIR"] | None = field(default=None, hash=False, compare=False,
                                                                         repr=False)
    # pointer parameters whose element type nothing stated or implied: they took the default (fp16), so a
    # finding that depends on it is only as sure as that assumption (KL101 is then a warning)
    assumed_pointees: tuple[str, ...] = ()
    # analysis results that depend only on this IR and a constexpr binding (analysis/estimate.py), under the
    # keys kernlint/ir/cache_keys.py declares
    cache: dict[CacheKey, Any] = field(default_factory=dict, hash=False, compare=False, repr=False)

    def name_of(self, value: Value) -> str:
        """The source variable a value was first bound to, for messages."""
        return value.name or self.value_names.get(value.id, f"%{value.id}")

    def producers(self) -> Mapping[int, Op]:
        """Value id → the op that defines it, over the whole graph (ops in loop and `if` regions included).
        Built with `users` in one walk of the graph and kept in `cache`: read it, do not change it."""
        return self._def_use()[0]

    def users(self) -> Mapping[int, tuple[Op, ...]]:
        """Value id → the ops that read it as an operand, each once, in program order (a loop's carried
        values reach the loop as its operands; its body reads the block arguments). Same walk as `producers`."""
        return self._def_use()[1]

    def producer(self, value: Value) -> Op | None:
        """The op that defines `value`; None for a loop's block argument or induction variable."""
        return self._def_use()[0].get(value.id)

    def _def_use(self) -> tuple[dict[int, Op], dict[int, tuple[Op, ...]]]:
        # one pass over every op; two threads may both build it, and store equal maps
        index = self.cache.get(_DEF_USE)
        if index is None:
            producers: dict[int, Op] = {}
            users: dict[int, list[Op]] = {}
            for op, _ in self.walk():
                for r in op.all_results():
                    producers[r.id] = op
                for v in dict.fromkeys(v.id for v in op.operands):
                    users.setdefault(v, []).append(op)
            index = self.cache[_DEF_USE] = (producers, {k: tuple(v) for k, v in users.items()})
        return index

    def describe(self, value: Value, depth: int = 3) -> str:
        """A value for messages: its source variable, else the expression that made it (`tl.program_id(1)`,
        `pid.to(i64)`, `(a + b)`; broadcasts and views show their operand), `%id` only past `depth`."""
        name = value.name or self.value_names.get(value.id)
        if name:
            return name
        op = self.producer(value)
        if op is None or depth <= 0:
            return f"%{value.id}"
        if op.kind == OpKind.PROGRAM_ID:
            pid = op.program_id_attrs()
            return f"tl.{pid.fn or 'program_id'}({'' if pid.axis is None else pid.axis})"
        if op.kind in (OpKind.VIEW, OpKind.RESHAPE) and op.operands:
            return self.describe(op.operands[0], depth)
        if op.kind == OpKind.CAST and op.operands:
            return f"{self.describe(op.operands[0], depth - 1)}.to({value.dtype})"
        if op.kind != OpKind.ELEMENTWISE:
            return f"%{value.id}"
        attrs = op.elementwise_attrs()
        fn = attrs.fn
        if fn in ("+", "-", "*", "/", "//", "%") and len(op.operands) == 2:
            a, b = (self.describe(v, depth - 1) for v in op.operands)
            return f"({a} {fn} {b})"
        if fn in ("+", "-", "*", "/", "//", "%") and attrs.scalar is not None:
            a, b = self.describe(op.operands[0], depth - 1), str(attrs.scalar)
            return f"({b} {fn} {a})" if attrs.scalar_first else f"({a} {fn} {b})"
        return f"%{value.id}"

    def walk(self) -> list[tuple[Op, int]]:
        """All ops in program order with their loop depth."""
        out: list[tuple[Op, int]] = []

        def visit(region: Region, depth: int) -> None:
            for op in region.ops:
                out.append((op, depth))
                for sub in op.regions:
                    visit(sub, depth + (1 if op.kind == OpKind.FOR else 0))

        visit(self.body, 0)
        return out
