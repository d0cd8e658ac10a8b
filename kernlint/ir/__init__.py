"""Immutable per-kernel dataflow graph: tile values with symbolic shapes, ops, structured loops and ifs."""
from __future__ import annotations
