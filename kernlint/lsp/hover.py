"""Hover content: the `kernlint explain` table of one kernel as markdown (no pygls here).

Hovering a kernel's decorator or `def` line shows every config × target; hovering a `triton.Config(...)`
or launch line shows only the configs that line defines, so the table answers "what does *this* cost".
"""
from __future__ import annotations

from kernlint.analysis.estimate import KernelEstimate
from kernlint.pipeline.rule import KernelAnalysis

_HEADER = ("config", "target", "registers / budget", "spill", "shared memory", "tmem", "CTAs/SM", "occupancy",
           "limiter")


def kernel_at_line(kernels: list[KernelAnalysis], line: int) -> tuple[KernelAnalysis, int | None] | None:
    """The kernel whose header (decorators..def) covers `line` (→ all configs), or whose config or launch
    line it is (→ that line only, returned as the second element)."""
    for k in kernels:
        if k.jit.decorator_line <= line <= k.jit.line:
            return k, None
    for k in kernels:
        if any(p.line == line for p in k.points):
            return k, line
    return None


def _cell(text: str) -> str:
    # A `|` inside a cell would split the markdown table row.
    return text.replace("|", "\\|").replace("\n", " ")


def _row(e: KernelEstimate) -> list[str]:
    label = e.config.label()
    if not e.estimated:
        return [label, e.target.key, "?", "?", e.not_estimated_because, "", "", "", ""]
    r, s, o = e.registers, e.smem, e.occupancy
    assert r is not None and s is not None and o is not None
    regs = f"{r.demand} / {r.budget}" + (" ⚠" if r.demand > r.budget else "")
    spill = f"≈{r.spill_bytes:,} B" if r.spill_bytes else "-"
    smem = f"{s.total:,} B / {e.target.smem_per_cta_optin:,} B"
    if s.buffers:
        smem += " (" + "; ".join(f"{b.label} {b.bytes:,} B" for b in s.buffers) + ")"
    tmem = f"{s.tmem_columns}/{e.target.tmem_columns} cols" if e.target.tmem_columns else "-"
    return [label, e.target.key, regs, spill, smem, tmem, str(o.ctas_per_sm), f"{o.occupancy:.0%}", o.limiter]


def hover_markdown(k: KernelAnalysis, only_line: int | None = None, max_rows: int = 40) -> str:
    estimates = [e for e in k.estimates if only_line is None or e.config.line == only_line]
    lines = [f"**kernlint** — `{k.jit.qualname}`: estimated registers, shared memory and occupancy", ""]
    if k.ir.assumptions:
        lines += ["*assumes:* " + _cell("; ".join(k.ir.assumptions)), ""]
    for u in k.ir.unmodelled:
        lines += [f"*not modelled:* line {u.line}: {_cell(str(u.construct))}", ""]
    if not estimates:
        lines.append("No config to estimate.")
        return "\n".join(lines)
    lines.append("| " + " | ".join(_HEADER) + " |")
    lines.append("|" + "|".join("---:" if h in ("CTAs/SM", "occupancy") else "---" for h in _HEADER) + "|")
    for e in estimates[:max_rows]:
        lines.append("| " + " | ".join(_cell(c) for c in _row(e)) + " |")
    if len(estimates) > max_rows:
        lines += ["", f"… {len(estimates) - max_rows} more rows: `kernlint explain {k.jit.path}::{k.jit.qualname}`"]
    confidences = sorted({e.confidence.value for e in estimates})
    lines += ["", f"confidence: {', '.join(confidences)}"]
    return "\n".join(lines)
