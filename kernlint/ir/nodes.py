"""Immutable dataflow graph of one kernel.

Values are tiles (or scalars, shape `()`) with symbolic shapes; ops consume and produce values; loops and
ifs are structured ops with nested regions (like MLIR's scf dialect), which keeps liveness simple and exact
for the structured control flow Triton allows.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from kernlint.ir.symbolic import Expr

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


class OpKind(str, Enum):
    """What an op is: every kind the lowering emits (`Lowerer.emit` converts its `kind` and rejects any other).

    A `str` enum so a kind still prints, formats, hashes and serialises as its name (`f"{op.kind}"` is `load`,
    as `enum.StrEnum` does on Python 3.11+; this runs on 3.10 too); compare with the members, not strings.
    """

    PARAM = "param"                    # a kernel parameter (pointer or scalar) entering the graph
    PROGRAM_ID = "program_id"          # tl.program_id / tl.num_programs (attrs fn, axis); Helion's grid index
    ARANGE = "arange"                  # tl.arange; a Helion tile's index range
    FULL = "full"                      # tl.full / tl.zeros / *_like, hl.zeros / hl.full: a constant tile
    ELEMENTWISE = "elementwise"        # arithmetic, comparisons, math and other per-element functions (attr fn)
    CAST = "cast"                      # .to(dtype), tl.cast and implicit conversions (reduction inputs)
    VIEW = "view"                      # the same elements seen with another shape: x[:, None], tl.expand_dims,
                                       # tl.broadcast_to, implicit broadcasts
    RESHAPE = "reshape"                # tl.reshape / tl.view (and the reshape after tl.interleave's join)
    TRANS = "trans"                    # tl.trans / tl.permute / .T
    JOIN = "join"                      # tl.join / tl.interleave
    SPLIT = "split"                    # tl.split: one op per half
    GATHER = "gather"                  # tl.gather
    LOAD = "load"                      # tl.load, a descriptor's .load, a Helion tensor read
    STORE = "store"                    # tl.store, a descriptor's .store, a Helion tensor write
    ATOMIC = "atomic"                  # tl.atomic_* (attr fn)
    DOT = "dot"                        # tl.dot / tl.dot_scaled / hl.dot: a tensor-core or FMA matrix product
    REDUCE = "reduce"                  # tl.sum / max / min / argmax / reduce ...: one op per call (attrs axis, fn)
    SCAN = "scan"                      # tl.cumsum / cumprod / associative_scan
    MAKE_BLOCK_PTR = "make_block_ptr"  # tl.make_block_ptr
    ADVANCE = "advance"                # tl.advance of a block pointer
    MAKE_DESCRIPTOR = "make_descriptor"  # tl.make_tensor_descriptor (TMA)
    FOR = "for"                        # a loop (range, static_range, while) with one region and carried values
    IF = "if"                          # a run-time or undecided `if`: two regions, merged results

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


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
    attrs: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    regions: tuple[Region, ...] = ()
    results: tuple[Value, ...] = ()    # extra results (if-merges, split, loop results)

    def all_results(self) -> tuple[Value, ...]:
        return ((self.result,) if self.result is not None else ()) + self.results


@dataclass(frozen=True, slots=True)
class Unmodelled:
    line: int
    construct: str                     # what was not understood, for the KL002 diagnostic


# KernelIR.cache key of the producer/user index (a tuple, so no analysis's string key can collide with it)
_DEF_USE = ("graph", "def-use")


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
    # analysis results that depend only on this IR and a constexpr binding (analysis/estimate.py)
    cache: dict[Any, Any] = field(default_factory=dict, hash=False, compare=False, repr=False)

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
            axis = op.attrs.get("axis")
            return f"tl.{op.attrs.get('fn', 'program_id')}({'' if axis is None else axis})"
        if op.kind in (OpKind.VIEW, OpKind.RESHAPE) and op.operands:
            return self.describe(op.operands[0], depth)
        if op.kind == OpKind.CAST and op.operands:
            return f"{self.describe(op.operands[0], depth - 1)}.to({value.dtype})"
        fn = op.attrs.get("fn")
        if op.kind == OpKind.ELEMENTWISE and fn in ("+", "-", "*", "/", "//", "%") and len(op.operands) == 2:
            a, b = (self.describe(v, depth - 1) for v in op.operands)
            return f"({a} {fn} {b})"
        if op.kind == OpKind.ELEMENTWISE and fn in ("+", "-", "*", "/", "//", "%") and "scalar" in op.attrs:
            a, b = self.describe(op.operands[0], depth - 1), str(op.attrs["scalar"])
            return f"({b} {fn} {a})" if op.attrs.get("scalar_first") else f"({a} {fn} {b})"
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
