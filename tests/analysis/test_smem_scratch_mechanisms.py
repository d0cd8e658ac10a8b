"""Small scratch buffers (reductions, layout conversions) whose size follows from how Triton lays out a tile,
first missed on public kernels (benchmarks/truth/public-triton-3.9.json) and checked here on small probes
compiled with Triton 3.9 (`metadata.shared`, the same on sm_80, sm_90 and sm_100 unless noted):

* a clamped index (`tl.minimum(offs, n - 1)`, `tl.maximum(offs - 3, 0)`, liger-kernel's neighborhood attention
  backward) has contiguity 1 (AxisInfo's min/max rule), so the tile is not vectorised: [64, 64] fp16 at
  4 warps is laid out sizePerThread [1, 1], threadsPerWarp [1, 32], warpsPerCTA [2, 2] and its row sum
  crosses 2 warps (256 B); unclamped, the rows stay in one warp and only the store conversion remains (128 B);
* the operands of a dot outside any loop are dead once it has run, so a reduction scratch or the conversion of
  row sums for their store/atomic after it reuses their bytes (mamba-ssm _chunk_state_bwd_ddAcs_stable_kernel:
  a row sum of the product added with tl.atomic_add costs nothing on top of the A and B tiles);
* a loaded tile broadcast one rank up (`h[:, :, None]` into a [HC, N, C] tile, liger-kernel mHC backward; the
  [R, G] scales of unsloth's NVFP4 dequantiser into the [R, G, 16] reshape of a tl.join) is converted into the
  slice of the bigger tile's layout through shared memory, the whole tile × 4 B when every thread's elements
  differ between the two, like a vector broadcast into a 2-D tile;
* `tl.gather` runs in a warp-local layout of its own (smem_gather.py): its source and index are converted into
  it, in the type of the last tile Triton cannot recompute (a loaded fp16 tile widened to fp32 moves as fp16),
  and the result back out to its store (fla's gsa gate backward).
"""
from __future__ import annotations

import pytest

from kernlint.analysis import layout_ops
from kernlint.analysis.linear_layout import blocked
from kernlint.pipeline.api import Settings, lint_paths

