"""Per-GPU hardware facts. Numbers only; the models that use them live in kernlint.analysis."""
from __future__ import annotations

from kernlint.hardware.specs import SPECS, GpuSpec, UnknownTarget, resolve_target, resolve_targets

__all__ = ["SPECS", "GpuSpec", "UnknownTarget", "resolve_target", "resolve_targets"]
