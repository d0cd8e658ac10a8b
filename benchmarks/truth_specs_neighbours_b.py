"""Neighbourhood set B: the same construction as benchmarks/truth_specs_neighbours.py around each kernel's
*second* usable config (set A uses the first). Recorded to check, on anchor/neighbour pairs nobody tuned on,
what was chosen on set A (the anchor's damping, kernlint/calibrate/anchor.py)::

    /work/venv-triton/bin/python benchmarks/record_truth.py --specs benchmarks/truth_specs_neighbours_b.py \\
        --caps 90,100 --out benchmarks/truth/neighbours-b-triton-3.9.json -j 2
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("_kl_neighbours", Path(__file__).resolve().parent / "truth_specs_neighbours.py")
assert _spec is not None and _spec.loader is not None
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)

SPECS = _mod.build(rank=1)