PROBES = '''
import triton
import triton.language as tl


@triton.jit
def clamp_rowsum(x_ptr, y_ptr, n_cols, stride_row, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.minimum(tl.arange(0, BN), n_cols - 1)
    x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :])
    tl.store(y_ptr + rows, tl.sum(x, axis=1))


@triton.jit
def plain_rowsum(x_ptr, y_ptr, n_cols, stride_row, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :])
    tl.store(y_ptr + rows, tl.sum(x, axis=1))


@triton.jit
def clampmax_rowsum(x_ptr, y_ptr, n_cols, stride_row, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.maximum(tl.arange(0, BN) - 3, 0)
    x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :])
    tl.store(y_ptr + rows, tl.sum(x, axis=1))


@triton.jit
def dot_or_loop_rowsum_atomic(a_ptr, b_ptr, x_ptr, out_ptr, K, BM: tl.constexpr, BN: tl.constexpr,
                              BK: tl.constexpr, ONE_STEP: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    if ONE_STEP:
        a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
        b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
            acc += tl.dot(a, b)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :]).to(tl.float32)
    tl.atomic_add(out_ptr + rm, tl.sum(acc * x, axis=1).to(out_ptr.dtype.element_ty))


@triton.jit
def dot_then_colsum(a_ptr, b_ptr, x_ptr, out_ptr, y_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    acc = tl.dot(a, b)
    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], acc)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :]).to(tl.float32)
    tl.store(y_ptr + rn, tl.sum(x, axis=0))


@triton.jit
def rowscale_3d(g_ptr, h_ptr, out_ptr, HC: tl.constexpr, BN: tl.constexpr, BC: tl.constexpr):
    o3 = tl.arange(0, HC)[:, None, None]
    n3 = tl.arange(0, BN)[None, :, None]
    c3 = tl.arange(0, BC)[None, None, :]
    g = tl.load(g_ptr + o3 * (BN * BC) + n3 * BC + c3).to(tl.float32)
    h = tl.load(h_ptr + tl.arange(0, HC)[:, None] * BN + tl.arange(0, BN)[None, :]).to(tl.float32)
    s = tl.sum(g * h[:, :, None], axis=0)
    tl.store(out_ptr + tl.arange(0, BN)[:, None] * BC + tl.arange(0, BC)[None, :], s)


@triton.jit
def rowscale_strided(g_ptr, h_ptr, out_ptr, HC: tl.constexpr, BN: tl.constexpr, BC: tl.constexpr,
                     S: tl.constexpr):
    o3 = tl.arange(0, HC)[:, None, None]
    n3 = tl.arange(0, BN)[None, :, None]
    c3 = tl.arange(0, BC)[None, None, :]
    g = tl.load(g_ptr + o3 * S + n3 * S + c3 * S).to(tl.float32)
    h = tl.load(h_ptr + tl.arange(0, HC)[:, None] * S + tl.arange(0, BN)[None, :] * S).to(tl.float32)
    s = tl.sum(g * h[:, :, None], axis=0)
    tl.store(out_ptr + tl.arange(0, BN)[:, None] * S + tl.arange(0, BC)[None, :] * S, s)


@triton.jit
def group_dequant(q_ptr, s_ptr, out_ptr, BR: tl.constexpr, BC: tl.constexpr, G: tl.constexpr):
    r = tl.arange(0, BR)
    c = tl.arange(0, BC)
    q = tl.load(q_ptr + r[:, None] * BC + c[None, :])
    s = tl.load(s_ptr + r[:, None] * (2 * BC // G) + tl.arange(0, 2 * BC // G)[None, :]).to(tl.float32)
    v = tl.reshape(tl.join((q & 15).to(tl.float32), (q >> 4).to(tl.float32)), (BR, 2 * BC // G, G))
    v = tl.reshape(v * s[:, :, None], (BR, 2 * BC))
    tl.store(out_ptr + r[:, None] * (2 * BC) + tl.arange(0, 2 * BC)[None, :], v.to(out_ptr.dtype.element_ty))


@triton.jit
def gather_row(x_ptr, y_ptr, t, BT: tl.constexpr, BS: tl.constexpr):
    o_t = tl.arange(0, BT)
    o_s = tl.arange(0, BS)
    x = tl.load(x_ptr + o_t[:, None] * BS + o_s[None, :]).to(tl.float32)
    idx = tl.full((1, BS), t, tl.int32)
    row = tl.gather(x, idx, axis=0).reshape((BS,))
    tl.store(y_ptr + o_s, row)


@triton.jit
def gather_col(x_ptr, y_ptr, t, BT: tl.constexpr, BS: tl.constexpr):
    o_t = tl.arange(0, BT)
    o_s = tl.arange(0, BS)
    x = tl.load(x_ptr + o_t[:, None] * BS + o_s[None, :]).to(tl.float32)
    idx = tl.full((BT, 1), t, tl.int32)
    col = tl.gather(x, idx, axis=1).reshape((BT,))
    tl.store(y_ptr + o_t, col)


@triton.jit
def gather_perm(x_ptr, i_ptr, y_ptr, BT: tl.constexpr, BS: tl.constexpr):
    o_t = tl.arange(0, BT)
    o_s = tl.arange(0, BS)
    x = tl.load(x_ptr + o_t[:, None] * BS + o_s[None, :])
    idx = tl.load(i_ptr + o_t[:, None] * BS + o_s[None, :])
    tl.store(y_ptr + o_t[:, None] * BS + o_s[None, :], tl.gather(x, idx, axis=0))
'''

ROWSUM = {"x_ptr": "*fp16", "y_ptr": "*fp32", "n_cols": "i32", "stride_row": "i32"}
DOTS = {"a_ptr": "*fp16", "b_ptr": "*fp16", "x_ptr": "*fp16", "out_ptr": "*fp16", "K": "i32"}
ARGS = {"clamp_rowsum": ROWSUM, "plain_rowsum": ROWSUM, "clampmax_rowsum": ROWSUM,
        "dot_or_loop_rowsum_atomic": DOTS, "dot_then_colsum": {**DOTS, "out_ptr": "*fp32", "y_ptr": "*fp32"},
        "rowscale_3d": {"g_ptr": "*fp16", "h_ptr": "*fp16", "out_ptr": "*fp32"},
        "rowscale_strided": {"g_ptr": "*fp16", "h_ptr": "*fp16", "out_ptr": "*fp16"},
        "group_dequant": {"q_ptr": "*i32", "s_ptr": "*fp16", "out_ptr": "*fp16"},
        "gather_row": {"x_ptr": "*fp16", "y_ptr": "*fp32", "t": "i32"},
        "gather_col": {"x_ptr": "*fp16", "y_ptr": "*fp32", "t": "i32"},
        "gather_perm": {"x_ptr": "*fp16", "i_ptr": "*i32", "y_ptr": "*fp16"}}

