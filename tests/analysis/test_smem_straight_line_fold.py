"""Straight-line dots on one timeline (smem_straight.py): Triton's combine pattern moves `dot(a, b, 0) + d`
down to the add, keeping a and b's shared copies alive until there, and the dots of a one-trip loop join the
straight-line code after it.

Every expected number is `metadata.shared` of Triton 3.9 `triton.compile` of exactly this source for sm_80,
sm_90 and sm_100 (fp16 pointers). fold_after_loop_kernel is fla chunk_o.py chunk_bwd_kernel_dqkwg in
miniature (its public records: sm_80 40,960 / sm_90 32,768 / sm_100 40,968 B at 64×64 tiles).
"""
from __future__ import annotations

from pathlib import Path

from kernlint.pipeline.api import Settings, lint_paths

KERNELS = '''import triton
import triton.language as tl


@triton.jit
def dot_add_kernel(a_ptr, b_ptr, c_ptr, d_ptr, out_ptr, BT: tl.constexpr, FOLD: tl.constexpr):
    o = tl.arange(0, BT)
    a = tl.load(a_ptr + o[:, None] * BT + o[None, :])
    b = tl.load(b_ptr + o[:, None] * BT + o[None, :])
    x = tl.dot(a, b)
    c = tl.load(c_ptr + o[:, None] * BT + o[None, :])
    d = tl.load(d_ptr + o[:, None] * BT + o[None, :])
    y = tl.dot(c, d)
    if FOLD:
        out = x + y * 2.0      # dot(a, b, 0) + d -> dot(a, b, d) at the add: a, b live across y's dot
    else:
        out = x * 2.0 + y      # y's dot folds, but the add follows it: nothing moves
    tl.store(out_ptr + o[:, None] * BT + o[None, :], out.to(tl.float16))


@triton.jit
def fold_after_loop_kernel(v_ptr, do_ptr, h_ptr, dh_ptr, q_ptr, k_ptr, dq_ptr, dk_ptr, V: tl.constexpr,
                           BV: tl.constexpr, BT: tl.constexpr, FOLD: tl.constexpr):
    o_t = tl.arange(0, BT)
    b_ds = tl.zeros([BT, BT], dtype=tl.float32)
    b_dq = tl.zeros([BT, BT], dtype=tl.float32)
    b_dk = tl.zeros([BT, BT], dtype=tl.float32)
    for i_v in range(tl.cdiv(V, BV)):
        o_v = i_v * BV + tl.arange(0, BV)
        b_v = tl.load(v_ptr + o_t[:, None] * V + o_v[None, :])
        b_do = tl.load(do_ptr + o_t[:, None] * V + o_v[None, :])
        b_h = tl.load(h_ptr + o_v[:, None] * BT + o_t[None, :])
        b_dh = tl.load(dh_ptr + o_v[:, None] * BT + o_t[None, :])
        b_ds = tl.dot(b_do, tl.trans(b_v), b_ds)
        b_dq = tl.dot(b_do, b_h, b_dq)
        b_dk = tl.dot(b_v, b_dh, b_dk)
    b_q = tl.load(q_ptr + o_t[:, None] * BT + o_t[None, :])
    b_k = tl.load(k_ptr + o_t[:, None] * BT + o_t[None, :])
    b_ds = b_ds.to(tl.float16)
    b_dq = tl.dot(b_ds, b_k, b_dq)
    if FOLD:
        b_dk += tl.dot(tl.trans(b_ds), b_q) * 2.0     # the loop's b_v·b_dh dot moves down to this add
    else:
        b_dk = b_dk * 2.0 + tl.dot(tl.trans(b_ds), b_q)
    tl.store(dq_ptr + o_t[:, None] * BT + o_t[None, :], b_dq.to(tl.float16))
    tl.store(dk_ptr + o_t[:, None] * BT + o_t[None, :], b_dk.to(tl.float16))
'''

TARGETS = ("a100", "h100", "b200")
# dot_add_kernel: (FOLD, BT, warps) → (sm_80, sm_90, sm_100) bytes
DOT_ADD = {
    (0, 64, 4): (16384, 16384, 16392),      # x = a·b dead before c, d are copied
    (0, 128, 8): (65536, 65536, 65544),
    (1, 64, 4): (32768, 32768, 32776),      # x's dot runs at the add, after y's: a, b, c, d together
    (1, 128, 8): (131072, 131072, 131080),
}
# fold_after_loop_kernel: (FOLD, BT, BV, warps) → (sm_80, sm_90, sm_100) bytes; V = BV (one trip)
FOLD_AFTER_LOOP = {
    (0, 64, 64, 4): (32768, 32768, 32776),
    (0, 128, 128, 8): (131072, 131072, 131080),
    (0, 64, 32, 4): (24576, 16384, 24584),
    (1, 64, 64, 4): (40960, 32768, 40968),  # b_v, b_dh, b_q, b_k and the copy of trans(b_ds)
    (1, 128, 128, 8): (163840, 131072, 163848),
    (1, 64, 32, 4): (32768, 24576, 32776),
}


def _shared(tmp_path: Path, configs: tuple[dict[str, int], ...]) -> dict[tuple, int]:
    path = tmp_path / "kernels.py"
    path.write_text(KERNELS)
    result = lint_paths([str(path)], Settings(targets=TARGETS, cli_configs=configs, arg_types={"*": "*fp16"}))
    return {(k.jit.name, e.target.key, tuple(sorted(e.config.constexprs.items())), e.config.num_warps):
            e.smem.total for k in result.files[0].kernels for e in k.estimates
            if e.config.origin == "cli" and e.smem is not None}


def test_dot_moved_to_the_add_it_feeds(tmp_path: Path) -> None:
    configs = tuple(dict(FOLD=f, BT=bt, num_warps=w, num_stages=3) for f, bt, w in DOT_ADD)
    got = _shared(tmp_path, configs)
    wrong = [(t, key, got.get(("dot_add_kernel", t, (("BT", key[1]), ("FOLD", key[0])), key[2])), want)
             for key, wants in DOT_ADD.items() for t, want in zip(TARGETS, wants)
             if got.get(("dot_add_kernel", t, (("BT", key[1]), ("FOLD", key[0])), key[2])) != want]
    assert not wrong, wrong


def test_one_trip_loop_dots_share_the_timeline_after_it(tmp_path: Path) -> None:
    configs = tuple(dict(V=bv, BV=bv, BT=bt, FOLD=f, num_warps=w, num_stages=3) for f, bt, bv, w in FOLD_AFTER_LOOP)
    got = _shared(tmp_path, configs)
    wrong = []
    for (f, bt, bv, w), wants in FOLD_AFTER_LOOP.items():
        key = (("BT", bt), ("BV", bv), ("FOLD", f), ("V", bv))
        for t, want in zip(TARGETS, wants):
            if got.get(("fold_after_loop_kernel", t, key, w)) != want:
                wrong.append((t, f, bt, bv, got.get(("fold_after_loop_kernel", t, key, w)), want))
    assert not wrong, wrong
