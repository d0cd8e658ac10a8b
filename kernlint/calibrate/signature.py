"""Argument kinds and the compile spec of a kernel: what Triton's runtime binder would see, without a launch.

Kinds come from the source: ``tl.constexpr`` parameters, pointers (a parameter reaching the pointer operand
of ``tl.load``/``tl.store``/``tl.atomic_*`` or the base of ``make_block_ptr``, also through the jit helpers
it is passed to), and scalars (everything else). Dtypes and example values come from ``--arg NAME=SPEC``
(or ``[tool.kernlint.calibrate] args``) and otherwise from stated defaults that mimic the runtime binder on
well-formed inputs, because divisibility hints switch pipelining on or off and change registers and shared
memory a lot (docs/design.md, "Ground truth"):

  pointer   *fp16 (or the ``--arg '*=*bf16'`` default), 16-byte aligned (``tt.divisibility=16``)
  scalar    i32, divisible by 16 (``tt.divisibility=16``)
  stride    1 (``constexpr 1``, as the binder specialises it) for a scalar that multiplies an ``offs[None, :]``
            tile: the inner stride of a contiguous row-major operand. Without it Triton cannot vectorise or
            pipeline the loads (4x less shared memory, spills), so a wrong default here would mislead.

Spec syntax (Triton's AOT spelling): ``*bf16``, ``*fp32:0`` (pointer without the alignment hint), ``i32``,
``i32:0`` (no divisibility hint), ``i64``, ``fp32``, ``u1``, an integer example value (``1`` becomes
``constexpr 1`` like the binder does for unit strides, ``4096`` becomes i32 divisible by 16), a float
(``1e-5`` → fp32), ``True``/``False``, ``None``. For a ``tl.constexpr`` parameter the spec is its value,
applied to every config.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import libcst as cst

from kernlint.calibrate.scratch import ParsedModule, SourceTree
from kernlint.frontend.arg_values import ArgValueError, DtypeValue, parse_arg_value
from kernlint.frontend.facts import JitFunction
from kernlint.lowering.pointers import additive_names, args_passed_as, pointer_params

Kind = Literal["pointer", "scalar", "constexpr"]
DEFAULT_POINTEE = "fp16"


class SpecError(ValueError):
    """An argument spec does not match the kernel's signature (the message names the argument)."""


@dataclass(frozen=True, slots=True)
class ArgSpec:
    name: str
    kind: Kind
    value: Any               # the compile spec ("*fp16", "i32", 1, 0.5, ...); for constexprs the fixed value or None
    source: str              # "--arg" or "default"

    def describe(self) -> str:
        if self.kind == "constexpr":
            return f"{self.name}: constexpr" + (f" = {self.value!r} (--arg)" if self.source == "--arg" else " (from the config)")
        text = {"pointer": _describe_pointer, "scalar": _describe_scalar}[self.kind](self.value)
        return f"{self.name}: {text}" + {"default": " (default)", "--arg *": " (--arg '*')",
                                         "default unit stride": " (default: multiplies an offs[None, :] tile, "
                                                                "i.e. the contiguous stride)"}.get(self.source, "")


def _describe_pointer(value: str) -> str:
    return f"{value.split(':')[0]}, " + ("not assumed aligned" if value.endswith(":0") else "16-byte aligned")


def _describe_scalar(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return f"{value!r}"
    if isinstance(value, int):
        return "1 (constexpr, as Triton specialises 1)" if value == 1 else \
            f"{value} ({'i64' if not -2**31 <= value < 2**31 else 'i32'}{', divisible by 16' if value % 16 == 0 else ''})"
    if isinstance(value, float):
        return f"fp32 (example {value!r})"
    ty, _, hint = str(value).partition(":")
    if (ty == "i32" and hint != "0") or hint == "16":
        return f"{ty}, divisible by 16"
    return ty


def parse_spec(name: str, text: str) -> Any:
    """``--arg`` text → compile spec value; SpecError naming the argument when it is not a spec. The parser is
    the one every command shares (kernlint/frontend/arg_values.py)."""
    try:
        return parse_arg_value(name, text).spec()
    except ArgValueError as exc:
        raise SpecError(str(exc)) from None


def _last_axis_offset(node: cst.BaseExpression) -> bool:
    """`offs[None, :]` (a tile broadcast along its last axis only)."""
    if not isinstance(node, cst.Subscript) or len(node.slice) < 2:
        return False
    *lead, last = node.slice
    return isinstance(last.slice, cst.Slice) and all(
        isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Name) and e.slice.value.value == "None"
        for e in lead)


def inner_strides(jit: JitFunction) -> set[str]:
    """Scalar parameters multiplying an `offs[None, :]` tile: the contiguous (unit) stride of a row-major
    operand, which Triton's binder specialises to ``constexpr 1`` at run time for contiguous tensors."""
    found: set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
            if isinstance(node.operator, cst.Multiply):
                for a, b in ((node.left, node.right), (node.right, node.left)):
                    if isinstance(a, cst.Name) and _last_axis_offset(b):
                        found.add(a.value)

    jit.node.body.visit(_V())
    return found & {p.name for p in jit.params if not p.is_constexpr}


def unit_stride_args(jit: JitFunction, pm: ParsedModule, tree: SourceTree) -> set[str]:
    return pointer_args(jit, pm, tree, finder=inner_strides)


