"""Immutable dataflow graph of one kernel.

Values are tiles (or scalars, shape `()`) with symbolic shapes; ops consume and produce values; loops and
ifs are structured ops with nested regions (like MLIR's scf dialect), which keeps liveness simple and exact
for the structured control flow Triton allows.
"""
from __future__ import annotations

from dataclasses import dataclass, field
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
    kind: str                          # "load", "dot", "reduce", "elementwise", "for", "if", ...
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
    # analysis results that depend only on this IR and a constexpr binding (analysis/estimate.py)
    cache: dict[Any, Any] = field(default_factory=dict, hash=False, compare=False, repr=False)

    def name_of(self, value: Value) -> str:
        """The source variable a value was first bound to, for messages."""
        return value.name or self.value_names.get(value.id, f"%{value.id}")

    def walk(self) -> list[tuple[Op, int]]:
        """All ops in program order with their loop depth."""
        out: list[tuple[Op, int]] = []

        def visit(region: Region, depth: int) -> None:
            for op in region.ops:
                out.append((op, depth))
                for sub in op.regions:
                    visit(sub, depth + (1 if op.kind == "for" else 0))

        visit(self.body, 0)
        return out
