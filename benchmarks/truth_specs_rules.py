"""Ground-truth specs for the kernels used by the rules' VALID/INVALID examples (rules/_cases.py)."""
from __future__ import annotations

_ROW = {"x_ptr": "*fp16", "y_ptr": "*fp16", "n_cols": "i32", "stride": "i32"}
_MM = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
       "stride_am": "i32", "stride_ak": 1, "stride_bk": "i32", "stride_bn": 1, "stride_cm": "i32", "stride_cn": 1}
SPECS = [
    {"file": "tests/truth/rule_kernels.py", "kernel": "scale_rows", "args": _ROW, "constexprs": {},
     "configs": [{"BLOCK": b, "num_warps": w, "num_stages": 3}
                 for b, w in ((1024, 4), (8192, 4), (16384, 4), (16384, 8), (32768, 8), (32768, 16), (65536, 8))]},
    {"file": "tests/truth/rule_kernels.py", "kernel": "matmul_kernel", "args": _MM, "constexprs": {},
     "configs": [{"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "num_warps": w, "num_stages": s}
                 for m, n, k, w, s in ((128, 128, 64, 8, 4), (128, 256, 64, 8, 3), (256, 256, 64, 4, 3),
                                       (256, 256, 64, 8, 4), (64, 64, 16, 4, 3), (64, 64, 32, 4, 3))]},
]
