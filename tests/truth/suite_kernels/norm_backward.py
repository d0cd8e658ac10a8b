"""Backward passes of the row-wise normalisations: LayerNorm dX with lock-protected partial dW/dB,
the column (axis-0) reduction of those partials, RMSNorm dX/dW with several rows per program, and
softmax backward with a grid-stride row loop."""
import triton
import triton.language as tl


@triton.jit
def layernorm_bwd_dx_fused_kernel(
    DX, DY, DW, DB, X, W, Mean, Rstd, Lock,
    stride, N,
    GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.0)
    wdy = tl.where(mask, wdy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx.to(DX.dtype.element_ty), mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = dy.to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@triton.jit
def layernorm_bwd_dwdb_kernel(
    DW, DB, FINAL_DW, FINAL_DB, M, N,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
):
    """Sum the [M, N] partial dW/dB buffers over rows (axis 0)."""
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.0)
        db += tl.load(DB + offs, mask=mask, other=0.0)
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw.to(FINAL_DW.dtype.element_ty), mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db.to(FINAL_DB.dtype.element_ty), mask=cols < N)


@triton.jit
def rmsnorm_bwd_kernel(
    dY_ptr, dY_row_stride, dX_ptr, dX_row_stride, X_ptr, X_row_stride, W_ptr, RSTD_ptr,
    dW_ptr, dW_row_stride, n_rows, n_cols, rows_per_program,
    BLOCK_SIZE: tl.constexpr,
):
    """dx = rstd * (dy * w - (1 / N) * rstd^2 * sum(dy * w * x) * x); dW partial per program."""
    row_block_id = tl.program_id(0)
    row_start = row_block_id * rows_per_program
    row_end = tl.minimum((row_block_id + 1) * rows_per_program, n_rows)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    dW_row = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0.0).to(tl.float32)
    for row_idx in range(row_start, row_end):
        dY_row = tl.load(dY_ptr + row_idx * dY_row_stride + col_offsets, mask=mask, other=0.0).to(tl.float32)
        X_row = tl.load(X_ptr + row_idx * X_row_stride + col_offsets, mask=mask, other=0.0).to(tl.float32)
        rstd_row = tl.load(RSTD_ptr + row_idx)
        m = dY_row * W_row
        dX_row = rstd_row * m
        dX_row += rstd_row * (-(1 / n_cols) * rstd_row * rstd_row * tl.sum(m * X_row, axis=0) * X_row)
        dW_row += dY_row * (X_row * rstd_row)
        tl.store(dX_ptr + row_idx * dX_row_stride + col_offsets, dX_row.to(X_ptr.dtype.element_ty), mask=mask)
    tl.store(dW_ptr + row_block_id * dW_row_stride + col_offsets, dW_row, mask=mask)


@triton.jit
def softmax_bwd_kernel(
    dx_ptr, y_ptr, dy_ptr,
    dx_row_stride, y_row_stride, dy_row_stride,
    n_rows, n_cols,
    BLOCK_SIZE: tl.constexpr, IS_LOG: tl.constexpr,
):
    """dx = y * (dy - sum(y * dy)) (softmax) or dx = dy - exp(y) * sum(dy) (log-softmax)."""
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    for row_idx in tl.range(row_start, n_rows, row_step):
        y = tl.load(y_ptr + row_idx * y_row_stride + col_offsets, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row_idx * dy_row_stride + col_offsets, mask=mask, other=0.0).to(tl.float32)
        if IS_LOG:
            dx = dy - tl.exp(y) * tl.sum(dy, axis=0)
        else:
            dx = y * (dy - tl.sum(y * dy, axis=0))
        tl.store(dx_ptr + row_idx * dx_row_stride + col_offsets, dx.to(dx_ptr.dtype.element_ty), mask=mask)
