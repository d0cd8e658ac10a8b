"""Data types of the Helion lowering: tensors and tiles of the host code, tunable block-size slots,
reduction dimensions, and the resulting HelionIR."""
from __future__ import annotations

from dataclasses import dataclass, field

from kernlint.ir.nodes import KernelIR, Value
from kernlint.ir.symbolic import Expr

TILE_FN = "helion.language.tile"
GRID_FN = "helion.language.grid"
TORCH_DTYPES = {
    "float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32",
    "float64": "fp64", "double": "fp64", "int8": "i8", "uint8": "u8", "int16": "i16", "int32": "i32",
    "int": "i32", "int64": "i64", "long": "i64", "bool": "i1", "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5",
}
_ALLOC = {"empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like",
          "empty_strided", "new_empty", "new_zeros", "new_ones", "new_full"}


@dataclass(frozen=True, slots=True)
class HTensor:
    """A host tensor seen from device code: a pointer parameter of the generated Triton kernel."""

    name: str
    ptr: Value
    dtype: str


@dataclass(frozen=True, slots=True)
class HTile:
    key: int
    block: Expr            # Sym("block_size_0"), Const(64) for a fixed block_size, or Sym("rdim_0")
    name: str


@dataclass(frozen=True, slots=True)
class Slot:
    symbol: str
    line: int
    extent: str            # source text of the tiled extent, for messages
    fixed: int | None = None


@dataclass(frozen=True, slots=True)
class RDim:
    symbol: str
    extent: Expr
    extent_text: str
    line: int


@dataclass(frozen=True, slots=True)
class HelionIR(KernelIR):
    slots: tuple[Slot, ...] = ()          # every hl.tile dimension in allocation order (fixed ones too)
    rdims: tuple[RDim, ...] = ()
    extents: tuple[str, ...] = field(default=())   # host-side size symbols (`m`, `x.size(1)`)
    specialized: frozenset[str] = frozenset()       # extents passed through hl.specialize

    @property
    def tunable_slots(self) -> tuple[Slot, ...]:
        return tuple(s for s in self.slots if s.fixed is None)
