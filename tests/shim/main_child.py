"""Run as a script by test_shim_runtime.py, so its kernel's `__module__` is `__main__`: the shim must match it
by its file, as `kernlint recommend tests/shim/main_child.py` named it. Same fake driver as runtime_child.py.
argv[1] is the store; prints one `@@{json}` line."""
from __future__ import annotations

import json
import sys

import triton
import triton.language as tl
from triton.runtime.jit import MockTensor

import kernlint.shim as shim
import runtime_child as RC


@triton.jit
def main_add(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def main() -> None:
    n = 4096
    x, y, out = (MockTensor(RC._F32) for _ in range(3))
    driver, saved = RC._with_driver(max_shared=0)
    main_add.device_caches.clear()
    try:
        with shim.install(sys.argv[1], target="h100") as s:
            main_add[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n, BLOCK_SIZE=1024)
            result = {"module": main_add.fn.__module__, "launches": list(RC.LAUNCHES),
                      "log": [list(e) for e in s.log]}
    finally:
        driver.__dict__.clear()
        driver.__dict__.update(saved)
    print("@@" + json.dumps(result, default=str))


if __name__ == "__main__":
    main()
