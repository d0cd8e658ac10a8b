"""Dot operands loaded under 4 bytes per thread are register loads, not cp.async-pipelined: the access width is
the contiguity capped by the pointer's divisibility (axis_divisibility.py, async_copy.py), followed through
loop-carried pointers (with `tl.multiple_of` set on the carried pointer in the loop), and in loops with
several dots such a tile is one shared copy (dot_buffers.py).

Expected bytes are Triton 3.9 `metadata.shared` of tests/truth/register_loaded_operands.py (fp16, fp32
output, 64 × 64 × 64 tiles of 8,192 B, 4 warps), as (sm_80, sm_90, sm_100):

* odd_rows_kernel, ROW = 3: every row of the carried A (and B with BOTH) starts at an odd element, so a thread
  moves 2 B: A is one shared copy on sm_80 / sm_90 and two on sm_100 beside B's normal buffers; ROW = 64 is
  the ordinary pipelined matmul. Before: the carried pointers' divisibility was never followed (every
  operand pipelined: the ROW = 64 numbers).
* clamped_b_kernel: B's columns clamped by tl.where (contiguity 1): the same numbers as ROW = 3 with A narrow.
  (B's addresses are computed in the loop: a carried pointer's contiguity is taken as full, see
  async_copy_bytes, so a carried clamped B would be counted as pipelined.)
* overlapping_k_kernel (attention, two dots, Kᵀ at k_ptr + n·SKN + d): SKN = 1 (unsloth _lh_fwd's spec)
  makes K a register load, one copy on every target; SKN = 64 pipelines it. Before: K pipelined.
* hinted_base_kernel: A's base is loaded (divisibility 1): A is a register load; `tl.multiple_of(a_ptrs,
  [16, 16])` on the carried pointer in the loop makes it an ordinary pipelined operand again (suite
  grouped_matmul_kernel).
"""
from __future__ import annotations

import pytest

from kernlint.pipeline.api import Settings, lint_paths

from conftest import ROOT

FIXTURE = str(ROOT / "tests/truth/register_loaded_operands.py")
TARGETS = ("a100", "h100", "b200")
TILE = {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4}


def _shared(kernel: str, cfg: dict[str, object], **args: str) -> tuple[int, ...]:
    res = lint_paths([FIXTURE], Settings(targets=TARGETS, cli_configs=(cfg,),
                                         arg_types={"c_ptr": "*fp32", "o_ptr": "*fp32", "*": "*fp16", **args}))
    k = next(k for k in res.files[0].kernels if k.jit.name == kernel)
    got = {e.target.key: e.smem.total for e in k.estimates if e.config.origin == "cli"}
    return tuple(got[t] for t in TARGETS)


ODD_ROWS = [
    (3, False, 2, (16384, 24576, 32784)), (3, False, 3, (24576, 32768, 40976)), (3, False, 4, (32768, 40960, 49168)),
    (3, True, 2, (16384, 16384, 32784)), (3, True, 3, (16384, 16384, 32784)), (3, True, 4, (16384, 16384, 32784)),
    (64, False, 3, (32768, 49152, 49168)), (64, True, 4, (49152, 65536, 65552)),
]


@pytest.mark.parametrize("row,both,stages,truth", ODD_ROWS)
def test_unaligned_rows_are_register_loads(row: int, both: bool, stages: int, truth: tuple[int, ...]) -> None:
    cfg = {"ROW": row, "BOTH": both, "BLOCK_K": 64, **TILE, "num_stages": stages}
    assert _shared("odd_rows_kernel", cfg) == truth


@pytest.mark.parametrize("stages,truth", [(2, (16384, 24576, 32784)), (3, (24576, 32768, 40976)),
                                          (4, (32768, 40960, 49168))])
def test_clamped_operand_in_a_plain_loop(stages: int, truth: tuple[int, ...]) -> None:
    cfg = {"BLOCK_K": 64, **TILE, "num_stages": stages}
    assert _shared("clamped_b_kernel", cfg) == truth


OVERLAPPING = [
    (1, 64, 2, (24576, 32768, 32800)), (1, 64, 3, (32768, 40960, 40992)),
    (64, 64, 2, (24576, 40960, 40992)), (64, 64, 3, (40960, 57344, 57376)),
    (1, 128, 3, (131072, 163840, 163872)),
]


@pytest.mark.parametrize("skn,block,stages,truth", OVERLAPPING)
def test_attention_with_register_loaded_k(skn: int, block: int, stages: int, truth: tuple[int, ...]) -> None:
    cfg = {"SKN": skn, "BLOCK_M": block, "BLOCK_N": block, "BLOCK_D": block,
           "num_warps": 4 if block == 64 else 8, "num_stages": stages}
    assert _shared("overlapping_k_kernel", cfg) == truth


@pytest.mark.parametrize("hint,truth", [(False, (24576, 32768, 40976)), (True, (32768, 49152, 49168))])
def test_hint_on_a_carried_pointer(hint: bool, truth: tuple[int, ...]) -> None:
    cfg = {"HINT": hint, "BLOCK_K": 64, **TILE, "num_stages": 3}
    assert _shared("hinted_base_kernel", cfg, table="*i64") == truth
