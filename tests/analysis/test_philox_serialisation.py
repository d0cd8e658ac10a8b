"""ptxas runs `tl.rand`'s independent Philox chains one after another when that reaches full occupancy
(kernlint/analysis/spill_collapse.py, apply_philox_serialisation).

Expected register counts are ptxas truth: probe compiles (Triton 3.9.0 with the ptxas of its bundle, 2026-11-30)
of the kernel below, which stores tl.rand and nothing else, and the suite's residual_dropout_kernel from
benchmarks/truth/suite-triton-3.9.json.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT

from kernlint.pipeline.api import Settings, lint_paths

RAND = '''
import triton
import triton.language as tl


@triton.jit
def rand_only(out_ptr, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    r = tl.rand(seed, offs)
    tl.store(out_ptr + offs, r, mask=offs < n)
'''
ARGS = {"out_ptr": "*fp32", "seed": "i32", "n": "i32"}

# (target, elements per thread, num_warps, ptxas registers)
PROBES = [
    ("h100", 8, 2, 32), ("h100", 8, 4, 32), ("h100", 8, 8, 32),   # serialised to full occupancy
    ("b200", 8, 4, 32), ("b200", 8, 8, 32),
    ("h100", 8, 1, 48),    # 1 warp: 64 registers are full occupancy, every chain stays in flight
    ("h100", 16, 2, 56),   # twice the elements: ptxas keeps most chains (not 32)
    ("h100", 32, 4, 143),
    ("a100", 8, 4, 40),    # sm_80 (ptxas 12.9) keeps more chains in flight than 32
]


def _estimate(path: Path, target: str, cfg: dict, args: dict[str, str], kernel: str) -> int:
    res = lint_paths([str(path)], Settings(targets=(target,), cli_configs=(cfg,), arg_types=args))
    return next(e.registers.allocated for f in res.files for k in f.kernels if k.jit.name == kernel
                for e in k.estimates if e.config.origin == "cli")


@pytest.mark.parametrize("target,per_thread,warps,ptxas", PROBES)
def test_rand_only_probes(tmp_path: Path, target: str, per_thread: int, warps: int, ptxas: int) -> None:
    path = tmp_path / "rand_probe.py"
    path.write_text(RAND)
    cfg = {"BLOCK": per_thread * 32 * warps, "num_warps": warps, "num_stages": 1}
    est = _estimate(path, target, cfg, ARGS, "rand_only")
    # four 32-bit counter words per element in flight, plus the key pair, offsets and address, would be
    # more than 4 x per_thread registers: 32 means the chains ran one after another
    if ptxas == 32:
        assert 4 * per_thread + 4 > ptxas and est == 32
    assert abs(est - ptxas) / ptxas <= 0.25, (target, cfg, est, ptxas)


def test_residual_dropout_at_eight_elements_per_thread_serialises() -> None:
    recs = [r for r in json.load(open(ROOT / "benchmarks/truth/suite-triton-3.9.json"))["records"]
            if r["kernel"] == "residual_dropout_kernel" and r["cap"] in (90, 100)
            and r["config"]["BLOCK_SIZE"] == 8 * 32 * r["config"]["num_warps"]]
    assert len(recs) == 6
    for r in recs:
        target = {90: "h100", 100: "b200"}[r["cap"]]
        est = _estimate(ROOT / "tests/truth/suite_kernels/pointwise.py", target, dict(r["config"]), r["args"],
                        "residual_dropout_kernel")
        assert r["regs"] == 32 and est == 32, (r["config"], r["cap"], est)
