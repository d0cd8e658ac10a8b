"""kernlint: a static linter for Triton and Helion GPU kernels.

It reads kernel source without importing or running it, builds a dataflow graph per kernel and
estimates registers, shared memory, tensor memory and occupancy per config and per GPU.
"""
from __future__ import annotations

__version__ = "0.1.0"
