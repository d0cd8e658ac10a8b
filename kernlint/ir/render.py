"""Text dump of a kernel graph for `kernlint debug --ir`."""
from __future__ import annotations

import dataclasses

from kernlint.ir.nodes import KernelIR, Op, OpKind, Region

# the attributes shown after an op where its kind declares them (in the order its attribute class lists them)
_SHOWN = ("fn", "axis", "loop", "num_stages", "cond")


def render_ir(ir: KernelIR) -> str:
    lines = [f"kernel {ir.name}  constexprs: {', '.join(ir.constexprs) or '-'}"]
    if ir.pointer_params:
        lines.append("  pointers: " + ", ".join(f"{k}: *{v}" for k, v in ir.pointer_params.items()))

    def op_text(op: Op) -> str:
        res = f"{op.result} = " if op.result is not None else ""
        args = ", ".join(str(v) for v in op.operands)
        shown = [f"{f.name}={getattr(op.attrs, f.name)}" for f in dataclasses.fields(op.attrs)
                 if f.name in _SHOWN and getattr(op.attrs, f.name) is not None]
        attrs = " " + " ".join(shown) if shown else ""
        return f"{res}{op.kind}({args}){attrs}  # line {op.line}"

    def visit(region: Region, indent: int) -> None:
        for op in region.ops:
            lines.append("  " * indent + op_text(op))
            if op.kind == OpKind.FOR:
                for c in op.carried:
                    lines.append("  " * (indent + 1) + f"carried {c.name}: {c.init} -> {c.arg} -> {c.yielded}")
            for i, sub in enumerate(op.regions):
                if op.kind == OpKind.IF:
                    lines.append("  " * (indent + 1) + ("then:" if i == 0 else "else:"))
                visit(sub, indent + 2 if op.kind == OpKind.IF else indent + 1)

    visit(ir.body, 1)
    for u in ir.unmodelled:
        lines.append(f"  ! not modelled, line {u.line}: {u.construct}")
    return "\n".join(lines)
