"""Loops with several dots that are not pipelined (one trip folded away, or num_stages=1): each operand's
shared copy lives from its load to its dot, a layout conversion of the loop only at its own step
(dot_buffers._unpipelined_peak), on mma.sync a copy is not made above a `tl.store` lying between its load and
its dot, and each tcgen05 MMA waits on one 8-B mbarrier.

Every expected number is `metadata.shared` of Triton 3.9 `triton.compile` of exactly this source for sm_80,
sm_90 and sm_100 (fp16 pointers). The public kernel behind it: fla precond_kda chunk_bwd.py
chunk_precond_kda_bwd_kernel_wy_dqkg, whose dv2 store converts after the loop's tiles are dead (49,152 B on
sm_80/90, not 57,344; 49,160 on sm_100).
"""
from __future__ import annotations

from pathlib import Path

from kernlint.pipeline.api import Settings, lint_paths

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def folded_store_kernel(a_ptr, b_ptr, c_ptr, d_ptr, x_ptr, out_ptr, V: tl.constexpr, BV: tl.constexpr,
                        BT: tl.constexpr, WHERE: tl.constexpr):
    # WHERE: 0 no store in the loop, 1 store after both dots, 2 store between the dots
    o_t = tl.arange(0, BT)
    acc1 = tl.zeros([BT, BT], dtype=tl.float32)
    acc2 = tl.zeros([BT, BT], dtype=tl.float32)
    for i_v in range(tl.cdiv(V, BV)):
        o_v = i_v * BV + tl.arange(0, BV)
        a = tl.load(a_ptr + o_t[:, None] * V + o_v[None, :])
        b = tl.load(b_ptr + o_v[:, None] * BT + o_t[None, :])
        c = tl.load(c_ptr + o_t[:, None] * V + o_v[None, :])
        d = tl.load(d_ptr + o_v[:, None] * BT + o_t[None, :])
        acc1 = tl.dot(a, b, acc1)
        if WHERE == 2:
            tl.store(x_ptr + o_t[:, None] * BT + o_t[None, :], acc1.to(tl.float16))
        acc2 = tl.dot(c, d, acc2)
        if WHERE == 1:
            tl.store(x_ptr + o_t[:, None] * BT + o_t[None, :], acc1.to(tl.float16))
    tl.store(out_ptr + o_t[:, None] * BT + o_t[None, :], acc1.to(tl.float16))
    tl.store(out_ptr + BT * BT + o_t[:, None] * BT + o_t[None, :], acc2.to(tl.float16))
'''

# (WHERE, BT, BV, V, warps, stages) → (sm_80, sm_90, sm_100) bytes
TRUTH = {
    (0, 64, 64, 64, 4, 3): (32768, 32768, 32776),      # one trip: four 8-KiB copies at once
    (0, 128, 128, 128, 8, 3): (131072, 131072, 131080),
    (0, 64, 32, 32, 4, 3): (16384, 16384, 16392),
    (1, 64, 64, 64, 4, 3): (32768, 32768, 32776),      # the store's 8-KiB conversion reuses dead copies
    (1, 128, 128, 128, 8, 3): (131072, 131072, 131080),
    (1, 64, 32, 32, 4, 3): (16384, 16384, 16392),
    (2, 64, 64, 64, 4, 3): (16384, 32768, 32776),      # sm_80: c and d copied at their dot, after the store
    (2, 128, 128, 128, 8, 3): (65536, 131072, 131080),
    (2, 64, 32, 32, 4, 3): (8192, 16384, 16392),
    (0, 64, 64, 128, 4, 1): (32768, 32768, 32776),     # two trips, num_stages=1: the same
    (1, 64, 64, 128, 4, 1): (32768, 32768, 32776),
    (2, 64, 64, 128, 4, 1): (16384, 32768, 32776),
    (2, 64, 32, 64, 4, 1): (8192, 16384, 16392),
}
TARGETS = ("a100", "h100", "b200")


def test_unpipelined_multi_dot_loops_match_truth(tmp_path: Path) -> None:
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    configs = tuple(dict(WHERE=w, BT=bt, BV=bv, V=v, num_warps=nw, num_stages=ns)
                    for w, bt, bv, v, nw, ns in TRUTH)
    result = lint_paths([str(path)], Settings(targets=TARGETS, cli_configs=configs, arg_types={"*": "*fp16"}))
    got = {(e.target.key, e.config.constexprs["WHERE"], e.config.constexprs["BT"], e.config.constexprs["BV"],
            e.config.constexprs["V"], e.config.num_warps, e.config.num_stages): e.smem.total
           for k in result.files[0].kernels for e in k.estimates if e.config.origin == "cli"}
    wrong = [(t, key, got.get((t, *key)), want) for key, wants in TRUTH.items()
             for t, want in zip(TARGETS, wants) if got.get((t, *key)) != want]
    assert not wrong, wrong
