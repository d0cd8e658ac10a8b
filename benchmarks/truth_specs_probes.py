"""Probe specs (read by benchmarks/record_truth.py): kernels written to check one register rule each, outside
the development files. tests/truth/chained_dots.py: a fused MLP (`h = x @ w1`, SiLU, `acc += h @ w2`), a SwiGLU
MLP (two first dots) and a GEMM with a GELU epilogue (its product read several times). Recorded with::

    /work/venv-triton/bin/python benchmarks/record_truth.py --specs benchmarks/truth_specs_probes.py \\
        --out benchmarks/truth/probes-triton-3.9.json -j 2
"""
from __future__ import annotations

_F = "tests/truth/chained_dots.py"


def _cfgs(keys: tuple[str, str], rows: list[tuple[int, int, int]]) -> list[dict]:
    return [{keys[0]: a, keys[1]: b, "num_warps": w, "num_stages": 2} for a, b, w in rows]


SPECS: list[dict] = [
    {"file": _F, "kernel": "fused_mlp_kernel",
     "args": {"x_ptr": "*fp16", "w1_ptr": "*fp16", "w2_ptr": "*fp16", "out_ptr": "*fp16", "M": "i32"},
     "constexprs": {"D": 64, "H": 1024},
     "configs": _cfgs(("BLOCK_M", "BLOCK_H"), [(64, 64, 8), (64, 32, 8), (128, 64, 16), (32, 64, 4), (64, 64, 4),
                                              (128, 64, 8), (32, 32, 8)])},
    {"file": _F, "kernel": "swiglu_mlp_kernel",
     "args": {"x_ptr": "*fp16", "wg_ptr": "*fp16", "wu_ptr": "*fp16", "w2_ptr": "*fp16", "out_ptr": "*fp16"},
     "constexprs": {"D": 64, "H": 1024},
     "configs": _cfgs(("BLOCK_M", "BLOCK_H"), [(64, 64, 4), (64, 32, 4), (128, 64, 8), (64, 64, 8)])},
    {"file": _F, "kernel": "gemm_gelu_kernel",
     "args": {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16"},
     "constexprs": {"K": 64, "N": 4096},
     "configs": _cfgs(("BLOCK_M", "BLOCK_N"), [(64, 64, 4), (128, 128, 8), (128, 64, 4), (64, 128, 4)])},
]
