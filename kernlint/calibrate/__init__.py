"""Ground truth: compile chosen configs with Triton's real compiler (no GPU) and compare with the estimates.

Deliberately empty of imports: `kernlint.calibrate.worker` runs in interpreters that only have Triton and
the standard library (e.g. another venv given with ``--python``), so nothing here may pull in libcst or rich.
Triton itself is imported lazily, and only by ``triton_compile`` (inside worker processes).

Modules:
  triton_compile  one compile: signature/attrs from a spec, ``triton.compile``, ptxas log → record (stdlib + triton)
  worker          JSON-lines worker process and the pool that drives it
  scratch         the scratch module (kernel + jit helpers + constexpr globals), built from source, never imported
  signature       argument kinds (pointer/scalar/constexpr) and the per-argument spec with stated defaults
  session         configs (points, --config, --sweep), cache, estimate-vs-truth rows
  table           rich table and JSON output
"""
from __future__ import annotations
