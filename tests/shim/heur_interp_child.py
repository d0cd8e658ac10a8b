"""Run under TRITON_INTERPRET=1 by test_shim.py (or by hand on a GPU, without it): @triton.heuristics kernels
(runtime_kernels.py) with the shim, on real tensors. `y` is a view at the front of a larger zeroed buffer: a store past `n` (an EVEN=True launch
whose BLOCK does not divide n) lands in the guard and is counted, where on a GPU it corrupts the heap.
argv[1] is the store; prints one `@@{json}` line: scenario → (BLOCK, EVEN) seen by the grid, errors, log."""
from __future__ import annotations

import json
import os
import sys

import torch
import triton

import kernlint.shim as shim
import runtime_kernels as K

N = 4224          # 33 * 128: EVEN for BLOCK=128 only
DEV = "cuda" if os.environ.get("TRITON_INTERPRET") != "1" and torch.cuda.is_available() else "cpu"


def launch(kernel, **kw) -> dict:
    x = torch.randn(N, device=DEV)
    buf = torch.zeros(N + 1024, device=DEV)
    y = buf[:N]
    seen: list = []

    def grid(meta):
        seen.append((meta["BLOCK"], bool(meta.get("EVEN"))))
        return (triton.cdiv(N, meta["BLOCK"]),)
    kernel[grid](x, y, N, **kw)
    if DEV == "cuda":
        torch.cuda.synchronize()
    return {"seen": seen, "wrong": int((y != 2 * x).sum()), "guard_written": int((buf[N:] != 0).sum())}


def main() -> None:
    t = iter(range(1, 1000))   # no GPU to time: each config runs once, timings in order (the first wins)
    K.scale_even_autotuned.__dict__["do_bench"] = lambda fn, quantiles: (fn(), [float(next(t))] * 3)[1]
    out: dict = {}
    for name, mode, kernel, kw in [("autotune_seed", "seed", K.scale_even_autotuned, {}),
                                   ("heuristics_only", "replace", K.scale_even, {"BLOCK": 128})]:
        with shim.install(sys.argv[1], target="h100", mode=mode) as s:
            out[name] = launch(kernel, **kw)
            out[name]["log"] = [list(e) for e in s.log]
    out["device"] = DEV
    print("@@" + json.dumps(out))


if __name__ == "__main__":
    main()
