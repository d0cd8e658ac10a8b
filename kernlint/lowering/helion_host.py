"""Reading a Helion kernel's host code: tensor allocations, extents (`x.size(0)`, `hl.specialize`),
asserts tying extents together and `hl.register_block_size` — a mixin of HelionLowerer.

Host code only runs on the CPU in Helion, so it produces no ops; it tells the device lowering which tensor
has which dtype and which extents are equal or known.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import libcst as cst

from kernlint.lowering.entries import CV, DT, Tup
from kernlint.ir.helion_types import _ALLOC, HTensor
from kernlint.ir.nodes import OpKind
from kernlint.ir.symbolic import Sym, Unknown

if TYPE_CHECKING:
    from kernlint.lowering.helion_lower import HelionLowerer

    _Base = HelionLowerer
else:
    _Base = object


class HelionHostCode(_Base):
    def new_tensor(self, name: str, line: int, dtype: str | None) -> HTensor:
        if not hasattr(self, "pointer_types"):
            self.pointer_types = {}
        spec = self.arg_types.get(name)
        if dtype is None and spec is not None and spec.startswith("*"):
            dtype = spec[1:].split(":")[0]
        if dtype is None:
            dtype = self.default_pointee
            self.assumptions.append(f"{name}: *{dtype} (default tensor dtype; --arg {name}=*bf16 to change)")
        self.pointer_types[name] = dtype
        ptr = self.emit(OpKind.PARAM, (), line, self.new_value((), f"ptr<{dtype}>", name), index=len(self.pointer_types))
        assert ptr is not None
        return HTensor(name, ptr, dtype)

    # -- host code ------------------------------------------------------------------------------------
    def run_host(self, body: cst.BaseSuite, env: dict[str, Any]) -> None:
        statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
        for stmt in statements:
            if isinstance(stmt, cst.For) and self.loop_kind(stmt.iter):
                self.grid_loop(stmt, env)
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assert):
                        self.host_assert(small.test, env)
                    elif isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
                        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                        for target in targets:
                            self.host_assign(target, small.value, env)
            elif isinstance(stmt, (cst.If, cst.With, cst.For, cst.While, cst.Try, cst.Match)):
                # Host control flow: device loops inside it still become kernels (both branches analysed).
                for sub in _suites(stmt):
                    self.run_host(sub, env)

    def host_assign(self, target: cst.BaseExpression, value: cst.BaseExpression, env: dict[str, Any]) -> None:
        if isinstance(target, (cst.Tuple, cst.List)) and _is_size_call(value):
            base = value.func.value if isinstance(value, cst.Call) else value.value  # type: ignore[attr-defined]
            t = env.get(base.value) if isinstance(base, cst.Name) else None
            if isinstance(t, HTensor):
                self.ranks[t.name] = len(target.elements)
            for axis, el in enumerate(target.elements):
                if isinstance(el.value, cst.Name) and isinstance(t, HTensor):
                    dims = self.dims.setdefault(t.name, {})
                    dims.setdefault(axis, self.extent_sym(el.value.value))
                    env[el.value.value] = CV(dims[axis])
            return
        result = self.host_expr(value, env)
        if isinstance(target, cst.Name):
            if isinstance(result, CV) and isinstance(result.expr, Sym) and result.expr.name in self.extents \
                    and "." in result.expr.name:
                # `n = x.size(1)`: name the extent after the host variable, as users think of it.
                old = result.expr.name
                new = self.extent_sym(target.value)
                for dims in self.dims.values():
                    for axis, d in dims.items():
                        if d == Sym(old):
                            dims[axis] = new
                del self.extents[old]
                result = CV(new)
            env[target.value] = result
        elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(result, Tup):
            for el, item in zip(target.elements, result.items):
                if isinstance(el.value, cst.Name):
                    env[el.value.value] = item

    def host_assert(self, test: cst.BaseExpression, env: dict[str, Any]) -> None:
        """`assert head_dim == k.size(-1) == v.size(-1)`: one extent, so one reduction dim, as in Helion."""
        if not (isinstance(test, cst.Comparison)
                and all(isinstance(c.operator, cst.Equal) for c in test.comparisons)):
            return
        sides = [test.left, *(c.comparator for c in test.comparisons)]
        sizes = [s for s in sides if _is_size_call(s)]
        others = [self.host_expr(s, env) for s in sides if not _is_size_call(s)]
        anchor = next((o.expr for o in others if isinstance(o, CV)), None)
        if anchor is None and sizes:
            first = self.host_expr(sizes[0], env)
            anchor = first.expr if isinstance(first, CV) else None
        for node in sizes:
            base = node.func.value if isinstance(node, cst.Call) else node.value  # type: ignore[attr-defined]
            t, axis = self.expr(base, env), _size_axis(node)
            if isinstance(t, HTensor) and axis is not None and anchor is not None:
                self.dims.setdefault(t.name, {})[self.norm_axis(t, axis)] = anchor

    def host_expr(self, node: cst.BaseExpression, env: dict[str, Any]) -> Any:
        line = self.line(node)
        if _is_size_call(node):
            call_base = node.func.value if isinstance(node, cst.Call) else node.value  # type: ignore[attr-defined]
            t = self.expr(call_base, env)
            axis = _size_axis(node)
            if isinstance(t, HTensor) and axis is not None:
                return CV(self.tensor_dim(t, axis))
            return Unknown("size")
        if isinstance(node, cst.Call):
            names = self.module.names.qualnames(node.func)
            short = {n.rpartition(".")[2] for n in names}
            if "helion.language.specialize" in names and node.args:
                self.assumptions.append(f"hl.specialize at line {line}: value fixed when Helion compiles, "
                                        "unknown to kernlint (pass it with --config NAME=VALUE)")
                inner = self.host_expr(node.args[0].value, env)
                if isinstance(inner, CV):
                    self.specialized |= set(inner.expr.free_symbols())
                return inner
            if "helion.language.register_block_size" in names:
                return CV(self.new_slot(line, "hl.register_block_size"))
            method = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
            if (any(n.startswith("torch.") for n in names) and short & _ALLOC) or method in _ALLOC:
                return self.allocation(node, env, method if method in _ALLOC and not names else None)
            return Unknown("host call")
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape":
            return self._shape_index(node, env)
        return self.expr(node, env)

    def _shape_index(self, node: cst.Subscript, env: dict[str, Any]) -> Any:
        t = self.expr(node.value.value, env)  # type: ignore[attr-defined]
        axis = _size_axis(node)
        return CV(self.tensor_dim(t, axis)) if isinstance(t, HTensor) and axis is not None else Unknown("shape")

    def allocation(self, node: cst.Call, env: dict[str, Any], method: str | None) -> Any:
        line = self.line(node)
        like: HTensor | None = None
        if method is not None and isinstance(node.func, cst.Attribute):
            base = self.expr(node.func.value, env)
            like = base if isinstance(base, HTensor) else None
        elif node.args and node.args[0].keyword is None:
            first = self.expr(node.args[0].value, env)
            like = first if isinstance(first, HTensor) else None
        dtype_kw = next((a.value for a in node.args if a.keyword and a.keyword.value == "dtype"), None)
        dt = self.expr(dtype_kw, env) if dtype_kw is not None else None
        dtype = dt.dtype if isinstance(dt, DT) else like.dtype if like is not None else None
        name = f"alloc@{line}"
        t = self.new_tensor(name, line, dtype)
        if like is not None:
            self.dims[name] = dict(self.dims.get(like.name, {}))
            self.like[name] = like
        elif node.args and isinstance(node.args[0].value, (cst.List, cst.Tuple)):
            shape = self.expr(node.args[0].value, env)
            if isinstance(shape, Tup):
                self.dims[name] = {i: d.expr for i, d in enumerate(shape.items) if isinstance(d, CV)}
        return t

    # -- device loops ---------------------------------------------------------------------------------


def _suites(stmt: cst.CSTNode) -> list[cst.BaseSuite]:
    out: list[cst.BaseSuite] = []
    todo = [stmt]
    while todo:   # iterative: an elif chain nests one `If` per branch
        node = todo.pop(0)
        if isinstance(node, cst.Match):
            out.extend(case.body for case in node.cases)
        for attr in ("body", "orelse", "finalbody"):
            sub = getattr(node, attr, None)
            if isinstance(sub, cst.BaseSuite):
                out.append(sub)
            elif isinstance(sub, (cst.Else, cst.Finally)):
                out.append(sub.body)
            elif isinstance(sub, cst.If):
                todo.append(sub)
    return out


def _is_size_call(node: cst.BaseExpression) -> bool:
    """`x.size()`, `x.size(1)`, `x.shape`, `x.shape[1]`."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "size":
        return isinstance(node.func.value, cst.Name)
    if isinstance(node, cst.Attribute) and node.attr.value == "shape":
        return isinstance(node.value, cst.Name)
    return False


def _size_axis(node: cst.BaseExpression) -> int | None:
    raw: cst.BaseExpression | None = None
    if isinstance(node, cst.Call) and node.args:
        raw = node.args[0].value
    elif isinstance(node, cst.Subscript) and isinstance(node.slice[0].slice, cst.Index):
        raw = node.slice[0].slice.value
    if isinstance(raw, cst.Integer):
        return int(raw.value)
    if isinstance(raw, cst.UnaryOperation) and isinstance(raw.expression, cst.Integer):
        return -int(raw.expression.value)
    return None