def pointer_args(jit: JitFunction, pm: ParsedModule, tree: SourceTree, depth: int = 0,
                 finder: Any = pointer_params) -> set[str]:
    """Parameters used as pointers (or, with another ``finder``, in another role) in the kernel or in the jit
    helpers they are passed to (recursively)."""
    found = set(finder(jit))
    if depth > 8:
        return found
    assigns: list[tuple[str, cst.BaseExpression]] = []
    calls: list[cst.Call] = []

    class _V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            calls.append(node)

        def visit_Assign(self, node: cst.Assign) -> None:
            assigns.extend((t.target.value, node.value) for t in node.targets if isinstance(t.target, cst.Name))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.target, cst.Name):
                assigns.append((node.target.value, node.value))

    jit.node.body.visit(_V())
    roots: set[str] = set()
    for call in calls:
        helper = _helper_of(call, pm, tree)
        if helper is None or helper[0] is jit:
            continue
        roots |= args_passed_as(call, helper[0], pointer_args(helper[0], helper[1], tree, depth + 1, finder))
    changed = True
    while changed:  # `k_ptrs = K + offs` then `helper(k_ptrs)`: K is a pointer
        changed = False
        for name, value in assigns:
            if name in roots and (new := additive_names(value) - roots):
                roots |= new
                changed = True
    return found | (roots & {p.name for p in jit.params if not p.is_constexpr})


def _helper_of(call: cst.Call, pm: ParsedModule, tree: SourceTree) -> tuple[JitFunction, ParsedModule] | None:
    for qn in pm.names.qualnames(call.func):
        own = pm.jit(qn)
        if own is not None:
            return own, pm
        found = tree.jit_by_full_name(qn)
        if found is not None:
            return found
    return None


def derive_signature(jit: JitFunction, pointers: set[str], given: Mapping[str, str],
                     unit_strides: set[str] = frozenset()) -> list[ArgSpec]:  # type: ignore[assignment]
    """One ArgSpec per parameter, in order; SpecError when ``given`` does not match the signature."""
    params = {p.name: p for p in jit.params}
    for name in given:
        if name != "*" and name not in params:
            raise SpecError(f"--arg {name}: {jit.qualname} has no argument {name!r} "
                            f"(its arguments: {', '.join(params)})")
    pointee = DEFAULT_POINTEE
    if "*" in given:
        default = parse_spec("*", given["*"])
        if not (isinstance(default, str) and default.startswith("*")):
            raise SpecError(f"--arg '*={given['*']}': the default pointer type must look like *bf16")
        pointee = default[1:]
    out: list[ArgSpec] = []
    for p in jit.params:
        text = given.get(p.name)
        value = parse_spec(p.name, text) if text is not None else None
        if p.is_constexpr or isinstance(value, DtypeValue):
            if text is not None:  # a bare type name given to a constexpr is the dtype it names (ACC_DTYPE=fp32)
                try:
                    value = parse_arg_value(p.name, text).constexpr_value()
                except ArgValueError as exc:
                    raise SpecError(f"--arg {p.name}={text}: {p.name} is a tl.constexpr; give its value "
                                    f"(--arg {p.name}=64) or set it per config with --config ({exc})") from None
            out.append(ArgSpec(p.name, "constexpr", value, "--arg" if text is not None else "config"))
        elif p.name in pointers:
            if text is not None and not (isinstance(value, str) and value.startswith("*")):
                raise SpecError(f"--arg {p.name}={text}: {p.name} is used as a pointer in {jit.qualname} "
                                f"(tl.load/tl.store); give a pointer type such as *fp16")
            source = "--arg" if text is not None else "--arg *" if "*" in given else "default"
            out.append(ArgSpec(p.name, "pointer", value if text is not None else f"*{pointee}", source))
        elif text is not None:
            # kernlint may miss a pointer (passed on through host-side indirection): trust an explicit *type
            kind: Kind = "pointer" if isinstance(value, str) and value.startswith("*") else "scalar"
            out.append(ArgSpec(p.name, kind, value, "--arg"))
        elif p.name in unit_strides:
            out.append(ArgSpec(p.name, "scalar", 1, "default unit stride"))
        else:
            out.append(ArgSpec(p.name, "scalar", "i32", "default"))
    return out


def compile_args(signature: list[ArgSpec]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(args, fixed constexprs) in the form ``triton_compile.build_compile_args`` takes."""
    args = {a.name: a.value for a in signature if a.kind != "constexpr"}
    fixed = {a.name: a.value for a in signature if a.kind == "constexpr" and a.source == "--arg"}
    return args, fixed


def lint_arg_types(signature: list[ArgSpec]) -> dict[str, str]:
    """The same facts in the static path's ``--arg`` form, so estimates and compiles assume the same thing."""
    out: dict[str, str] = {}
    for a in signature:
        if a.kind == "constexpr":
            continue
        v = a.value
        if isinstance(v, bool):
            out[a.name] = "u1"
        elif isinstance(v, int):
            out[a.name] = "1" if v == 1 else ("i64" if not -2**31 <= v < 2**31 else "i32")
        elif isinstance(v, float):
            out[a.name] = "fp32"
        elif isinstance(v, str):
            out[a.name] = v.split(":")[0]
    return out
