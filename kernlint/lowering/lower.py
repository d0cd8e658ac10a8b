"""Lower a `@triton.jit` function's syntax tree into a KernelIR by abstract interpretation.

Each Python name maps to an abstract entry: a runtime `Value` (tile or scalar), a compile-time `CV`
(symbolic constexpr expression), a dtype, a tuple, or a helper function. Helpers are inlined at their call
sites (also across modules of the linted tree). Constructs the model does not understand are recorded as
`Unmodelled` with their line, and lowering goes on, so estimates can say they are incomplete.
"""
from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping
from typing import Any

import libcst as cst

from kernlint.frontend.arg_values import ArgValue, ArgValueError, DtypeValue, parse_arg_value
from kernlint.frontend.facts import JitFunction
from kernlint.lowering import tl_calls, tl_dispatch
from kernlint.lowering.control_flow import ControlFlowLowering
from kernlint.ir.attributes import make_attrs
from kernlint.ir.dtypes import dtype_from_qualname, parse_arg_type, promote
from kernlint.lowering.entries import CV, DT, HelperIndex, HelperRef, ModuleRef, Tup
from kernlint.ir.nodes import KernelIR, Op, OpKind, Region, Unmodelled, Value
from kernlint.lowering.pointers import helper_lookup, infer_pointees, pointer_params
from kernlint.ir.symbolic import Const, Expr, Sym, Unknown, binary, select, unary

MAX_INLINE_DEPTH = 8


_BIN = {cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.FloorDivide: "//",
        cst.Modulo: "%", cst.Power: "**", cst.LeftShift: "<<", cst.RightShift: ">>",
        cst.BitAnd: "&", cst.BitOr: "|", cst.BitXor: "^", cst.MatrixMultiply: "@"}
_CMP = {cst.Equal: "==", cst.NotEqual: "!=", cst.LessThan: "<", cst.LessThanEqual: "<=",
        cst.GreaterThan: ">", cst.GreaterThanEqual: ">=", cst.Is: "==", cst.IsNot: "!="}


