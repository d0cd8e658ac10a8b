"""An if-merge nobody reads does not keep its branch values alive (kernlint/analysis/liveness.py).

A name assigned in every branch of a constexpr `if` and never read after it (fla's causal_conv1d: the per-tap
`b_yi` of three alternative static_range loops) becomes an scf.if result that MLIR's dead-code elimination
drops. Counting the merge as a read kept the last tap's tile alive across the loop's end, so it could not be
streamed: fla causal_conv1d 64x64 / 128x128 was estimated at 90 / 159 registers against ptxas 48 / 81 (now
65 / 111). The estimate of the kernel with the alternative branch must equal that of the kernel without it.
"""
from __future__ import annotations

from pathlib import Path

from kernlint.pipeline.api import Settings, lint_paths

KERNELS = '''
import triton
import triton.language as tl


@triton.jit
def with_alternative(x_ptr, y_ptr, T, STATE: tl.constexpr, BT: tl.constexpr, BD: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT)
    o_d = tl.arange(0, BD)
    acc = tl.zeros((BT, BD), dtype=tl.float32)
    if not STATE:
        for i in tl.static_range(4):
            x = tl.load(x_ptr + (o_t + i)[:, None] * BD + o_d[None, :], mask=(o_t + i < T)[:, None]).to(tl.float32)
            acc += x
    else:
        for i in tl.static_range(4):
            x = tl.load(x_ptr + (o_t - i)[:, None] * BD + o_d[None, :], mask=(o_t >= i)[:, None]).to(tl.float32)
            acc += x
    tl.store(y_ptr + o_t[:, None] * BD + o_d[None, :], acc.to(tl.float16))


@triton.jit
def without_alternative(x_ptr, y_ptr, T, STATE: tl.constexpr, BT: tl.constexpr, BD: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT)
    o_d = tl.arange(0, BD)
    acc = tl.zeros((BT, BD), dtype=tl.float32)
    for i in tl.static_range(4):
        x = tl.load(x_ptr + (o_t + i)[:, None] * BD + o_d[None, :], mask=(o_t + i < T)[:, None]).to(tl.float32)
        acc += x
    tl.store(y_ptr + o_t[:, None] * BD + o_d[None, :], acc.to(tl.float16))
'''


def test_dead_merge_keeps_nothing_alive(tmp_path: Path) -> None:
    path = tmp_path / "dead_merge.py"
    path.write_text(KERNELS)
    cfg = {"STATE": False, "BT": 64, "BD": 64, "num_warps": 4, "num_stages": 1}
    res = lint_paths([str(path)], Settings(targets=("h100",), cli_configs=(cfg,),
                                           arg_types={"x_ptr": "*fp16", "y_ptr": "*fp16"}))
    regs = {k.jit.name: e.registers.allocated for f in res.files for k in f.kernels for e in k.estimates
            if e.config.origin == "cli" and e.registers is not None}
    assert regs["with_alternative"] == regs["without_alternative"], regs
