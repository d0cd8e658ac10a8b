"""Cross-entropy backward over a large vocabulary (block loop per row, label smoothing)."""
import triton
import triton.language as tl


@triton.jit
def cross_entropy_bwd_kernel(
    dlogits_ptr, dlogits_row_stride, logits_ptr, logits_row_stride,
    lse_ptr, labels_ptr, dloss_ptr,
    n_cols, label_smoothing, ignore_index,
    BLOCK_SIZE: tl.constexpr, HAS_SMOOTHING: tl.constexpr,
):
    """dlogits = (softmax(logits) - smoothed one-hot(label)) * dloss[row]; 0 for ignored rows."""
    row = tl.program_id(0).to(tl.int64)
    logits_ptr += row * logits_row_stride
    dlogits_ptr += row * dlogits_row_stride
    label = tl.load(labels_ptr + row)
    lse = tl.load(lse_ptr + row)
    dloss = tl.load(dloss_ptr + row)
    dloss = tl.where(label == ignore_index, 0.0, dloss)
    eps = label_smoothing / n_cols
    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(logits_ptr + cols, mask=mask, other=float("-inf")).to(tl.float32)
        probs = tl.exp(x - lse)
        if HAS_SMOOTHING:
            probs = probs - eps
            probs = tl.where(cols == label, probs - (1.0 - label_smoothing), probs)
        else:
            probs = tl.where(cols == label, probs - 1.0, probs)
        tl.store(dlogits_ptr + cols, (probs * dloss).to(dlogits_ptr.dtype.element_ty), mask=mask)
