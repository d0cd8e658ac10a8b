"""The abstract values a Python name can hold while a kernel is lowered (see kernlint.lowering.lower)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kernlint.frontend.facts import JitFunction
from kernlint.frontend.names import NameResolver
from kernlint.ir.symbolic import Expr


@dataclass(frozen=True, slots=True)
class CV:
    """A compile-time value: a constexpr parameter, a Python literal or arithmetic on them."""

    expr: Expr


@dataclass(frozen=True, slots=True)
class DT:
    dtype: str


@dataclass(frozen=True, slots=True)
class Tup:
    items: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class HelperRef:
    jit: JitFunction


@dataclass(frozen=True, slots=True)
class ModuleRef:
    """A jit helper's home module, so its body resolves names in its own file."""

    names: NameResolver
    constants: Mapping[str, Any]
    module_name: str = ""


HelperIndex = Mapping[str, tuple[JitFunction, ModuleRef]]
