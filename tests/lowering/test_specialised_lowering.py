"""Estimates use the graph lowered for the config's constexprs (KernelIR.specialise, estimate.specialised),
as Triton's code generator traces one: a name bound to a constexpr in one branch of a constexpr `if` and to a
run-time value in the other stays a compile-time value, and so do the loop bounds built from it.

Expected bytes are Triton 3.9 `metadata.shared` of tests/truth/specialised_lowering.py (fp16 tiles, fp32
output, 4 warps, BLOCK 64 × 64 × 64 = 8,192 B per tile), compiled for sm_80 / sm_90 / sm_100:

* merged_bound_kernel (`n = MAX_K`, else a loaded length; VARLEN=False): MAX_K = 64 is one trip, folded
  away before pipelining: q + k = 16,384 (+ 8-B MMA barrier on sm_100); MAX_K = 256 pipelines k:
  24,576 / 32,768 / 32,784. Before: the merged bound was a run-time value, 24,576 / 32,768 / 32,784 for both.
  (flash-attn AMD attn_fwd, `seqlen_k = MAX_SEQLENS_K`: 73,728 estimated against 16,384 at 64², sm_90.)
* two_dot_kernel (q·kᵀ then p·v): unpipelined (num_stages 1, or one trip) each tcgen05 MMA waits on its own
  8-B barrier: 16,384 / 16,384 / 16,392; pipelined (N_CTX 256, 3 stages) 40,960 / 57,344 / 57,376.
* scaled_a_kernel (A = x · exp(s)[None, :] under `if HAS_SCALE`): s is pipelined with x (2 × s-row bytes)
  when a thread gets ≥ 4 contiguous bytes of it: fp16 s at stride 1 → 33,024 / 41,216 / 41,232; fp32 s at a
  run-time stride → 33,280 / 41,472 / 41,488; fp16 s at a run-time stride is 2 B per thread, a register
  load: 32,768 / 40,960 / 40,976 (mamba-ssm _chunk_scan_bwd_dstates_kernel's dA_cs_k).
"""
from __future__ import annotations

import pytest

from kernlint.pipeline.api import Settings, lint_paths
from kernlint.ir.nodes import OpKind

from conftest import ROOT

FIXTURE = str(ROOT / "tests/truth/specialised_lowering.py")
TARGETS = ("a100", "h100", "b200")
TILES = {"num_warps": 4}


def _shared(kernel: str, cfg: dict[str, object], args: dict[str, str]) -> dict[str, int]:
    res = lint_paths([FIXTURE], Settings(targets=TARGETS, cli_configs=(cfg,), arg_types=args))
    k = next(k for k in res.files[0].kernels if k.jit.name == kernel)
    return {e.target.key: e.smem.total for e in k.estimates if e.config.origin == "cli"}


MERGED = [(64, (16384, 16384, 16392)), (256, (24576, 32768, 32784))]


@pytest.mark.parametrize("max_k,truth", MERGED)
def test_constexpr_branch_keeps_loop_bound_static(max_k: int, truth: tuple[int, int, int]) -> None:
    cfg = {"MAX_K": max_k, "VARLEN": False, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_D": 64, **TILES, "num_stages": 3}
    got = _shared("merged_bound_kernel", cfg, {"o_ptr": "*fp32", "lens_ptr": "*i32", "*": "*fp16"})
    assert got == dict(zip(TARGETS, truth))


TWO_DOT = [(256, 1, (16384, 16384, 16392)), (64, 3, (16384, 16384, 16392)), (256, 3, (40960, 57344, 57376))]


@pytest.mark.parametrize("n_ctx,stages,truth", TWO_DOT)
def test_unpipelined_tcgen05_mma_barrier(n_ctx: int, stages: int, truth: tuple[int, int, int]) -> None:
    cfg = {"N_CTX": n_ctx, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_D": 64, **TILES, "num_stages": stages}
    got = _shared("two_dot_kernel", cfg, {"o_ptr": "*fp32", "*": "*fp16"})
    assert got == dict(zip(TARGETS, truth))


SCALED = [("1", "fp16", (33024, 41216, 41232)), ("i32", "fp32", (33280, 41472, 41488)),
          ("i32", "fp16", (32768, 40960, 40976))]


@pytest.mark.parametrize("stride,dtype,truth", SCALED)
def test_narrow_feeding_load_is_not_pipelined(stride: str, dtype: str, truth: tuple[int, int, int]) -> None:
    cfg = {"HAS_SCALE": True, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, **TILES, "num_stages": 3}
    got = _shared("scaled_a_kernel", cfg, {"o_ptr": "*fp32", "s_ptr": f"*{dtype}", "stride_s": stride,
                                           "*": "*fp16"})
    assert got == dict(zip(TARGETS, truth))


def test_generic_graph_keeps_both_branches() -> None:
    """The IR on the analysis (rules, `kernlint debug --ir`) is still the one graph for every config."""
    res = lint_paths([FIXTURE], Settings(targets=("h100",), arg_types={"*": "*fp16"}))
    k = next(k for k in res.files[0].kernels if k.jit.name == "merged_bound_kernel")
    assert k.ir.branch_symbols == frozenset({"VARLEN"}) and k.ir.specialise is not None
    assert any(op.kind == OpKind.LOAD and op.line == 11 for op, _ in k.ir.walk())    # the VARLEN branch's load
    spec = k.ir.specialise({"VARLEN": False})
    assert not any(op.kind == OpKind.LOAD and op.line == 11 for op, _ in spec.walk())
    assert spec.specialise is None