# (kernel, config, Triton 3.9 metadata.shared on sm_80/90/100)
TRUTH = [
    # clamped: [2, 2] warps, 64 rows × 2 warp partials → 256 B of reduction scratch
    ("clamp_rowsum", {"BM": 64, "BN": 64, "num_warps": 4}, 256),
    ("clamp_rowsum", {"BM": 128, "BN": 128, "num_warps": 8}, 256),
    ("clampmax_rowsum", {"BM": 64, "BN": 64, "num_warps": 4}, 256),
    ("clampmax_rowsum", {"BM": 128, "BN": 128, "num_warps": 8}, 256),
    # unclamped: 8 per thread, rows inside one warp; 64 fp32 row sums converted to the store's layout
    ("plain_rowsum", {"BM": 64, "BN": 64, "num_warps": 4}, 128),
    ("plain_rowsum", {"BM": 128, "BN": 128, "num_warps": 8}, 256),
    # h[:, :, None] into [HC, BN, BC] with every index strided (one element per thread, as in mHC): the
    # [HC, BN] fp32 tile crosses warps into the 3-D tile's slice, HC × BN × 4 B (0 was estimated)
    ("rowscale_strided", {"HC": 4, "BN": 64, "BC": 64, "S": 64, "num_warps": 4}, 1024),
    ("rowscale_strided", {"HC": 4, "BN": 128, "BC": 128, "S": 64, "num_warps": 8}, 2048),
    ("rowscale_strided", {"HC": 8, "BN": 32, "BC": 32, "S": 64, "num_warps": 4}, 1024),
    ("rowscale_strided", {"HC": 2, "BN": 64, "BC": 32, "S": 64, "num_warps": 2}, 512),
    # contiguous: the [BN, BC] fp32 row sums stored 8 B wide dominate (BN × BC × 4 / reps), unchanged
    ("rowscale_3d", {"HC": 4, "BN": 64, "BC": 64, "num_warps": 4}, 4096),
    ("rowscale_3d", {"HC": 8, "BN": 16, "BC": 32, "num_warps": 4}, 2048),
    # [BR, 2·BC/G] fp32 group scales into the [BR, 2·BC/G, G] reshape of the joined nibbles: BR × 2·BC/G × 4 B
    ("group_dequant", {"BR": 64, "BC": 64, "G": 16, "num_warps": 4}, 2048),
    ("group_dequant", {"BR": 32, "BC": 128, "G": 32, "num_warps": 4}, 1024),
    ("group_dequant", {"BR": 128, "BC": 128, "G": 16, "num_warps": 8}, 8192),
    ("group_dequant", {"BR": 16, "BC": 64, "G": 16, "num_warps": 4}, 512),
    # the fp16 tile into the gather layout (lanes along the axis, no warp on it): BT × BS × 2 B / reps
    ("gather_row", {"BT": 32, "BS": 64, "num_warps": 4}, 4096),
    ("gather_row", {"BT": 32, "BS": 128, "num_warps": 8}, 8192),
    ("gather_row", {"BT": 64, "BS": 64, "num_warps": 4}, 8192),
    ("gather_row", {"BT": 16, "BS": 256, "num_warps": 4}, 8192),
    ("gather_row", {"BT": 128, "BS": 32, "num_warps": 4}, 8192),
    ("gather_col", {"BT": 32, "BS": 64, "num_warps": 4}, 2048),
    ("gather_col", {"BT": 32, "BS": 128, "num_warps": 8}, 8192),
    ("gather_col", {"BT": 64, "BS": 64, "num_warps": 4}, 2048),
    ("gather_col", {"BT": 128, "BS": 32, "num_warps": 4}, 4096),
    # [16, 256] at 4 warps is already warp-local: only the [16, 1] fp32 result moves to the store, 16 × 4 B
    ("gather_col", {"BT": 16, "BS": 256, "num_warps": 4}, 64),
]


def _shared(tmp_path, name: str, config: dict, args: dict) -> dict:  # type: ignore[no-untyped-def]
    path = tmp_path / "probes.py"
    path.write_text(PROBES)
    result = lint_paths([str(path)], Settings(targets=("a100", "h100", "b200"),
                                              cli_configs=({**config, "num_stages": 1},), arg_types=args))
    [kernel] = [k for k in result.files[0].kernels if k.jit.name == name]
    return {e.target.key: e.smem.total for e in kernel.estimates if e.config.origin == "cli"}


