"""The shared-memory estimate's result types (kept apart so the helpers of smem.py can build buffers)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SmemBuffer:
    label: str
    bytes: int
    detail: str
    line: int


@dataclass(frozen=True, slots=True)
class SmemEstimate:
    total: int
    buffers: tuple[SmemBuffer, ...]   # the buffers alive at the peak
    tmem_columns: int
    complete: bool                    # False when a shape was unknown
