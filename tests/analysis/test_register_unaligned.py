"""Loaded operand addresses (kernlint/analysis/register_unaligned.py, lowering/tl_dispatch.py `tl.pointer_type`).

Facts from the Triton 3.9 TTGIR of the suite's grouped_matmul_kernel (tests/truth/suite_kernels/grouped_gemm.py,
sm_90, 64×64×32, 4 warps): the C store through `tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float16))`
is laid out `sizePerThread = [1, 1]` (not vectorised: the loaded address has no known alignment), while the
A and B loads, hinted with `tl.multiple_of` inside the K loop, are 16-byte `async_copy_global_to_local`s.
"""
from __future__ import annotations

import json

from conftest import ROOT

from kernlint.analysis.liveness import compute_liveness
from kernlint.analysis.register_unaligned import unaligned_pointer_costs
from kernlint.pipeline.api import Settings, lint_paths
from kernlint.ir.nodes import OpKind

FILE = "tests/truth/suite_kernels/grouped_gemm.py"


def _kernel():  # type: ignore[no-untyped-def]
    rec = next(r for r in json.load(open(ROOT / "benchmarks/truth/suite-triton-3.9.json"))["records"]
               if r["kernel"] == "grouped_matmul_kernel")
    res = lint_paths([str(ROOT / FILE)], Settings(targets=("h100",), arg_types=rec["args"]))
    return next(k for f in res.files for k in f.kernels if k.jit.name == "grouped_matmul_kernel")


def test_pointer_type_cast_gives_pointer_tiles() -> None:
    k = _kernel()
    stores = [op for op, _ in k.ir.walk() if op.kind == OpKind.STORE]
    loads = [op for op, _ in k.ir.walk() if op.kind == OpKind.LOAD and op.result is not None and op.result.shape]
    assert [s.operands[0].dtype for s in stores] == ["ptr<fp16>"]
    assert {ld.operands[0].dtype for ld in loads} == {"ptr<fp16>"}


def test_only_the_unhinted_store_address_is_unaligned() -> None:
    k = _kernel()
    env = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "NUM_SM": 132}
    live = compute_liveness(k.ir, env)
    costs = unaligned_pointer_costs(live, env, threads=128)
    store = next(op for op, _ in k.ir.walk() if op.kind == OpKind.STORE)
    assert set(costs) == {store.operands[0].id}
    # 64 × 64 elements over 128 threads: 32 elements, a 64-bit address each (hand arithmetic)
    assert costs[store.operands[0].id] == 2 * 64 * 64 / 128
