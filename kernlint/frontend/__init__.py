"""libcst frontend: parse files, resolve names, find kernels, configs, launch sites and helpers.

Nothing here imports, executes or evals the linted code; values are computed by walking the syntax tree.
"""
from __future__ import annotations
