"""Triton dtype names and the promotion rules the graph needs (a simplified `triton.language.semantic`)."""
from __future__ import annotations

from kernlint.ir.nodes import is_pointer

# Qualified names of Triton dtype objects → the short names Triton prints in signatures ("*fp16").
DTYPE_NAMES: dict[str, str] = {
    "float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64", "float8e4nv": "fp8e4nv",
    "float8e5": "fp8e5", "float8e4b15": "fp8e4b15", "float8e4b8": "fp8e4b8", "float8e5b16": "fp8e5b16",
    "int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float": "fp32", "double": "fp64",
}

_FLOAT_RANK = {"fp8e4nv": 1, "fp8e5": 1, "fp8e4b15": 1, "fp8e4b8": 1, "fp8e5b16": 1,
               "fp16": 2, "bf16": 2, "fp32": 3, "tf32": 3, "fp64": 4}
_INT_RANK = {"i1": 0, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "i32": 3, "u32": 3, "i64": 4, "u64": 4}


def dtype_from_qualname(name: str) -> str | None:
    for prefix in ("triton.language.core.", "triton.language."):
        if name.startswith(prefix):
            return DTYPE_NAMES.get(name[len(prefix):])
    return None


def is_float(dtype: str) -> bool:
    return dtype in _FLOAT_RANK


def is_int(dtype: str) -> bool:
    return dtype in _INT_RANK


def promote(a: str | None, b: str | None) -> str:
    """Result dtype of a binary arithmetic op; `None` stands for a Python scalar (weakly typed)."""
    if a is None:
        return b or "i32"
    if b is None:
        return a
    if is_pointer(a):
        return a
    if is_pointer(b):
        return b
    if is_float(a) and is_float(b):
        if a != b and _FLOAT_RANK[a] == _FLOAT_RANK[b]:
            return "fp32"  # fp16 op bf16 → fp32, as Triton does
        return a if _FLOAT_RANK[a] >= _FLOAT_RANK[b] else b
    if is_float(a):
        return a
    if is_float(b):
        return b
    return a if _INT_RANK.get(a, 3) >= _INT_RANK.get(b, 3) else b


def reduction_input_dtype(fn: str, dtype: str, requested: str | None = None) -> str:
    """The dtype Triton converts a reduction's or scan's input to before `tt.reduce`/`tt.scan`
    (triton/language/standard.py, Triton 3.9):
    * `tl.max`/`tl.min` (without `return_indices`): floats narrower than 32 bits become fp32, integers
      narrower than 32 bits i32 — so `tl.max(tl.abs(x_fp16), axis=1)` reduces, and returns, fp32;
    * `tl.sum`/`tl.cumsum`/`tl.cumprod` (`_pick_sum_dtype`): the `dtype=` argument if given, else integers
      narrower than 32 bits become i32/u32 with their sign; floats keep their type (Triton 3.6 also turned
      bf16 into fp32 first: `_promote_bfloat16_to_float32`; the model follows 3.9, kernlint/calibrate/
      versions.py);
    * anything else (`tl.reduce` with a user combine function, argmax/argmin, xor_sum) keeps its type."""
    if fn in ("max", "min"):
        if dtype in _FLOAT_RANK and _FLOAT_RANK[dtype] < _FLOAT_RANK["fp32"]:
            return "fp32"
        if dtype in _INT_RANK and _INT_RANK[dtype] < _INT_RANK["i32"]:
            return "i32"
        return dtype
    if fn in ("sum", "cumsum", "cumprod"):
        if requested is not None:
            return requested
        if dtype in _INT_RANK and _INT_RANK[dtype] < _INT_RANK["i32"]:
            return "u32" if dtype.startswith("u") else "i32"
    return dtype


def python_scalar_dtype(value: object) -> str | None:
    """Python literals are weakly typed in Triton: they adopt the tile's dtype (None here)."""
    return None


def literal_dtype(entry: object) -> str | None:
    """The tensor type a Python literal becomes on its own (not next to a tile): 1.0 → fp32, 1 → i32, True → i1;
    `entry` is a lowering entry (a CV holding a Const), anything else → None."""
    c = getattr(getattr(entry, "expr", None), "value", None)
    return "i1" if isinstance(c, bool) else "fp32" if isinstance(c, float) else "i32" if isinstance(c, int) else None


def parse_arg_type(spec: str) -> str:
    """`*fp16` → `ptr<fp16>`, `i32` → `i32`, `fp32` → `fp32` (Triton's AOT signature syntax)."""
    spec = spec.strip()
    if spec.startswith("*"):
        return f"ptr<{spec[1:].split(':')[0]}>"
    return spec.split(":")[0]


# `tl.rand`/`tl.randn`/`tl.randint(seed, offset)`: one Philox4x32 result per element of `offset`
# (triton/language/random.py: rand and randn give fp32, randint the first uint32 word of randint4x). Lowered
# as `elementwise` ops with `fn` set; the register analysis counts the Philox state they keep live.
PHILOX_RESULTS = {"rand": "fp32", "randn": "fp32", "randint": "u32"}