@pytest.mark.parametrize("name,config,truth", TRUTH)
def test_scratch_against_compiles(tmp_path, name: str, config: dict,  # type: ignore[no-untyped-def]
                                  truth: int) -> None:
    assert _shared(tmp_path, name, config, ARGS[name]) == {"a100": truth, "h100": truth, "b200": truth}


# (kernel, config, Triton 3.9 metadata.shared per target)
PER_TARGET = [
    # the A and B tiles staged once (+ the tcgen05 completion barrier on sm_100); the 64 row sums converted
    # to the atomic's layout (64 × 2 B) and the mma → blocked conversion before the row sum fit in them
    ("dot_or_loop_rowsum_atomic", {"BM": 64, "BN": 64, "BK": 64, "ONE_STEP": True, "num_warps": 4},
     {"a100": 16384, "h100": 16384, "b200": 16392}),
    ("dot_or_loop_rowsum_atomic", {"BM": 128, "BN": 128, "BK": 128, "ONE_STEP": True, "num_warps": 8},
     {"a100": 65536, "h100": 65536, "b200": 65544}),
    # the column sum of a loaded [64, 64] fp32 tile after the dot (2 warp partials × 64 × 4 B) reuses them too
    ("dot_then_colsum", {"BM": 64, "BN": 64, "BK": 64, "num_warps": 4},
     {"a100": 16384, "h100": 16384, "b200": 16392}),
    # a loaded int32 index converted too: the whole [BT, BS] × 4 B on sm_80, half (reps) with the
    # ldmatrix/stmatrix tiles of sm_90/100 where the tile allows
    ("gather_perm", {"BT": 32, "BS": 64, "num_warps": 4}, {"a100": 8192, "h100": 4096, "b200": 4096}),
    ("gather_perm", {"BT": 64, "BS": 64, "num_warps": 4}, {"a100": 16384, "h100": 8192, "b200": 8192}),
    ("gather_perm", {"BT": 32, "BS": 128, "num_warps": 8}, {"a100": 16384, "h100": 16384, "b200": 16384}),
    ("gather_perm", {"BT": 16, "BS": 256, "num_warps": 4}, {"a100": 16384, "h100": 16384, "b200": 16384}),
]


@pytest.mark.parametrize("name,config,truth", PER_TARGET)
def test_scratch_per_target_against_compiles(tmp_path, name: str, config: dict,  # type: ignore[no-untyped-def]
                                             truth: dict) -> None:
    assert _shared(tmp_path, name, config, ARGS[name]) == truth


def test_join_and_reshape_keep_elements_in_their_threads() -> None:
    # unsloth _nvfp4_dequant_kernel, BLOCK_R = BLOCK_C = 64, 4 warps (Triton 3.9 TTGIR): the int32 bytes are
    # #blocked [1, 4] / [2, 16] / [4, 1]; tt.join gives [1, 4, 2] / [2, 16, 1] / [4, 1, 1] and the reshape to
    # [64, 8, 16] is [1, 1, 8] / [2, 8, 2] / [4, 1, 1] (sizePerThread / threadsPerWarp / warpsPerCTA)
    joined = layout_ops.join(blocked((64, 64), (1, 4), (1, 0), 4))
    assert joined == blocked((64, 64, 2), (1, 4, 2), (2, 1, 0), 4)
    reshaped = layout_ops.reshape(joined, (64, 8, 16))
    assert reshaped == blocked((64, 8, 16), (1, 1, 8), (2, 1, 0), 4)
    # its dim-2 slice: the lane that walked dim 2 becomes a broadcast
    assert layout_ops.drop_dim(reshaped, 2).lane == ((0, 0), (0, 1), (0, 2), (0, 4), (1, 0))


def test_gather_layout_matches_ttgir() -> None:
    # fla gsa gate backward, [32, 64] gathered on axis 0 with a [1, 64] index, 4 warps (Triton 3.9 TTGIR):
    # #blocked1 = sizePerThread [1, 1], threadsPerWarp [32, 1], warpsPerCTA [1, 4], order [0, 1]
    assert layout_ops.gather_params((32, 64), (1, 64), 0, (1, 0), 4) == ((1, 1), (32, 1), (1, 4), (0, 1))
    # 64 rows on 32 lanes: two per thread along the axis
    assert layout_ops.gather_params((64, 64), (1, 64), 0, (1, 0), 4) == ((2, 1), (32, 1), (1, 4), (0, 1))
