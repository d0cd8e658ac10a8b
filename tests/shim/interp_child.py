"""Run under TRITON_INTERPRET=1 by test_shim.py: kernels from examples/ with and without the shim."""
from __future__ import annotations

import json
import sys

import torch

from examples.matmul import matmul
from examples.rmsnorm import rms_norm
from examples.vector_add import vector_add
import kernlint.shim as shim

store = sys.argv[1]
torch.manual_seed(0)
out: dict = {}
x, y = torch.randn(5000), torch.randn(5000)
a, b = torch.randn(64, 32, dtype=torch.float16), torch.randn(32, 48, dtype=torch.float16)
xr, w = torch.randn(8, 300, dtype=torch.float16), torch.randn(300, dtype=torch.float16)
ref = {"add": x + y, "mm": a.float() @ b.float(), "rms": rms_norm(xr, w).float()}  # rms: author config
with shim.install(store, target="h100") as s:
    got = {"add": vector_add(x, y), "mm": matmul(a, b).float(), "rms": rms_norm(xr, w).float()}
    out["log"] = [list(e) for e in s.log]
out["err"] = {k: float((got[k] - ref[k]).abs().max() / ref[k].abs().max()) for k in ref}
print("@@" + json.dumps(out))
