"""Element-wise / row-wise kernels: int8 per-row quantisation, RoPE backward in place (all heads of a
token per program), GeGLU backward (tanh GELU), fused residual dropout with tl.rand, a fused
add + RMSNorm + int8-quant kernel built from helpers, and a depthwise causal conv1d unrolled with
tl.static_range."""
import triton
import triton.language as tl


@triton.jit
def quantize_int8_rowwise_kernel(
    x_ptr, q_ptr, scale_ptr, n_rows, n_cols, stride_x, stride_q,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    """q = round(x * 127 / absmax(row)), scale = absmax / 127; BLOCK_N >= n_cols (whole rows)."""
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    absmax = tl.maximum(tl.max(tl.abs(x), axis=1), 1e-8)
    inv = 127.0 / absmax
    q = x * inv[:, None]
    q = tl.where(q >= 0, q + 0.5, q - 0.5)
    q = tl.minimum(tl.maximum(q, -127.0), 127.0).to(tl.int8)
    tl.store(q_ptr + rows[:, None] * stride_q + cols[None, :], q, mask=mask)
    tl.store(scale_ptr + rows, absmax / 127.0, mask=rows < n_rows)


@triton.jit
def rope_bwd_inplace_kernel(
    dq_ptr, dq_row_stride, dk_ptr, dk_row_stride, cos_ptr, cos_row_stride, sin_ptr, sin_row_stride,
    seq_len,
    n_qh: tl.constexpr, n_kh: tl.constexpr, hd: tl.constexpr,
    pad_n_qh: tl.constexpr, pad_n_kh: tl.constexpr, pad_hd: tl.constexpr,
):
    """Rotate-half RoPE backward (rotation by -theta) applied in place to dq/dk [tokens, heads, hd]."""
    pid = tl.program_id(0)
    dq_ptr = dq_ptr + pid * dq_row_stride
    dk_ptr = dk_ptr + pid * dk_row_stride
    cos_row = pid % seq_len
    cos_ptr = cos_ptr + cos_row * cos_row_stride
    sin_ptr = sin_ptr + cos_row * sin_row_stride
    cos_offsets = tl.arange(0, pad_hd // 2)
    cos_mask = cos_offsets < hd // 2
    cos = tl.load(cos_ptr + cos_offsets, mask=cos_mask, other=0).to(tl.float32)
    sin = -tl.load(sin_ptr + cos_offsets, mask=cos_mask, other=0).to(tl.float32)
    first_q = tl.arange(0, pad_n_qh)[:, None] * hd + tl.arange(0, pad_hd // 2)[None, :]
    first_k = tl.arange(0, pad_n_kh)[:, None] * hd + tl.arange(0, pad_hd // 2)[None, :]
    q_mask = (tl.arange(0, pad_n_qh)[:, None] < n_qh) & (tl.arange(0, pad_hd // 2)[None, :] < hd // 2)
    k_mask = (tl.arange(0, pad_n_kh)[:, None] < n_kh) & (tl.arange(0, pad_hd // 2)[None, :] < hd // 2)
    q1 = tl.load(dq_ptr + first_q, mask=q_mask, other=0).to(tl.float32)
    q2 = tl.load(dq_ptr + first_q + hd // 2, mask=q_mask, other=0).to(tl.float32)
    k1 = tl.load(dk_ptr + first_k, mask=k_mask, other=0).to(tl.float32)
    k2 = tl.load(dk_ptr + first_k + hd // 2, mask=k_mask, other=0).to(tl.float32)
    tl.store(dq_ptr + first_q, (q1 * cos - q2 * sin).to(dq_ptr.dtype.element_ty), mask=q_mask)
    tl.store(dq_ptr + first_q + hd // 2, (q2 * cos + q1 * sin).to(dq_ptr.dtype.element_ty), mask=q_mask)
    tl.store(dk_ptr + first_k, (k1 * cos - k2 * sin).to(dk_ptr.dtype.element_ty), mask=k_mask)
    tl.store(dk_ptr + first_k + hd // 2, (k2 * cos + k1 * sin).to(dk_ptr.dtype.element_ty), mask=k_mask)


@triton.jit
def _tanh(x):
    return 2 * tl.sigmoid(2 * x) - 1


@triton.jit
def geglu_tanh_bwd_kernel(dc_ptr, a_ptr, b_ptr, stride, n_cols, BLOCK_SIZE: tl.constexpr):
    """c = gelu_tanh(a) * b; writes da into a and db into b (in place), one row per program."""
    program_id = tl.program_id(0).to(tl.int64)
    dc_ptr += program_id * stride
    a_ptr += program_id * stride
    b_ptr += program_id * stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    dc_row = tl.load(dc_ptr + col_offsets, mask=mask, other=0)
    a_row = tl.load(a_ptr + col_offsets, mask=mask, other=0).to(tl.float32)
    b_row = tl.load(b_ptr + col_offsets, mask=mask, other=0)
    sqrt_2_over_pi = 0.7978845608028654
    a_cubed = a_row * a_row * a_row
    tanh_arg = sqrt_2_over_pi * (a_row + 0.044715 * a_cubed)
    tanh_result = _tanh(tanh_arg)
    geglu_a = 0.5 * a_row * (1 + tanh_result)
    db_row = dc_row * geglu_a
    term1 = 0.5 * (1 + tanh_result)
    tanh_sq = tanh_result * tanh_result
    term2 = 0.5 * a_row * (1 - tanh_sq) * (sqrt_2_over_pi * (1 + 3 * 0.044715 * a_row * a_row))
    da_row = dc_row * b_row * (term1 + term2)
    tl.store(a_ptr + col_offsets, da_row.to(a_ptr.dtype.element_ty), mask=mask)
    tl.store(b_ptr + col_offsets, db_row.to(b_ptr.dtype.element_ty), mask=mask)


@triton.jit
def residual_dropout_kernel(
    x_ptr, residual_ptr, out_ptr, keep_ptr, n_elements, p, seed,
    BLOCK_SIZE: tl.constexpr, STORE_MASK: tl.constexpr,
):
    """out = residual + dropout(x, p), Philox random numbers from (seed, offset); optionally saves the mask."""
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    residual = tl.load(residual_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    random = tl.rand(seed, offsets)
    keep = random > p
    out = residual + tl.where(keep, x / (1 - p), 0.0)
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)
    if STORE_MASK:
        tl.store(keep_ptr + offsets, keep.to(tl.int8), mask=mask)


@triton.jit
def _load_row(ptr, cols, mask):
    return tl.load(ptr + cols, mask=mask, other=0.0).to(tl.float32)


@triton.jit
def _rms_normalize(x, w, n_cols, eps):
    var = tl.sum(x * x, axis=0) / n_cols
    return x * tl.rsqrt(var + eps) * w


@triton.jit
def _absmax_scale(y):
    return tl.maximum(tl.max(tl.abs(y), axis=0), 1e-6) / 127.0


@triton.jit
def _round_to_int8(y, scale):
    q = y / scale
    q = tl.where(q >= 0, q + 0.5, q - 0.5)
    return tl.minimum(tl.maximum(q, -127.0), 127.0).to(tl.int8)


@triton.jit
def fused_add_rmsnorm_int8_kernel(
    x_ptr, residual_ptr, w_ptr, q_ptr, scale_ptr, residual_out_ptr,
    stride, n_cols, eps,
    BLOCK_N: tl.constexpr,
):
    """residual_out = x + residual; q, scale = int8_quant(rmsnorm(residual_out) * w), one row per program."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    h = _load_row(x_ptr + row * stride, cols, mask) + _load_row(residual_ptr + row * stride, cols, mask)
    tl.store(residual_out_ptr + row * stride + cols, h.to(residual_out_ptr.dtype.element_ty), mask=mask)
    w = _load_row(w_ptr, cols, mask)
    y = _rms_normalize(h, w, n_cols, eps)
    scale = _absmax_scale(y)
    tl.store(q_ptr + row * stride + cols, _round_to_int8(y, scale), mask=mask)
    tl.store(scale_ptr + row, scale)


@triton.jit
def causal_conv1d_fwd_kernel(
    x_ptr, w_ptr, bias_ptr, out_ptr,
    seqlen, dim, stride_x_batch, stride_x_seq, stride_w_dim, stride_o_batch, stride_o_seq,
    KERNEL_WIDTH: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr, SILU: tl.constexpr,
):
    """out[b, t, d] = act(bias[d] + sum_i w[d, i] * x[b, t - (W - 1) + i, d]); channels-last layout."""
    pid_l = tl.program_id(0)
    pid_d = tl.program_id(1)
    pid_b = tl.program_id(2)
    offs_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    d_mask = offs_d < dim
    x_base = x_ptr + pid_b.to(tl.int64) * stride_x_batch
    acc = tl.zeros((BLOCK_L, BLOCK_D), dtype=tl.float32)
    acc += tl.load(bias_ptr + offs_d, mask=d_mask, other=0.0).to(tl.float32)[None, :]
    for i in tl.static_range(KERNEL_WIDTH):
        w_i = tl.load(w_ptr + offs_d * stride_w_dim + i, mask=d_mask, other=0.0).to(tl.float32)
        src = offs_l - (KERNEL_WIDTH - 1) + i
        m = (src[:, None] >= 0) & (src[:, None] < seqlen) & d_mask[None, :]
        x = tl.load(x_base + src[:, None] * stride_x_seq + offs_d[None, :], mask=m, other=0.0).to(tl.float32)
        acc += x * w_i[None, :]
    if SILU:
        acc = acc * tl.sigmoid(acc)
    o_mask = (offs_l[:, None] < seqlen) & d_mask[None, :]
    o_ptrs = out_ptr + pid_b.to(tl.int64) * stride_o_batch + offs_l[:, None] * stride_o_seq + offs_d[None, :]
    tl.store(o_ptrs, acc.to(out_ptr.dtype.element_ty), mask=o_mask)
