"""Text dump of a kernel graph for `kernlint debug --ir`."""
from __future__ import annotations

from kernlint.ir.nodes import KernelIR, Op, OpKind, Region


def render_ir(ir: KernelIR) -> str:
    lines = [f"kernel {ir.name}  constexprs: {', '.join(ir.constexprs) or '-'}"]
    if ir.pointer_params:
        lines.append("  pointers: " + ", ".join(f"{k}: *{v}" for k, v in ir.pointer_params.items()))

    def op_text(op: Op) -> str:
        res = f"{op.result} = " if op.result is not None else ""
        args = ", ".join(str(v) for v in op.operands)
        extra = {k: v for k, v in op.attrs.items() if k in ("fn", "axis", "loop", "num_stages", "cond")}
        attrs = " " + " ".join(f"{k}={v}" for k, v in extra.items() if v is not None) if extra else ""
        return f"{res}{op.kind}({args}){attrs}  # line {op.line}"

    def visit(region: Region, indent: int) -> None:
        for op in region.ops:
            lines.append("  " * indent + op_text(op))
            if op.kind == OpKind.FOR:
                for c in op.attrs.get("carried", ()):
                    lines.append("  " * (indent + 1) + f"carried {c.name}: {c.init} -> {c.arg} -> {c.yielded}")
            for i, sub in enumerate(op.regions):
                if op.kind == OpKind.IF:
                    lines.append("  " * (indent + 1) + ("then:" if i == 0 else "else:"))
                visit(sub, indent + 2 if op.kind == OpKind.IF else indent + 1)

    visit(ir.body, 1)
    for u in ir.unmodelled:
        lines.append(f"  ! not modelled, line {u.line}: {u.construct}")
    return "\n".join(lines)
