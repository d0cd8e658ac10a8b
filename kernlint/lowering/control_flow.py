"""Lowering of structured control flow: `if` (constexpr or runtime) and loops with carried values.

A mixin of `kernlint.lowering.lower.Lowerer`: it uses the lowerer's `expr`, `run_body`, `bind`, `emit` and
value factory, and produces `if`/`for` ops with nested regions.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import libcst as cst

from kernlint.frontend.walk import iter_nodes
from kernlint.ir.dtypes import promote
from kernlint.lowering.entries import CV
from kernlint.ir.nodes import Carried, Op, OpKind, Region, Value
from kernlint.ir.symbolic import Expr, Unknown

if TYPE_CHECKING:
    from kernlint.lowering.lower import Lowerer

    _Base = Lowerer
else:
    _Base = object


class ControlFlowLowering(_Base):
    def if_statement(self, stmt: cst.If, env: dict[str, Any]) -> Any:
        cond = self.expr(stmt.test, env)
        line = self.line(stmt)
        orelse = stmt.orelse
        if isinstance(cond, CV):
            known = self.decide(cond)
            if not isinstance(known, Unknown):  # decided now: lower only the taken branch
                if known:
                    return self.run_body(stmt.body, env)
                if isinstance(orelse, cst.If):
                    return self.if_statement(orelse, env)
                if isinstance(orelse, cst.Else):
                    return self.run_body(orelse.body, env)
                return None
        branches: list[tuple[dict[str, Any], list[Op], Any]] = []
        for body in (stmt.body, orelse):
            branch_env = dict(env)
            self.blocks.append([])
            ret = None
            if isinstance(body, cst.If):
                ret = self.if_statement(body, branch_env)
            elif isinstance(body, cst.Else):
                ret = self.run_body(body.body, branch_env)
            elif body is not None:
                ret = self.run_body(body, branch_env)
            branches.append((branch_env, self.blocks.pop(), ret))
        (then_env, then_ops, then_ret), (else_env, else_ops, else_ret) = branches
        if (then_ret is None) != (else_ret is None):
            # An early exit on a runtime condition (`if M_e == 0: return` in liger's MoE kernels, tiles past
            # the end of a ragged batch): the CTAs that stay run the rest of the body, which decides the
            # resources, so lowering goes on with the names of the branch that falls through.
            if then_ret is not None:
                then_env = else_env
            else:
                else_env = then_env
            then_ret = else_ret = None
        merged: list[Value] = []
        sources: list[tuple[Value, Value, Value]] = []
        for name in sorted(set(then_env) | set(else_env)):
            a, b = then_env.get(name), else_env.get(name)
            if a is b:
                env[name] = a
            elif isinstance(a, Value) and isinstance(b, Value):
                phi = self.new_value(a.shape, promote(a.dtype, b.dtype), name)
                merged.append(phi)
                sources.append((phi, a, b))
                env[name] = phi
            else:
                env[name] = a if a is not None else b
        cond_expr = cond.expr if isinstance(cond, CV) else None
        cond_value = (cond,) if isinstance(cond, Value) else ()
        self.emit(OpKind.IF, cond_value, line, None, tuple(merged), (Region(tuple(then_ops)), Region(tuple(else_ops))),
                  cond=cond_expr, merges=tuple(sources))
        return then_ret if then_ret is not None else else_ret

    def for_statement(self, stmt: cst.For, env: dict[str, Any]) -> None:
        it = stmt.iter
        kind, num_stages = "range", None
        flatten: Expr | bool = False
        bounds: list[Any] = []
        if isinstance(it, cst.Call):
            names = self.module.names.qualnames(it.func)
            if "builtins.range" in names or any(n.endswith((".range", ".static_range")) for n in names):
                kind = "static_range" if any(n.endswith("static_range") for n in names) else (
                    "tl.range" if any(n.startswith("triton.") for n in names) else "range")
                bounds = [self.expr(a.value, env) for a in it.args if a.keyword is None]
                for a in it.args:
                    if a.keyword is not None and a.keyword.value == "num_stages":
                        stages = self.expr(a.value, env)
                        num_stages = stages.expr if isinstance(stages, CV) else None
                    if a.keyword is not None and a.keyword.value == "flatten":
                        # tl.range(..., flatten=True / a constexpr FLATTEN): Triton fuses the nest into one
                        # pipelined loop; kept as an expression, evaluated per config
                        value = self.expr(a.value, env)
                        flatten = value.expr if isinstance(value, CV) else False
            else:
                self.note(self.line(stmt), "loop over something other than range/tl.range/tl.static_range")
        else:
            self.note(self.line(stmt), "loop over something other than range/tl.range/tl.static_range")
        self.loop(stmt, env, stmt.target, stmt.body, kind=kind, num_stages=num_stages, bounds=bounds,
                  flatten=flatten)

    def loop(self, stmt: cst.For | cst.While, env: dict[str, Any], target: cst.BaseExpression | None,
             body: cst.BaseSuite, *, kind: str, num_stages: Expr | None, bounds: list[Any] | None = None,
             flatten: Expr | bool = False) -> None:
        line = self.line(stmt)
        assigned = _assigned_names(body)
        carried_names = [n for n in sorted(assigned) if isinstance(env.get(n), Value)]
        # names the body re-binds that existed before the loop: carried state even when it entered as a
        # Python scalar (`m = float("-inf")` of an online softmax), which `carried` (tiles only) leaves out
        rebinds_outer = any(n in env for n in assigned)
        body_env = dict(env)
        args: dict[str, Value] = {}
        for name in carried_names:
            init = env[name]
            args[name] = self.new_value(init.shape, init.dtype, name)
            body_env[name] = args[name]
        self.blocks.append([])
        iv: Value | None = None
        if target is not None:
            iv = self.new_value((), "i32", _target_name(target))
            self.bind(target, iv, body_env)
        cond_values: tuple[Value, ...] = ()
        if isinstance(stmt, cst.While):
            test = self.expr(stmt.test, body_env)
            cond_values = (test,) if isinstance(test, Value) else ()
        self.run_body(body, body_env)
        ops = self.blocks.pop()
        used = _used_value_ids(ops)
        carried: list[Carried] = []
        for name in carried_names:
            yielded = body_env.get(name)
            if not isinstance(yielded, Value):
                continue
            # A name re-assigned before it is read (a loop-local `cols` reused from an earlier loop) is not
            # really carried: Triton's canonicalizer drops such iter_args, so neither is the init kept alive.
            if args[name].id in used or yielded is args[name]:
                carried.append(Carried(name, env[name], args[name], yielded))
            env[name] = yielded
        for name in assigned - set(carried_names):  # loop-local names stay visible after the loop
            if name in body_env:
                env[name] = body_env[name]
        bound_exprs = tuple(b.expr if isinstance(b, CV) else None for b in bounds or [])
        self.emit(
            OpKind.FOR, tuple(c.init for c in carried), line, None, tuple(c.yielded for c in carried),
            (Region(tuple(ops)),),
            **{"loop": kind, "num_stages": num_stages, "carried": tuple(carried), "bounds": bound_exprs,
             "flatten": flatten, "rebinds_outer": rebinds_outer,
             # the induction variable and the run-time bounds in place (axis_divisibility: its divisibility
             # is gcd(lower bound, step), AxisInfo.visitForOpInductionVar)
             "iv": iv, "bound_values": tuple(b if isinstance(b, Value) else None for b in bounds or []),
             # hints set on block arguments in the body (grouped GEMM's `tl.multiple_of(a_ptrs, [16, 16])`)
             "arg_hints": {a.id: self.value_hints[a.id] for a in args.values() if a.id in self.value_hints},
             # run-time values that steer the loop (bounds, a while condition): kept by dead-code elimination
             "steering": tuple(b for b in bounds or [] if isinstance(b, Value)) + cond_values})


def _used_value_ids(ops: list[Op]) -> set[int]:
    used: set[int] = set()
    stack = list(ops)
    while stack:
        op = stack.pop()
        used.update(v.id for v in op.operands)
        for c in op.carried:
            used.add(c.yielded.id)
        for region in op.regions:
            stack.extend(region.ops)
    return used


def _assigned_names(body: cst.CSTNode) -> set[str]:
    names: set[str] = set()
    for node in iter_nodes(body):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For)):
            _collect_targets(node.target, names)
    return names


def _collect_targets(target: cst.BaseExpression, out: set[str]) -> None:
    if isinstance(target, cst.Name):
        out.add(target.value)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            _collect_targets(el.value, out)


def _target_name(target: cst.BaseExpression) -> str:
    return target.value if isinstance(target, cst.Name) else "iv"
