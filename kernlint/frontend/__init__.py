"""Frontend: facts read from source. libcst parses files, resolves names, finds kernels, configs, launch sites
and helpers; `host_facts` reads the host side (grid, loop trips, asserts) with `ast` for recommend and calibrate.

Nothing here imports, executes or evals the linted code; values are computed by walking the syntax tree.
"""
from __future__ import annotations
