"""Scans and custom reductions: a chunked first-order linear recurrence h_t = a_t * h_{t-1} + b_t with
tl.associative_scan (carry across chunks), and Welford row statistics with tl.reduce on a tuple."""
import triton
import triton.language as tl


@triton.jit
def _first_order_op(a_l, b_l, a_r, b_r):
    return a_r * a_l, a_r * b_l + b_r


@triton.jit
def linear_recurrence_kernel(
    a_ptr, b_ptr, h_ptr, h0_ptr,
    seq_len, stride_batch, stride_t, stride_d, n_dim,
    BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr,
):
    """Per (batch, channel block): h[t] = a[t] * h[t-1] + b[t] over the sequence, BLOCK_T steps per chunk."""
    pid_b = tl.program_id(0)
    pid_d = tl.program_id(1)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    offs_t = tl.arange(0, BLOCK_T)
    d_mask = offs_d < n_dim
    base = pid_b.to(tl.int64) * stride_batch
    h = tl.load(h0_ptr + pid_b * n_dim + offs_d, mask=d_mask, other=0.0).to(tl.float32)
    for t0 in range(0, seq_len, BLOCK_T):
        t = t0 + offs_t
        mask = (t[:, None] < seq_len) & d_mask[None, :]
        offs = base + t[:, None] * stride_t + offs_d[None, :] * stride_d
        a = tl.load(a_ptr + offs, mask=mask, other=1.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        a_cum, h_loc = tl.associative_scan((a, b), axis=0, combine_fn=_first_order_op)
        h_all = h_loc + a_cum * h[None, :]
        tl.store(h_ptr + offs, h_all.to(h_ptr.dtype.element_ty), mask=mask)
        h = tl.sum(tl.where(t[:, None] == tl.minimum(t0 + BLOCK_T, seq_len) - 1, h_all, 0.0), axis=0)


@triton.jit
def _welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    delta = mean_2 - mean_1
    new_weight = weight_1 + weight_2
    w2_over_w = tl.where(new_weight == 0.0, 0.0, weight_2 / new_weight)
    return (
        mean_1 + delta * w2_over_w,
        m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w,
        new_weight,
    )


@triton.jit
def welford_row_stats_kernel(
    x_ptr, mean_ptr, rstd_ptr, n_rows, n_cols, stride_row, eps,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    """Mean and 1/std of BLOCK_M rows at a time, streaming the columns with per-lane Welford
    accumulators and merging the lanes with tl.reduce and a custom combine function."""
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < n_rows
    mean_acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    m2_acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    weight_acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + rows[:, None].to(tl.int64) * stride_row + cols[None, :], mask=mask, other=0.0)
        x = x.to(tl.float32)
        new_weight = tl.where(mask, weight_acc + 1.0, weight_acc)
        delta = x - mean_acc
        new_mean = mean_acc + tl.where(mask, delta / tl.maximum(new_weight, 1.0), 0.0)
        m2_acc = tl.where(mask, m2_acc + delta * (x - new_mean), m2_acc)
        mean_acc = new_mean
        weight_acc = new_weight
    mean, m2, weight = tl.reduce((mean_acc, m2_acc, weight_acc), 1, _welford_combine)
    var = m2 / weight
    tl.store(mean_ptr + rows, mean, mask=row_mask)
    tl.store(rstd_ptr + rows, 1.0 / tl.sqrt(var + eps), mask=row_mask)
