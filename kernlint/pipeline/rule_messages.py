"""Message fragments shared by rules: how a config, a target and a resource breakdown are written."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:   # annotations only: rules import this module, and importing rules must stay cheap
    from kernlint.analysis.estimate import KernelEstimate


def where(e: KernelEstimate) -> str:
    return f"on {e.target.name} ({e.target.arch})"


def smem_breakdown(e: KernelEstimate) -> str:
    if e.smem is None or not e.smem.buffers:
        return ""
    return "; ".join(f"{b.label}: {b.detail}" for b in e.smem.buffers)


def config_text(e: KernelEstimate) -> str:
    return e.config.label()


def unbound_note(constexpr_names: tuple[str, ...], e: KernelEstimate) -> str:
    """`; hidden_dim has no value here, so the estimate treats it as a run-time value` for the constexprs the config does
    not bind (a host variable at the launch, a heuristic): the estimate treated them as unknown integers, and a
    value Triton would fold can change it a lot (fla's rwkv7 mixing kernel: 324 registers estimated without
    `hidden_dim`, ptxas 90-96 with it). Empty when every constexpr has a value."""
    missing = [n for n in constexpr_names if n not in e.config.constexprs]
    if not missing:
        return ""
    shown = ", ".join(f"`{n}`" for n in missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
    if len(missing) == 1:
        return f"; {shown} has no value here, so the estimate treats it as a run-time value (set it with --config)"
    return f"; {shown} have no value here, so the estimate treats them as run-time values (set them with --config)"


def assumed_types_note(ir: object) -> str:
    """`; assumes A, B point to fp16 (the default: nothing in the source states their element type; --arg A=*i8
    if not)` when the kernel's pointer element types were assumed rather than stated or inferred; empty
    otherwise. A shared-memory finding scales with those types, so it is only as sure as the assumption."""
    names = tuple(getattr(ir, "assumed_pointees", ()))
    if not names:
        return ""
    pointee = getattr(ir, "pointer_params", {}).get(names[0], "fp16")
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return (f"; assumes {shown} {'points' if len(names) == 1 else 'point'} to {pointee} (the default: nothing in the "
            f"source states the element type; give it with --arg {names[0]}=*bf16, *i8, ...)")
