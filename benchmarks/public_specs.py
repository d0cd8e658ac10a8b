"""Compile specs for kernels of public packages, derived from what kernlint extracts (no human in the loop).

Used by benchmarks/public_accuracy.py. Nothing here imports Triton or the packages' modules; it reads the
source with libcst (through kernlint's frontend) and kernlint's analysis of the kernel.

Stated defaults (what a spec falls back to when the kernel's own source says nothing):
  * pointers: ``*fp16`` (16-byte aligned), except
      - a pointer whose loaded value is cast to an integer type (``tl.load(p).to(tl.int64)``) or is used
        inside another load/store address (``tl.load(x + tl.load(idx) * s)``): an index array, ``*i32``
        (or the cast's type for ``.to(tl.int64)``/``.to(tl.int32)``);
      - a pointer stored with an explicit cast (``tl.store(p, v.to(tl.float32))``): that dtype;
  * integer scalars: ``i32`` divisible by 16; a scalar multiplying an ``offs[None, :]`` tile is the unit
    stride ``1`` (kernlint/calibrate/signature.py, as Triton's binder specialises contiguous strides);
  * constexprs: the kernel's own autotune configs, then its launch sites, then parameter defaults
    (kernlint's config points); a block size (a constexpr that shapes a tile in kernlint's IR) that none of
    those gives gets the default set {64 with num_warps 4, 128 with num_warps 8}; a constexpr only used as
    a condition (``if HAS_BIAS:``) gets False; a constexpr used as a dtype (``.to(DTYPE)``, ``dtype=DTYPE``)
    makes the kernel skipped; one bounding a ``tl.static_range`` loop (fully unrolled: 64 copies of a loop
    body can take ptxas many minutes) gets 4 (also as a block size); any other unknown constexpr (problem sizes such as ``D``, ``H``, ``n_rows``
    passed as constexprs, or ``eps``) gets 64.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Callable

import libcst as cst

from kernlint.frontend.facts import JitFunction

DEFAULT_POINTER = "*fp16"
INDEX_POINTER = "*i32"
DEFAULT_BLOCK_SETS: tuple[tuple[int, int], ...] = ((64, 4), (128, 8))   # (block size, num_warps)
DEFAULT_CONSTEXPR = 64   # any other unknown constexpr (a problem size passed as constexpr: D, H, n_rows, ...)
DEFAULT_UNROLL = 4       # an unknown `tl.static_range` bound: Triton unrolls the loop that many times
LAUNCH_KEYS = ("num_warps", "num_stages", "maxnreg")
_TL_DTYPES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64", "int8": "i8",
              "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "uint32": "u32", "int1": "i1",
              "float8e4nv": "fp8e4nv", "float8e5": "fp8e5"}
_JIT_DECORATOR = re.compile(rb"@(triton\.)?jit\b")


def jit_source_files(texts: dict[str, bytes]) -> list[str]:
    """Files that may define jit functions (a cheap text test before parsing: packages have 1000+ files)."""
    return sorted(p for p, data in texts.items() if _JIT_DECORATOR.search(data))


def top_level_jit_functions(text: str) -> list[tuple[str, int]]:
    """(name, def line) of module-level functions decorated with `@triton.jit`/`@jit` (with or without call
    arguments, under `@autotune`/`@heuristics` too); `ast` is fast enough for packages of 1000+ files."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                if name == "jit":
                    out.append((node.name, node.lineno))
                    break
    return out


def launched_names(texts: dict[str, bytes]) -> set[str]:
    """Names subscripted somewhere in the package; a kernel is a jit function launched with a grid
    (`name[grid](...)`), as opposed to a helper only called from other jit functions."""
    return {m.decode() for data in texts.values() if b"[" in data for m in re.findall(rb"(\w+)\[", data)}


