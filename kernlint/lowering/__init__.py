"""Lowering: a kernel's libcst body (with the frontend's facts) → the graph of kernlint.ir.

It reads libcst and builds kernlint.ir; the analyses read the graph alone, never how it was built
(tests/project/test_layers.py keeps lowering and analysis from importing each other).
"""
from __future__ import annotations
