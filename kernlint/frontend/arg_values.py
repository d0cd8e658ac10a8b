"""`--arg NAME=VALUE` text, one parser for every command (check, explain, recommend, calibrate) and for
`[tool.kernlint] args`.

A value is one of:
  a pointer type        `*fp16`, `*bf16:16`, `*fp32:0` (Triton's AOT spelling; `:0` drops the alignment hint)
  a scalar type         `i32`, `i64:0`, `fp32` (also `int32`, `float32`, ...)
  a dtype object        `tl.int32`, `triton.language.float8e4nv`, `torch.float16`: the value of a dtype-valued
                        constexpr (`ACC_DTYPE: tl.constexpr`); a bare type name given to a constexpr means the same
  an example value      `1`, `4096`, `1e-5`, `True`, `False`
  None                  an argument passed as None: Triton makes it a constexpr None, so `if X is not None:`
                        is decided when the kernel is compiled
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Triton's short dtype names (the spelling of its signatures: `*fp16`, `i32`)
SHORT_DTYPES = frozenset({
    "i1", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64",
    "fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16", "fp16", "bf16", "fp32", "tf32", "fp64"})

# Long names (triton.language attribute names, torch dtype names) → short names
DTYPE_ALIASES: dict[str, str] = {
    "float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32",
    "float64": "fp64", "double": "fp64", "int1": "i1", "bool": "u1", "int8": "i8", "int16": "i16",
    "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float8e4nv": "fp8e4nv", "float8e5": "fp8e5", "float8e4b15": "fp8e4b15", "float8e4b8": "fp8e4b8",
    "float8e5b16": "fp8e5b16", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5",
    "float8_e4m3fnuz": "fp8e4b8", "float8_e5m2fnuz": "fp8e5b16"}

# prefixes that make a name a dtype object rather than a type spelling
_DTYPE_MODULES = ("tl.", "triton.language.", "torch.", "core.")


class ArgValueError(ValueError):
    """An `--arg` value kernlint cannot read (the message names the argument)."""


@dataclass(frozen=True, slots=True)
class DtypeValue:
    """A dtype passed as a constexpr's value (`ACC_DTYPE=tl.int32`); `name` is the short name (`i32`)."""

    name: str

    def __repr__(self) -> str:
        return f"tl.{next((k for k, v in DTYPE_ALIASES.items() if v == self.name), self.name)}"


@dataclass(frozen=True, slots=True)
class ArgValue:
    """One parsed `--arg` value. Exactly one of: a type (`dtype` set, `pointer` for `*T`), a dtype object
    (`dtype` set, `dtype_object`), an example value or None (`is_value`)."""

    text: str
    dtype: str | None = None
    pointer: bool = False
    hint: str | None = None          # "16" or "0" after a colon
    dtype_object: bool = False
    is_value: bool = False
    value: Any = None                # the example value (int, float, bool) or None

    @property
    def is_none(self) -> bool:
        return self.is_value and self.value is None

    def spec(self) -> Any:
        """The compile spec (calibrate's form): `*fp16:16`, `i32`, an example value, or a DtypeValue."""
        if self.is_value:
            return self.value
        if self.dtype_object:
            return DtypeValue(self.dtype or "")
        return ("*" if self.pointer else "") + (self.dtype or "") + (f":{self.hint}" if self.hint else "")

    def lint_text(self) -> str:
        """The canonical text the static analysis keeps (`*bfloat16:16` → `*bf16`; alignment hints are for
        compiles only)."""
        if self.is_value:
            return self.text
        if self.dtype_object:
            return repr(DtypeValue(self.dtype or ""))
        return ("*" if self.pointer else "") + (self.dtype or "")

    def constexpr_value(self) -> Any:
        """What a `tl.constexpr` parameter holds when given this: the example value, None, or the dtype (a bare
        type name for a constexpr is the dtype it names); a pointer type is no constexpr value."""
        if self.is_value:
            return self.value
        if self.pointer:
            raise ArgValueError(f"{self.text!r} is a pointer type; a tl.constexpr takes a value (64, True, None) "
                                f"or a dtype (tl.float32)")
        return DtypeValue(self.dtype or "")


def _short(name: str) -> str | None:
    name = DTYPE_ALIASES.get(name, name)
    return name if name in SHORT_DTYPES or name == "u1" else None


def parse_arg_value(name: str, text: str) -> ArgValue:
    """`--arg NAME=TEXT`'s value; ArgValueError naming the argument when it is none of the forms above."""
    raw = str(text).strip()
    if raw in ("True", "False"):
        return ArgValue(raw, is_value=True, value=raw == "True")
    if raw == "None":
        return ArgValue(raw, is_value=True, value=None)
    for number in (lambda v: int(v, 0), float):
        try:
            return ArgValue(raw, is_value=True, value=number(raw))  # type: ignore[no-untyped-call]
        except ValueError:
            pass
    for prefix in _DTYPE_MODULES:
        if raw.startswith(prefix):
            short = _short(raw[len(prefix):])
            if short is None:
                raise ArgValueError(f"--arg {name}={text}: unknown dtype {raw!r} (expected e.g. tl.float32, "
                                    f"tl.int8, tl.float8e4nv)")
            return ArgValue(raw, dtype=short, dtype_object=True)
    base, sep, hint = raw.partition(":")
    if sep and hint not in ("0", "16"):
        raise ArgValueError(f"--arg {name}={text}: unknown hint ':{hint}' (use ':16' or ':0')")
    pointer = base.startswith("*")
    short = _short(base[1:] if pointer else base)
    if short is None:
        raise ArgValueError(f"--arg {name}={text}: unknown type {base!r} (expected *DTYPE, DTYPE, a dtype such as "
                            f"tl.int32, None, or an example value; DTYPE one of {', '.join(sorted(SHORT_DTYPES))})")
    return ArgValue(raw, dtype=short, pointer=pointer, hint=hint if sep else None)


def parse_arg_items(items: list[str]) -> dict[str, ArgValue]:
    """`NAME=VALUE` items → {name: value}; ArgValueError on a malformed one."""
    out: dict[str, ArgValue] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise ArgValueError(f"bad --arg {item!r}: expected NAME=VALUE, e.g. a_ptr=*bf16, BIAS=None, "
                                f"ACC_DTYPE=tl.float32")
        out[name.strip()] = parse_arg_value(name.strip(), text)
    return out