# -- pointer dtypes from the kernel's own usage -----------------------------------------------------
def _names_in(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

    node.visit(_V())
    return found


def _split_loads(expr: cst.BaseExpression) -> tuple[list[cst.Call], set[str]]:
    """(the `tl.load` calls in an expression, the names outside them)."""
    loads: list[cst.Call] = []
    names: set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> bool:
            if _call_name(n) == "load":
                loads.append(n)
                return False
            return True

        def visit_Name(self, n: cst.Name) -> None:
            names.add(n.value)

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

    expr.visit(_V())
    return loads, names


def _tl_dtype(node: cst.BaseExpression) -> str | None:
    """`tl.float32` / `tl.int64` → fp32 / i64."""
    if isinstance(node, cst.Attribute):
        return _TL_DTYPES.get(node.attr.value)
    return None


def _call_name(call: cst.Call) -> str:
    f = call.func
    return f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""


def _first_arg(call: cst.Call, keyword: str) -> cst.BaseExpression | None:
    return _arg(call, 0, keyword)


def _arg(call: cst.Call, index: int, keyword: str) -> cst.BaseExpression | None:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == keyword:
            return a.value
    positional = [a for a in call.args if a.keyword is None]
    return positional[index].value if len(positional) > index else None


_BITS = (cst.BitAnd, cst.BitOr, cst.BitXor, cst.LeftShift, cst.RightShift)
_INDEX = (cst.FloorDivide, cst.Modulo)
BITS_POINTER = "*u8"


def integer_operands(node: cst.CSTNode) -> list[tuple[cst.BaseExpression, str]]:
    """(operand, "bits"/"index") of every bitwise/shift and floor-division/modulo operation: a float tensor
    there is a Triton type error, so a loaded value there comes from an integer array."""
    out: list[tuple[cst.BaseExpression, str]] = []

    class _V(cst.CSTVisitor):
        def visit_BinaryOperation(self, n: cst.BinaryOperation) -> None:
            kind = "bits" if isinstance(n.operator, _BITS) else "index" if isinstance(n.operator, _INDEX) else None
            if kind:
                out.extend([(n.left, kind), (n.right, kind)])

    node.visit(_V())
    return out


def integer_params(jit: JitFunction) -> dict[str, str]:
    """Parameters of a jit helper that it uses as integers (bits or index), by name."""
    params = {p.name for p in jit.params if not p.is_constexpr}
    out: dict[str, str] = {}
    for expr, kind in integer_operands(jit.node.body):
        if isinstance(expr, cst.Name) and expr.value in params:
            out.setdefault(expr.value, kind)
    return out


def pointer_dtypes(jit: JitFunction, pointers: set[str],
                   helper_uses: list[tuple[cst.BaseExpression, str]] = ()) -> dict[str, tuple[str, str]]:  # type: ignore[assignment]
    """pointer parameter → (spec, why) for the pointers whose dtype the kernel's body shows;
    ``helper_uses``: (argument expression, "bits"/"index") for arguments a jit helper uses as integers."""
    aliases: dict[str, set[str]] = {}          # local name → pointer params it is derived from
    loads: list[tuple[cst.Call, cst.CSTNode]] = []   # (tl.load call, the expression it sits in)
    stores: list[cst.Call] = []
    assigned: dict[str, cst.BaseExpression] = {}

    class _V(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    assigned[t.target.value] = node.value

        def visit_Call(self, node: cst.Call) -> None:
            name = _call_name(node)
            if name == "load":
                loads.append((node, node))
            elif name in ("store", "atomic_add"):
                stores.append(node)

    jit.node.body.visit(_V())
    # pointer aliases: `x_ptrs = X + offs`, `X += row * stride` keep pointing into X
    for name in pointers:
        aliases[name] = {name}
    for _ in range(4):
        for local, value in assigned.items():
            roots = {p for n in _split_loads(value)[1] for p in aliases.get(n, ()) if n != local}
            if roots and not isinstance(value, cst.Call):
                aliases.setdefault(local, set()).update(roots)

    def roots_of(expr: cst.BaseExpression | None) -> set[str]:
        return {p for n in (_names_in(expr) if expr is not None else set()) for p in aliases.get(n, ())}

    out: dict[str, tuple[str, str]] = {}
    # index arrays: a loaded value that is cast to an int type, or that feeds another address
    loaded_into: dict[str, set[str]] = {}   # local name → pointers whose load it holds
    for local, value in assigned.items():
        inner = value
        cast = None
        if isinstance(inner, cst.Call) and _call_name(inner) == "to" and isinstance(inner.func, cst.Attribute):
            cast = _tl_dtype(_first_arg(inner, "dtype")) if inner.args else None
            inner = inner.func.value
        if isinstance(inner, cst.Call) and _call_name(inner) == "load":
            src = roots_of(_first_arg(inner, "pointer"))
            loaded_into[local] = src
            if cast in ("i32", "i64"):
                for p in src:
                    out.setdefault(p, (f"*{cast}", f"loaded and cast to {cast}: an index array"))
    for _ in range(4):  # `base = seq_start * stride` carries seq_start's source array
        for local, value in assigned.items():
            if local not in loaded_into:
                nested, outside = _split_loads(value)
                src = {p for n in outside for p in loaded_into.get(n, ())}
                src |= {p for call in nested for p in roots_of(_first_arg(call, "pointer"))}
                if src and not any(n in aliases for n in outside):   # an address, not a loaded value
                    loaded_into[local] = src
    for expr, kind in [*integer_operands(jit.node.body), *helper_uses]:
        direct = isinstance(expr, cst.Call) and _call_name(expr) == "load"
        srcs = roots_of(_first_arg(expr, "pointer")) if direct else \
            {p for n in _names_in(expr) for p in loaded_into.get(n, ())}
        for p in srcs:
            out.setdefault(p, (BITS_POINTER, "its loaded value takes bitwise ops: bit-packed data") if kind == "bits"
                           else (INDEX_POINTER, "its loaded value takes // or %: an index array"))
    for call in [c for c, _ in loads] + stores:
        address = _first_arg(call, "pointer")
        for n in _names_in(address) if address is not None else set():
            for p in loaded_into.get(n, ()):
                if p not in roots_of(address):
                    out.setdefault(p, (INDEX_POINTER, "its loaded value indexes another address"))
    for call in stores:
        value = _arg(call, 1, "value")
        if isinstance(value, cst.Call) and _call_name(value) == "to" and value.args:
            dt = _tl_dtype(_first_arg(value, "dtype"))
            if dt is not None:
                for p in roots_of(_first_arg(call, "pointer")):
                    out.setdefault(p, (f"*{dt}", f"stored with .to(tl.{dt})"))
    return {p: v for p, v in out.items() if p in pointers}


def offset_only(jit: JitFunction, pointers: set[str]) -> set[str]:
    """Parameters kernlint takes for pointers that only ever appear as the increment of a pointer update
    (`dout_ptrs -= stride_dout_chunk`), or that are multiplied, divided or shifted (`1 << ell`): offsets,
    since Triton rejects pointer + pointer. (kernlint's pointer finder adds every name of an additive
    right-hand side, AugAssign included.)"""
    total: dict[str, int] = {}
    in_increment: dict[str, int] = {}

    class _V(cst.CSTVisitor):
        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)) and \
                    isinstance(node.target, cst.Name) and node.target.value in pointers | set(aliases):
                for n in _names_in(node.value):
                    in_increment[n] = in_increment.get(n, 0) + 1

        def visit_Name(self, node: cst.Name) -> None:
            total[node.value] = total.get(node.value, 0) + 1

    aliases: dict[str, cst.BaseExpression] = {}

    class _A(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if _names_in(node.value) & pointers:
                aliases.update({t.target.value: node.value for t in node.targets if isinstance(t.target, cst.Name)})

    jit.node.body.visit(_A())
    jit.node.body.visit(_V())
    scaled: set[str] = set()

    class _S(cst.CSTVisitor):  # a pointer is never multiplied, divided or shifted
        def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
            if isinstance(node.operator, (cst.Multiply, *_BITS, *_INDEX)):
                scaled.update(n.value for n in (node.left, node.right) if isinstance(n, cst.Name))

    jit.node.body.visit(_S())
    return {p for p in pointers if (total.get(p) and total.get(p) == in_increment.get(p)) or p in scaled}


# -- constexpr values -----------------------------------------------------------------------------
def used_as_dtype(jit: JitFunction, name: str) -> bool:
    text = cst.Module([]).code_for_node(jit.node.body)
    return re.search(rf"(\.to\(\s*|dtype\s*=\s*){re.escape(name)}\b", text) is not None


def unroll_bound(jit: JitFunction, name: str) -> bool:
    text = cst.Module([]).code_for_node(jit.node.body)
    return re.search(rf"static_range\([^)]*\b{re.escape(name)}\b", text) is not None


def condition_only(jit: JitFunction, name: str, helper: Callable[[str], JitFunction | None] = lambda n: None,
                   depth: int = 0) -> bool:
    """True when the constexpr is read only as a condition (`if NAME:`, `NAME and ...`, `not NAME`), here or,
    passed on as an argument, in the jit helper `helper(callee name)` finds (flash-attn's AMD kernels hand
    `DEBUG_TRITON` down to their inner loops, which only `print` under it)."""
    uses = 0
    in_condition = 0

    class _V(cst.CSTVisitor):
        def visit_If(self, node: cst.If) -> None:
            nonlocal in_condition
            in_condition += _count(node.test)

        def visit_IfExp(self, node: cst.IfExp) -> None:
            nonlocal in_condition
            in_condition += _count(node.test)

        def visit_Call(self, node: cst.Call) -> None:
            nonlocal in_condition
            callee = helper(_call_name(node)) if depth < 3 else None
            if callee is None:
                return
            params = [p.name for p in callee.params]
            for i, arg in enumerate(node.args):
                if not (isinstance(arg.value, cst.Name) and arg.value.value == name):
                    continue
                param = arg.keyword.value if arg.keyword is not None else params[i] if i < len(params) else None
                if param is not None and condition_only(callee, param, helper, depth + 1):
                    in_condition += 1

        def visit_Arg(self, node: cst.Arg) -> bool:
            node.value.visit(self)  # not the keyword of `f(FLAG=FLAG)`: that is the callee's name for it
            return False

        def visit_Name(self, node: cst.Name) -> None:
            nonlocal uses
            uses += node.value == name

    def _count(test: cst.BaseExpression) -> int:
        parts = [test]
        while parts:
            t = parts.pop()
            if isinstance(t, cst.Name):
                if t.value == name:
                    return 1
            elif isinstance(t, cst.BooleanOperation):
                parts += [t.left, t.right]
            elif isinstance(t, cst.UnaryOperation) and isinstance(t.operator, cst.Not):
                parts.append(t.expression)
        return 0

    jit.node.body.visit(_V())
    return uses > 0 and uses == in_condition
