"""Pure analyses over the kernel graph, per (kernel, config, target): liveness, registers, smem, occupancy."""
from __future__ import annotations