class Lowerer(ControlFlowLowering):
    def __init__(self, jit: JitFunction, module: ModuleRef, helpers: HelperIndex,
                 arg_types: Mapping[str, str] | None = None, default_pointee: str = "fp16",
                 bound: Mapping[str, Any] | None = None,
                 inferred: Mapping[str, tuple[str, str]] | None = None) -> None:
        self.jit = jit
        # pointer → (element type, why) from the launch sites (a launcher's dtype assert, a tensor it allocates);
        # the kernel body's own evidence (pointers.infer_pointees) is added in lower()
        self.inferred: dict[str, tuple[str, str]] = dict(inferred or {})
        # constexpr values of one config (specialise): conditions on them are decided while lowering
        self.bound: dict[str, Any] = dict(bound or {})
        # the constexprs of the conditions left undecided (both branches lowered, merged per config)
        self.branch_symbols: set[str] = set()
        # hints (`tl.multiple_of`, `tl.max_contiguous`) on values no op produced: loop block arguments
        self.value_hints: dict[int, dict[str, Any]] = {}
        self.module = self.home = module
        self.helpers = helpers
        self.arg_types = dict(arg_types or {})
        self.default_pointee = default_pointee
        self.next_id = 0
        self.blocks: list[list[Op]] = [[]]
        self.unmodelled: list[Unmodelled] = []
        self.assumptions: list[str] = []
        self.depth = 0
        self.value_names: dict[int, str] = {}
        self.stmt_line = jit.line
        # While a helper from another file is inlined, every op and note is placed at the line of the call
        # in the kernel's own file: the helper's line numbers mean nothing there (a finding at k.py:37 in a
        # 9-line file, which no noqa could reach)
        self.call_site: int | None = None

    # -- building blocks --------------------------------------------------------------------------
    def new_value(self, shape: tuple[Expr, ...], dtype: str, name: str = "") -> Value:
        self.next_id += 1
        return Value(self.next_id, shape, dtype, name)

    def emit(self, kind: OpKind | str, operands: tuple[Value, ...], line: int, result: Value | None = None,
             extra_results: tuple[Value, ...] = (), regions: tuple[Region, ...] = (), **attrs: Any) -> Value | None:
        """Append one op to the current block: every op of a graph is made here. A kind that is not an `OpKind`
        (a typo, a name no analysis knows) is an internal error, never a new kind; so is an attribute its kind
        does not declare (kernlint/ir/attributes.py: `make_attrs` builds the kind's attribute class)."""
        try:
            op_kind = OpKind(kind)
        except ValueError:
            raise ValueError(f"lowering emitted an unknown op kind {kind!r} (kernlint.ir.nodes.OpKind lists the "
                             f"kinds)") from None
        typed = make_attrs(op_kind, attrs)
        self.next_id += 1
        line = self.call_site or line
        self.blocks[-1].append(Op(self.next_id, op_kind, result, operands, line, typed, regions, extra_results))
        return result

    def decide(self, cond: CV) -> Any:
        """A compile-time condition's value while lowering (module constants, and the config's constexprs when
        this lowering is specialised to one config), else Unknown: both branches are then lowered."""
        known = cond.expr.evaluate(ChainMap(self.bound, self.module.constants))
        if isinstance(known, Unknown):
            self.branch_symbols |= cond.expr.free_symbols() & set(getattr(self.jit, "constexpr_names", ()))
        return known

    def specialise(self, bound: Mapping[str, Any]) -> KernelIR:
        """This kernel lowered again with the constexprs of one config bound: what Triton's code generator
        traces, where every constexpr `if` is decided before anything is built (see KernelIR.specialise)."""
        return Lowerer(self.jit, self.home, self.helpers, self.arg_types, self.default_pointee, bound,
                       self.inferred).lower()

    def note(self, line: int, construct: str) -> None:
        self.unmodelled.append(Unmodelled(self.call_site or line, construct))

    def line(self, node: cst.CSTNode) -> int:
        # Expressions without a recorded position report the statement being lowered.
        return self.call_site or self.module.names.line(node, self.stmt_line)

    # -- entry ------------------------------------------------------------------------------------
    def lower(self) -> KernelIR:
        env: dict[str, Any] = {}
        ptrs = pointer_params(self.jit, helper_lookup(self.helpers, self.home, MAX_INLINE_DEPTH))
        pointer_types: dict[str, str] = {}
        assumed: list[str] = []
        inferred = {**infer_pointees(self.jit), **self.inferred} if "*" not in self.arg_types else {}
        for p in self.jit.params:
            given = _given(p.name, self.arg_types.get(p.name))
            if p.is_constexpr:
                # `--arg FLAG=True` / `ACC_DTYPE=tl.int32`: the value of every config, so branches on it fold
                fixed = _constexpr_entry(given) if given is not None else None
                env[p.name] = fixed if fixed is not None else CV(Sym(p.name))
                continue
            if given is not None and given.is_none:
                env[p.name] = CV(Const(None))  # passed as None: Triton makes it a constexpr None
                continue
            if given is not None and given.dtype_object:
                env[p.name] = DT(given.dtype or "fp32")  # a dtype passed to an unannotated parameter
                continue
            spec = given.lint_text() if given is not None else None
            if given is not None and given.is_value and type(given.value) is not int:
                spec = "i1" if isinstance(given.value, bool) else "fp32"   # an example value says its type
            if given is not None and given.is_value and type(given.value) is int:
                env[p.name] = CV(Const(given.value))  # Triton specialises integer 1 (and given values)
                continue
            if spec is not None:
                dtype = parse_arg_type(spec)
            elif p.name in ptrs and p.name in inferred:
                pointee_type, why = inferred[p.name]
                dtype = f"ptr<{pointee_type}>"
                self.assumptions.append(f"{p.name}: *{pointee_type} (inferred: {why})")
            elif p.name in ptrs:
                dtype = f"ptr<{self.default_pointee}>"
                assumed.append(p.name)
                self.assumptions.append(f"{p.name}: *{self.default_pointee} (default pointer dtype)")
            else:
                dtype = "i32"
            if dtype.startswith("ptr<"):
                pointer_types[p.name] = dtype[4:-1]
            env[p.name] = self.emit(OpKind.PARAM, (), self.jit.line, self.new_value((), dtype, p.name), index=p.index)
        returned = self.run_body(self.jit.node.body, env)
        self.unmodelled.sort(key=lambda u: u.line)
        specialise = self.specialise if self.branch_symbols and not self.bound else None
        return KernelIR(self.jit.qualname, Region(tuple(self.blocks[0])), self.jit.constexpr_names,
                        pointer_types, tuple(self.assumptions), tuple(self.unmodelled), self.next_id,
                        dict(self.value_names), _values_in(returned),
                        branch_symbols=frozenset(self.branch_symbols), specialise=specialise,
                        assumed_pointees=tuple(assumed))

    # -- statements -------------------------------------------------------------------------------
    def run_body(self, body: cst.BaseSuite, env: dict[str, Any]) -> Any:
        statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
        for stmt in statements:
            result = self.statement(stmt, env)
            if result is not None:
                return result
        return None

    def statement(self, stmt: cst.CSTNode, env: dict[str, Any]) -> Any:
        """Lower one statement; returns a value only for `return` (used when inlining helpers)."""
        self.stmt_line = self.module.names.line(stmt, self.stmt_line)
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                ret = self.small_statement(small, env)
                if ret is not None:
                    return ret
            return None
        if isinstance(stmt, cst.If):
            return self.if_statement(stmt, env)
        if isinstance(stmt, cst.For):
            self.for_statement(stmt, env)
            return None
        if isinstance(stmt, cst.While):
            self.loop(stmt, env, None, stmt.body, kind="while", num_stages=None)
            return None
        if isinstance(stmt, cst.Match):   # Triton 3.9's code generator has no visit_Match
            self.note(self.line(stmt), "`match` statement inside a kernel (Triton's compiler rejects it: "
                                       "unsupported AST node type)")
            return None
        self.note(self.line(stmt), f"`{type(stmt).__name__}` statement inside a kernel")
        return None

    def small_statement(self, small: cst.BaseSmallStatement, env: dict[str, Any]) -> Any:
        self.stmt_line = self.module.names.line(small, self.stmt_line)
        if isinstance(small, cst.Assign):
            value = self.expr(small.value, env)
            for target in small.targets:
                self.bind(target.target, value, env)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.bind(small.target, self.expr(small.value, env), env)
        elif isinstance(small, cst.AugAssign):
            op = _BIN.get(type(small.operator))
            current = self.expr(small.target, env)
            value = self.arith(op or "+", current, self.expr(small.value, env), self.line(small))
            self.bind(small.target, value, env)
        elif isinstance(small, cst.Expr):
            self.expr(small.value, env)
        elif isinstance(small, cst.Return):
            return self.expr(small.value, env) if small.value is not None else CV(Const(None))
        elif isinstance(small, (cst.Pass, cst.Break, cst.Continue, cst.Assert)):
            pass
        else:
            self.note(self.line(small), f"`{type(small).__name__}` statement")
        return None

    def bind(self, target: cst.BaseExpression, value: Any, env: dict[str, Any]) -> None:
        if isinstance(target, cst.Name):
            env[target.value] = value
            if isinstance(value, Value):
                self.value_names.setdefault(value.id, target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            items = value.items if isinstance(value, Tup) else None
            for i, el in enumerate(target.elements):
                item = items[i] if items is not None and i < len(items) else Unknown("unpacked value")
                self.bind(el.value, item, env)
        else:
            self.note(self.line(target), "assignment to a subscript or attribute")

    # -- expressions ------------------------------------------------------------------------------
    def expr(self, node: cst.BaseExpression, env: dict[str, Any]) -> Any:
        if isinstance(node, cst.Integer):
            return CV(Const(int(node.value.replace("_", ""), 0)))
        if isinstance(node, cst.Float):
            return CV(Const(float(node.value.replace("_", ""))))
        if isinstance(node, cst.FormattedString):  # f-strings only feed device_print/static_assert messages
            return CV(Const(None))
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            value = node.evaluated_value
            return CV(Const(value if isinstance(value, str) else None))
        if isinstance(node, cst.Name):
            return self.name(node, env)
        if isinstance(node, cst.Attribute):
            return self.attribute(node, env)
        if isinstance(node, (cst.Tuple, cst.List)):
            return Tup(tuple(self.expr(el.value, env) for el in node.elements))
        if isinstance(node, cst.BinaryOperation):
            op = _BIN.get(type(node.operator), "+")
            left, right = self.expr(node.left, env), self.expr(node.right, env)
            if op == "@":
                return tl_calls.dot(self, (left, right), {}, self.line(node))
            return self.arith(op, left, right, self.line(node))
        if isinstance(node, cst.UnaryOperation):
            value = self.expr(node.expression, env)
            op = {cst.Minus: "-", cst.Plus: "+", cst.Not: "not", cst.BitInvert: "~"}[type(node.operator)]
            if isinstance(value, CV):
                return CV(unary(op, value.expr))
            if isinstance(value, Value):
                dtype = "i1" if op == "not" else value.dtype
                return self.emit(OpKind.ELEMENTWISE, (value,), self.line(node), self.new_value(value.shape, dtype), fn=op)
            return value
        if isinstance(node, cst.Comparison):
            left = self.expr(node.left, env)
            result: Any = None
            for comp in node.comparisons:
                right = self.expr(comp.comparator, env)
                op = _CMP.get(type(comp.operator), "==")
                part = _identity_test(comp.operator, left, right)
                if part is None:
                    part = self.arith(op, left, right, self.line(node))
                result = part if result is None else self.arith("and", result, part, self.line(node))
                left = right
            return result
        if isinstance(node, cst.BooleanOperation):
            op = "and" if isinstance(node.operator, cst.And) else "or"
            return self.arith(op, self.expr(node.left, env), self.expr(node.right, env), self.line(node))
        if isinstance(node, cst.IfExp):
            cond = self.expr(node.test, env)
            if isinstance(cond, CV):
                known = self.decide(cond)
                if not isinstance(known, Unknown):
                    return self.expr(node.body if known else node.orelse, env)
                return self.constexpr_choice(cond, self.expr(node.body, env), self.expr(node.orelse, env),
                                             self.line(node))
            return tl_calls.where(self, (cond, self.expr(node.body, env), self.expr(node.orelse, env)), {},
                                  self.line(node))
        if isinstance(node, cst.Subscript):
            return tl_dispatch.subscript(self, node, env)
        if isinstance(node, cst.Call):
            return tl_dispatch.call(self, node, env)
        self.note(self.line(node), f"`{type(node).__name__}` expression")
        return Unknown(f"{type(node).__name__} expression")

    def name(self, node: cst.Name, env: dict[str, Any]) -> Any:
        if node.value in env:
            return env[node.value]
        if node.value in ("True", "False", "None"):
            return CV(Const({"True": True, "False": False, "None": None}[node.value]))
        return self.global_name(node)

    def global_name(self, node: cst.BaseExpression) -> Any:
        names = self.module.names.qualnames(node)
        for qn in names:
            dtype = dtype_from_qualname(qn)
            if dtype is not None:
                return DT(dtype)
            for full in (qn, f"{self.module.module_name}.{qn}"):
                if full in self.helpers:
                    return HelperRef(self.helpers[full][0])
        if isinstance(node, cst.Name) and node.value in self.module.constants:
            value = self.module.constants[node.value]
            if isinstance(value, (int, float, bool, str)) or value is None:
                return CV(Const(value))
        if names:
            return Unknown(sorted(names)[0])
        return Unknown(f"unresolved name {cst.Module([]).code_for_node(node)}")

    def attribute(self, node: cst.Attribute, env: dict[str, Any]) -> Any:
        base = node.value
        root = base
        while isinstance(root, cst.Attribute):
            root = root.value
        if not (isinstance(root, cst.Name) and root.value in env):
            resolved = self.global_name(node)
            if not isinstance(resolved, Unknown):
                return resolved
        obj = self.expr(base, env)
        attr = node.attr.value
        if isinstance(obj, Value):
            if attr == "dtype":
                return DT(obj.dtype)
            if attr == "T":
                return tl_calls.transpose(self, obj, self.line(node))
            if attr == "shape":
                return Tup(tuple(CV(d) for d in obj.shape))
        if isinstance(obj, DT) and attr in ("element_ty", "scalar"):
            from kernlint.ir.nodes import pointee

            return DT(pointee(obj.dtype))
        return Unknown(f"attribute .{attr}")

    def constexpr_choice(self, cond: CV, then: Any, other: Any, line: int) -> Any:
        """`a if CONSTEXPR else b` with the constexpr bound per config: a constexpr when both sides are, else
        one value whose shape follows the branch each config takes (`o_cm[:, None] * s if X_DIM == 2 else 0`
        is [BM, 1] or a scalar, so what it is added to keeps its own shape when X_DIM != 2)."""
        if isinstance(then, CV) and isinstance(other, CV):
            return CV(select(cond.expr, then.expr, other.expr))
        values = [v for v in (then, other) if isinstance(v, Value)]
        if not values:
            return then if not isinstance(then, Unknown) else other
        rank = max(len(v.shape) for v in values)

        def dims(x: Any) -> tuple[Expr, ...]:
            shape = x.shape if isinstance(x, Value) else ()
            return (Const(1),) * (rank - len(shape)) + tuple(shape)

        shape = tuple(select(cond.expr, a, b) for a, b in zip(dims(then), dims(other)))
        dtype = promote(then.dtype if isinstance(then, Value) else None, other.dtype if isinstance(other, Value) else None)
        # the branches in place (a constexpr one as its expression): axis_divisibility takes the taken one
        sides = tuple(x if isinstance(x, Value) else x.expr if isinstance(x, CV) else None for x in (then, other))
        return self.emit(OpKind.ELEMENTWISE, tuple(values), line, self.new_value(shape, dtype), fn="where",
                         choice=cond.expr, sides=sides)

    def arith(self, op: str, a: Any, b: Any, line: int) -> Any:
        if isinstance(a, CV) and isinstance(b, CV):
            return CV(binary(op, a.expr, b.expr))
        values = [x for x in (a, b) if isinstance(x, Value)]
        if not values:
            return Unknown(f"operands of `{op}` not understood")
        shape = tl_calls.broadcast_shapes(*(v.shape for v in values))
        if op in ("==", "!=", "<", "<=", ">", ">=", "and", "or"):
            dtype = "i1"
        else:
            da = a.dtype if isinstance(a, Value) else None
            db = b.dtype if isinstance(b, Value) else None
            dtype = promote(da, db)
            if op == "/" and not any(d and d.startswith(("fp", "bf")) for d in (da, db)):
                dtype = "fp32"  # true division of ints yields fp32 in Triton
        consts = [x.expr for x in (a, b) if isinstance(x, CV)]
        # contiguity analysis reads `x * 1`; messages print `1 - x` the right way round
        extra = {"scalar": consts[0], "scalar_first": isinstance(a, CV)} if len(consts) == 1 else {}
        return self.emit(OpKind.ELEMENTWISE, tuple(values), line, self.new_value(shape, dtype), fn=op, **extra)

    def inline(self, helper: JitFunction, args: list[Any], kwargs: dict[str, Any], line: int) -> Any:
        if self.depth >= MAX_INLINE_DEPTH:
            self.note(line, f"helper `{helper.name}` nested deeper than {MAX_INLINE_DEPTH} calls")
            return Unknown("helper too deep")
        _, module = self.helpers[helper.full_name]
        env: dict[str, Any] = {}
        for p in helper.params:
            if p.index < len(args):
                env[p.name] = args[p.index]
            elif p.name in kwargs:
                env[p.name] = kwargs[p.name]
            elif not isinstance(p.default, Unknown) and p.default is not None and isinstance(
                    p.default, (int, float, bool, str)):
                env[p.name] = CV(Const(p.default))
            else:
                env[p.name] = CV(Const(None))
        saved, saved_site = self.module, self.call_site
        if module.module_name != self.home.module_name and self.call_site is None:
            self.call_site = line
        self.module, self.depth = module, self.depth + 1
        try:
            ret = self.run_body(helper.node.body, env)
        finally:
            self.module, self.depth, self.call_site = saved, self.depth - 1, saved_site
        return ret if ret is not None else CV(Const(None))


def _given(name: str, text: str | None) -> ArgValue | None:
    """An `--arg` value as the shared parser reads it (None when not given; the commands reject bad ones
    before lowering, so one that still fails to parse is ignored)."""
    if text is None:
        return None
    try:
        return parse_arg_value(name, text)
    except ArgValueError:
        return None


def _constexpr_entry(given: ArgValue) -> Any:
    """The lowering entry of a constexpr fixed with `--arg`: a constant, or a dtype; None for a pointer type."""
    try:
        value = given.constexpr_value()
    except ArgValueError:
        return None
    return DT(value.name) if isinstance(value, DtypeValue) else CV(Const(value))


def _identity_test(operator: cst.BaseCompOp, left: Any, right: Any) -> CV | None:
    """`x is None` / `x is not None` decided at compile time, as Triton's code generator does: a tensor is
    never None, and a helper argument left out is. flash-attn's AMD `load_fn` picks one of four masked loads
    this way; compared element-wise, all four stayed and each got its own pipeline buffers (221,184 B
    estimated against 16,384 B measured at 64 × 64, Triton 3.9, sm_90)."""
    if not isinstance(operator, (cst.Is, cst.IsNot)):
        return None
    def none(x: Any) -> bool | None:
        if isinstance(x, CV) and isinstance(x.expr, Const):
            return x.expr.value is None
        return False if isinstance(x, Value) else None
    a, b = none(left), none(right)
    if a is None or b is None or not (a or b):
        return None          # unknown, or neither side is None: not an identity test kernlint can decide
    same = a == b
    return CV(Const(same if isinstance(operator, cst.Is) else not same))


def _values_in(returned: Any) -> tuple[Value, ...]:
    """The graph values a `return` hands back (a tuple of them, possibly nested)."""
    if isinstance(returned, Value):
        return (returned,)
    if isinstance(returned, Tup):
        return tuple(v for item in returned.items for v in _values_in(item))
    return ()
