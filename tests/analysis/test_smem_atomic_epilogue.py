"""The layout conversion before an atomic epilogue (kernlint/analysis/smem_convert.py): split-K's
`tl.atomic_add(c_ptrs, acc)` is laid out for coalescing like a store, so the wgmma accumulator is converted through
shared memory first. Truth: Triton 3.9 `metadata.shared`, benchmarks/truth/neighbours-triton-3.9.json."""
from __future__ import annotations

import json

from conftest import ROOT

from benchmarks import accuracy


def test_split_k_atomic_epilogue_converts_the_accumulator() -> None:
    config = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "SPLIT_K": 4, "num_warps": 8, "num_stages": 3}
    records = [r for r in json.loads((ROOT / "benchmarks/truth/neighbours-triton-3.9.json").read_text())["records"]
               if r["kernel"] == "splitk_matmul_kernel" and r["cap"] == 90 and r["config"] == config]
    ((record, estimate),) = accuracy.estimate_records(records)
    pipeline = 3 * (128 * 32 + 32 * 128) * 2      # wgmma: num_stages A and B tiles, fp16
    conversion = 128 * 128 * 4                    # the fp32 accumulator tile, whole, in the scratch
    # the scratch reuses the pipeline's bytes after the loop: the larger of the two is the kernel's total
    assert record["shared"] == max(pipeline, conversion) == 65_536
    assert estimate.smem.total == record["shared"], [(b.label, b.bytes) for b in estimate.smem.buffers]
