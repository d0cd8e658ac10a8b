"""Lowering: a kernel's libcst body (with the frontend's facts) → the graph of kernlint.ir.

The only layer that reads both libcst and the graph: the analyses after it see kernlint.ir alone.
"""
from __future__ import annotations
