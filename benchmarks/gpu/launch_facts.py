"""The launch facts of the GPU benchmark's kernels (benchmarks/gpu_configs.py), for kernlint's analysis.

Used by `gpu_configs.py plan` and by replay.py / fit_model.py; the GPU side (`gpu_configs.py run`) never
imports kernlint, so this lives apart from it.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

# What the launch code of gpu_configs.py passes that the source alone cannot say, stated the way a user would with
# `kernlint recommend --arg` (since run 12): element types and the unit inner strides Triton specialises
# (a stride of 1 makes the tile contiguous: vector loads, one address register per row, not per element).
# Pointers not listed are fp16 (kernlint's default).
LAUNCH_ARGS: dict[str, dict[str, str]] = {
    "matmul": {"stride_ak": "1", "stride_bn": "1", "stride_cn": "1"},
    "matmul_bf16": {"*": "*bf16", "stride_ak": "1", "stride_bn": "1", "stride_cn": "1"},
    "attention": {"M": "*fp32", "sm_scale": "fp32", "stride_qk": "1", "stride_kk": "1", "stride_vk": "1",
                  "stride_ok": "1"},
    "layernorm": {"W": "*fp32", "B": "*fp32", "Mean": "*fp32", "Rstd": "*fp32", "eps": "fp32"},
    "rmsnorm": {"rstd_ptr": "*fp32", "eps": "fp32"},
    "cross_entropy": {"logits_ptr": "*bf16", "labels_ptr": "*i64", "loss_ptr": "*fp32", "lse_ptr": "*fp32"},
}


def analysed_kernels() -> dict[str, Any]:
    """Benchmark kernel name → kernlint's analysis of it, linted with that kernel's LAUNCH_ARGS."""
    from gpu_configs import KERNELS  # type: ignore[import-not-found]

    from kernlint.pipeline.api import Settings, lint_paths
    out: dict[str, Any] = {}
    for name, (file, kname, _) in KERNELS.items():
        res = lint_paths([str(ROOT / file)], Settings(targets=("h200",), arg_types=LAUNCH_ARGS.get(name, {})))
        out[name] = next(k for f in res.files for k in f.kernels if k.jit.name == kname)
    return out
