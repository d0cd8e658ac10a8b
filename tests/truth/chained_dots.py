"""Probe kernels for chained dots and for dot results read more than once (kernlint/analysis/register_chained.py,
register_elementwise.streamed_values), written for that purpose and in no other truth file. Truth:
benchmarks/truth/probes-triton-3.9.json (benchmarks/truth_specs_probes.py); assertions in tests/analysis/test_chained_dots.py."""
import triton
import triton.language as tl


@triton.jit
def fused_mlp_kernel(x_ptr, w1_ptr, w2_ptr, out_ptr, M, D: tl.constexpr, H: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_H: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, D)
    x = tl.load(x_ptr + rm[:, None] * D + rd[None, :])
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    for h0 in range(0, H, BLOCK_H):
        rh = h0 + tl.arange(0, BLOCK_H)
        w1 = tl.load(w1_ptr + rd[:, None] * H + rh[None, :])
        h = tl.dot(x, w1)
        h = h * tl.sigmoid(h)
        w2 = tl.load(w2_ptr + rh[:, None] * D + rd[None, :])
        acc += tl.dot(h.to(tl.float16), w2)
    tl.store(out_ptr + rm[:, None] * D + rd[None, :], acc.to(tl.float16))


@triton.jit
def swiglu_mlp_kernel(x_ptr, wg_ptr, wu_ptr, w2_ptr, out_ptr, D: tl.constexpr, H: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_H: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, D)
    x = tl.load(x_ptr + rm[:, None] * D + rd[None, :])
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    for h0 in range(0, H, BLOCK_H):
        rh = h0 + tl.arange(0, BLOCK_H)
        g = tl.dot(x, tl.load(wg_ptr + rd[:, None] * H + rh[None, :]))
        u = tl.dot(x, tl.load(wu_ptr + rd[:, None] * H + rh[None, :]))
        h = g * tl.sigmoid(g) * u
        acc += tl.dot(h.to(tl.float16), tl.load(w2_ptr + rh[:, None] * D + rd[None, :]))
    tl.store(out_ptr + rm[:, None] * D + rd[None, :], acc.to(tl.float16))


@triton.jit
def gemm_gelu_kernel(a_ptr, b_ptr, c_ptr, K: tl.constexpr, N: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    y = tl.dot(a, b)
    inner = 0.7978845608 * (y + 0.044715 * y * y * y)
    e = tl.exp(-2.0 * tl.abs(inner))
    t = (1.0 - e) / (1.0 + e)
    t = tl.where(inner >= 0, t, -t)
    out = 0.5 * y * (1.0 + t)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], out.to(tl.float16))
