"""Message fragments shared by rules: how a config, a target and a resource breakdown are written."""
from __future__ import annotations

from kernlint.analysis.estimate import KernelEstimate


def where(e: KernelEstimate) -> str:
    return f"on {e.target.name} ({e.target.arch})"


def smem_breakdown(e: KernelEstimate) -> str:
    if e.smem is None or not e.smem.buffers:
        return ""
    return "; ".join(f"{b.label}: {b.detail}" for b in e.smem.buffers)


def config_text(e: KernelEstimate) -> str:
    return e.config.label()
