"""A reduced row stored as an [M, 1] tile converts the whole row, in the reduction's dtype, through shared memory
(kernlint/analysis/smem_reduced_store.py `_expanded_row`). Truth: tests/truth/expanded_row.py's docstring."""
from __future__ import annotations

from pathlib import Path

from kernlint.pipeline.api import Settings, lint_paths

PROBE = Path(__file__).resolve().parents[1] / "truth" / "expanded_row.py"
# (BLOCK_M, BLOCK_N) -> Triton 3.9 sm_90 shared bytes: BLOCK_M fp32 values (tl.max reduces fp16 in fp32)
TRUTH = {(16, 256): 64, (64, 64): 256, (1024, 64): 4096}


def test_expanded_reduced_row_matches_triton() -> None:
    configs = tuple({"BLOCK_M": m, "BLOCK_N": n, "num_warps": 4, "num_stages": 3} for m, n in TRUTH)
    result = lint_paths([str(PROBE)], Settings(targets=("h100",), cli_configs=configs))
    [kernel] = [k for f in result.files for k in f.kernels]
    got = {(e.config.constexprs["BLOCK_M"], e.config.constexprs["BLOCK_N"]): e.smem.total
           for e in kernel.estimates if e.config.origin == "cli"}
    assert got == TRUTH
    assert all(m * 4 == b for (m, _), b in TRUTH.items())
