"""Cross-entropy forward over a large vocabulary: online logsumexp over vocab chunks."""
import torch
import triton
import triton.language as tl

IGNORE_INDEX = tl.constexpr(-100)


@triton.jit
def cross_entropy_fwd_kernel(
    logits_ptr, labels_ptr, loss_ptr, lse_ptr,
    logits_row_stride, n_cols,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0)
    row_logits = logits_ptr + row * logits_row_stride  # expect: KL303
    label = tl.load(labels_ptr + row)

    # running max and running sum of exp(x - max), one chunk of the vocabulary at a time
    m = float("-inf")
    d = 0.0
    for off in tl.range(0, n_cols, BLOCK_SIZE, num_stages=2):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(row_logits + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    lse = m + tl.log(d)

    ignored = label == IGNORE_INDEX
    safe_label = tl.where(ignored, 0, label)
    target_logit = tl.load(row_logits + safe_label).to(tl.float32)
    loss = tl.where(ignored, 0.0, lse - target_logit)
    tl.store(loss_ptr + row, loss)
    tl.store(lse_ptr + row, lse)


def cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    assert logits.ndim == 2 and logits.stride(1) == 1
    n_rows, n_cols = logits.shape
    loss = torch.empty((n_rows,), dtype=torch.float32, device=logits.device)
    lse = torch.empty((n_rows,), dtype=torch.float32, device=logits.device)
    BLOCK_SIZE = min(8192, triton.next_power_of_2(n_cols))
    cross_entropy_fwd_kernel[(n_rows,)](
        logits, labels, loss, lse, logits.stride(0), n_cols,
        BLOCK_SIZE=BLOCK_SIZE, num_warps=8,
    )
    n_valid = (labels != -100).sum().clamp(min=1)
    return loss.sum() / n_valid
