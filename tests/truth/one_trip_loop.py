"""One-trip loop fixture for tests/analysis/test_one_trip_loop.py (truth compiled with Triton 3.9)."""
import triton
import triton.language as tl


@triton.jit
def one_trip_kernel(a_ptr, b_ptr, c_ptr, V: tl.constexpr, BV: tl.constexpr, BT: tl.constexpr):
    o_t = tl.arange(0, BT)
    acc = tl.zeros([BT, BT], dtype=tl.float32)
    for i_v in range(tl.cdiv(V, BV)):
        o_v = i_v * BV + tl.arange(0, BV)
        a = tl.load(a_ptr + o_t[:, None] * V + o_v[None, :])
        b = tl.load(b_ptr + o_v[:, None] * BT + o_t[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + o_t[:, None] * BT + o_t[None, :], acc)
