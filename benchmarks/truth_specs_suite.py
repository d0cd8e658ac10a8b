"""Development-suite specs (issue 3, item 4): the kernels of tests/truth/suite_kernels/, 10 configs each.

Same format as benchmarks/truth_specs.py (read by benchmarks/record_truth.py). Together with the 17 kernels
of truth_specs.py this gives the >= 30-kernel suite. Configs span small to large tiles, num_warps 1-16 and
num_stages 1-5; some are expected to spill or to exceed the shared-memory limit (OutOfResources), and some
to fail to compile -- a failure is recorded with its error, which is the point.
fp8 (float8e4nv) dot products do not compile for sm_80, so fp8_matmul_kernel is recorded for 90/100 only.
"""
from __future__ import annotations

_K = "tests/truth/suite_kernels/"


def _cfgs(keys: tuple[str, ...], rows) -> list[dict]:
    """rows: tuples of the tuned constexpr values followed by num_warps, num_stages."""
    out = []
    for row in rows:
        cfg = dict(zip(keys, row[:len(keys)]))
        cfg["num_warps"], cfg["num_stages"] = row[len(keys)], row[len(keys) + 1]
        out.append(cfg)
    return out


_MM = ("BLOCK_M", "BLOCK_N", "BLOCK_K")
_STRIDES = {"stride_am": "i32", "stride_ak": 1, "stride_bk": "i32", "stride_bn": 1, "stride_cm": "i32",
            "stride_cn": 1}
_ATTN = {"stride_z": "i32", "stride_h": "i32", "stride_tok": "i32", "stride_d": 1, "H": "i32", "N_CTX": "i32"}

SPECS: list[dict] = [
    # ---------------------------------------------------------------- matmul variants
    {
        "file": _K + "matmul_variants.py", "kernel": "fp8_matmul_kernel", "caps": [90, 100],
        "args": {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "c_ptr": "*bf16", "a_scale_ptr": "*fp32",
                 "b_scale_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32", "stride_am": "i32", "stride_ak": 1,
                 "stride_bn": "i32", "stride_bk": 1, "stride_cm": "i32", "stride_cn": 1},
        "constexprs": {"GROUP_M": 8},
        "configs": _cfgs(_MM, [(128, 256, 128, 8, 3), (128, 128, 128, 8, 4), (64, 128, 128, 4, 4),
                               (128, 64, 64, 4, 4), (64, 64, 64, 4, 3), (32, 32, 32, 1, 1), (64, 64, 64, 2, 2),
                               (256, 128, 128, 8, 3), (256, 256, 128, 8, 4), (128, 128, 256, 16, 5)]),
    },
    {
        "file": _K + "matmul_variants.py", "kernel": "sgemm_kernel",
        "args": {"a_ptr": "*fp32", "b_ptr": "*fp32", "bias_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32",
                 "K": "i32", **_STRIDES},
        "constexprs": {"GROUP_M": 8, "HAS_BIAS": True},
        "configs": _cfgs(_MM + ("ALLOW_TF32",), [
            (128, 128, 32, True, 8, 3), (128, 64, 32, True, 4, 4), (64, 64, 32, True, 4, 3),
            (64, 64, 16, False, 4, 5), (32, 32, 32, False, 1, 1), (64, 32, 32, False, 2, 2),
            (128, 256, 32, True, 8, 3), (256, 128, 64, True, 8, 4), (128, 128, 64, True, 16, 5),
            (128, 128, 32, False, 4, 2)]),
    },
    {
        "file": _K + "matmul_variants.py", "kernel": "splitk_matmul_kernel",
        "args": {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
                 **_STRIDES},
        "constexprs": {"GROUP_M": 8},
        "configs": _cfgs(_MM + ("SPLIT_K",), [
            (128, 128, 64, 4, 8, 3), (64, 64, 64, 8, 4, 4), (64, 128, 32, 2, 4, 5), (16, 32, 64, 16, 1, 1),
            (32, 64, 64, 4, 2, 3), (128, 256, 64, 1, 8, 3), (256, 128, 64, 2, 16, 4), (256, 256, 64, 2, 4, 3),
            (128, 128, 128, 4, 8, 5), (64, 64, 32, 1, 4, 2)]),
    },
    {
        "file": _K + "matmul_variants.py", "kernel": "w4a16_matmul_kernel",
        "args": {"a_ptr": "*fp16", "b_ptr": "*i32", "scales_ptr": "*fp16", "zeros_ptr": "*i32", "c_ptr": "*fp16",
                 "M": "i32", "N": "i32", "K": "i32", **_STRIDES, "stride_sg": "i32", "stride_sn": 1,
                 "stride_zg": "i32", "stride_zn": 1},
        "constexprs": {"GROUP_SIZE": 128, "GROUP_M": 8},
        "configs": _cfgs(_MM, [(16, 128, 64, 4, 3), (32, 64, 64, 2, 2), (64, 128, 64, 4, 3), (128, 128, 64, 8, 3),
                               (128, 256, 128, 8, 4), (64, 64, 128, 4, 5), (256, 128, 64, 8, 3),
                               (128, 128, 128, 16, 4), (32, 32, 32, 1, 2), (256, 256, 128, 4, 3)]),
    },
    {
        "file": _K + "grouped_gemm.py", "kernel": "grouped_matmul_kernel",
        "args": {"group_a_ptrs": "*i64", "group_b_ptrs": "*i64", "group_c_ptrs": "*i64", "group_gemm_sizes": "*i32",
                 "g_lds": "*i32", "group_size": "i32"},
        "constexprs": {"NUM_SM": 132},
        "configs": _cfgs(_MM, [(128, 128, 64, 8, 3), (64, 64, 32, 4, 4), (32, 32, 32, 1, 1), (128, 64, 32, 4, 2),
                               (64, 128, 64, 4, 3), (256, 128, 64, 8, 3), (128, 256, 64, 8, 4),
                               (256, 256, 64, 16, 3), (256, 256, 128, 8, 4), (16, 16, 16, 1, 5)]),
    },
    {
        "file": _K + "grouped_gemm.py", "kernel": "bmm_descriptor_kernel",
        "args": {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "B": "i32", "M": "i32", "N": "i32",
                 "K": "i32"},
        "constexprs": {},
        "configs": _cfgs(_MM, [(128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (64, 64, 64, 4, 4), (64, 128, 32, 4, 5),
                               (32, 32, 32, 1, 1), (256, 128, 64, 8, 4), (128, 128, 128, 4, 4),
                               (64, 64, 16, 2, 2), (256, 256, 64, 16, 3), (16, 64, 64, 1, 2)]),
    },
    # ---------------------------------------------------------------- attention
    {
        "file": _K + "attention.py", "kernel": "attn_fwd_causal_kernel",
        "args": {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "sm_scale": "fp32", "M": "*fp32", "Out": "*fp16",
                 **_ATTN},
        "constexprs": {"HEAD_DIM": 64},
        "configs": _cfgs(("BLOCK_M", "BLOCK_N"), [(128, 64, 8, 3), (128, 64, 4, 4), (64, 64, 4, 3), (128, 32, 4, 3),
                                                  (64, 32, 4, 4), (256, 64, 8, 3), (256, 64, 16, 4), (32, 16, 1, 1),
                                                  (16, 16, 1, 2), (256, 32, 4, 5)]),
    },
    {
        "file": _K + "attention.py", "kernel": "attn_bwd_dkdv_kernel",
        "args": {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "DO": "*fp16", "DK": "*fp16", "DV": "*fp16",
                 "M": "*fp32", "D": "*fp32", "sm_scale": "fp32", **_ATTN},
        "constexprs": {"HEAD_DIM": 128, "CAUSAL": True},
        "configs": _cfgs(("BLOCK_M", "BLOCK_N"), [(32, 128, 4, 5), (32, 64, 4, 3), (64, 64, 4, 3), (64, 128, 8, 3),
                                                  (16, 64, 2, 2), (16, 32, 1, 1), (32, 128, 8, 2), (64, 128, 4, 4),
                                                  (128, 128, 8, 3), (32, 32, 2, 4)]),
    },
    {
        "file": _K + "attention.py", "kernel": "attn_bwd_dq_kernel",
        "args": {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "DO": "*fp16", "DQ": "*fp16", "M": "*fp32",
                 "D": "*fp32", **_ATTN},
        "constexprs": {"HEAD_DIM": 128, "CAUSAL": True},
        "configs": _cfgs(("BLOCK_M", "BLOCK_N"), [(128, 32, 4, 5), (128, 64, 8, 3), (64, 32, 4, 3), (64, 64, 4, 4),
                                                  (32, 32, 2, 2), (16, 16, 1, 1), (128, 128, 8, 2), (256, 64, 8, 3),
                                                  (128, 32, 16, 4), (64, 16, 2, 5)]),
    },
    # ---------------------------------------------------------------- normalisation backward
    {
        "file": _K + "norm_backward.py", "kernel": "layernorm_bwd_dx_fused_kernel",
        "args": {"DX": "*fp16", "DY": "*fp16", "DW": "*fp32", "DB": "*fp32", "X": "*fp16", "W": "*fp16",
                 "Mean": "*fp32", "Rstd": "*fp32", "Lock": "*i32", "stride": "i32", "N": "i32"},
        "constexprs": {},
        "configs": _cfgs(("BLOCK_SIZE_N", "GROUP_SIZE_M"), [
            (1024, 64, 4, 1), (2048, 64, 8, 1), (4096, 64, 8, 1), (8192, 64, 16, 1), (16384, 32, 16, 1),
            (16384, 32, 4, 1), (512, 128, 2, 1), (256, 256, 1, 1), (32768, 32, 16, 2), (8192, 64, 4, 3)]),
    },
    {
        "file": _K + "norm_backward.py", "kernel": "layernorm_bwd_dwdb_kernel",
        "args": {"DW": "*fp32", "DB": "*fp32", "FINAL_DW": "*fp16", "FINAL_DB": "*fp16", "M": "i32", "N": "i32"},
        "constexprs": {},
        "configs": _cfgs(("BLOCK_SIZE_M", "BLOCK_SIZE_N"), [
            (32, 128, 4, 1), (32, 128, 8, 3), (64, 64, 4, 2), (16, 256, 4, 3), (128, 128, 8, 2), (128, 256, 16, 3),
            (256, 256, 4, 2), (8, 64, 1, 1), (64, 32, 2, 4), (32, 512, 8, 5)]),
    },
    {
        "file": _K + "norm_backward.py", "kernel": "rmsnorm_bwd_kernel",
        "args": {"dY_ptr": "*bf16", "dY_row_stride": "i32", "dX_ptr": "*bf16", "dX_row_stride": "i32",
                 "X_ptr": "*bf16", "X_row_stride": "i32", "W_ptr": "*bf16", "RSTD_ptr": "*fp32", "dW_ptr": "*fp32",
                 "dW_row_stride": "i32", "n_rows": "i32", "n_cols": "i32", "rows_per_program": "i32"},
        "constexprs": {},
        "configs": _cfgs(("BLOCK_SIZE",), [(1024, 4, 1), (2048, 8, 2), (4096, 8, 3), (8192, 16, 2), (16384, 16, 3),
                                           (8192, 4, 2), (512, 2, 1), (256, 1, 1), (32768, 16, 4), (4096, 4, 5)]),
    },
    {
        "file": _K + "norm_backward.py", "kernel": "softmax_bwd_kernel",
        "args": {"dx_ptr": "*fp16", "y_ptr": "*fp16", "dy_ptr": "*fp16", "dx_row_stride": "i32",
                 "y_row_stride": "i32", "dy_row_stride": "i32", "n_rows": "i32", "n_cols": "i32"},
        "constexprs": {},
        "configs": _cfgs(("BLOCK_SIZE", "IS_LOG"), [
            (1024, False, 4, 2), (2048, True, 8, 3), (4096, False, 8, 4), (8192, True, 16, 3), (16384, False, 16, 2),
            (16384, False, 4, 3), (512, True, 2, 1), (128, False, 1, 1), (32768, False, 16, 5), (4096, True, 4, 2)]),
    },
    {
        "file": _K + "losses.py", "kernel": "cross_entropy_bwd_kernel",
        "args": {"dlogits_ptr": "*bf16", "dlogits_row_stride": "i32", "logits_ptr": "*bf16",
                 "logits_row_stride": "i32", "lse_ptr": "*fp32", "labels_ptr": "*i64", "dloss_ptr": "*fp32",
                 "n_cols": "i32", "label_smoothing": "fp32", "ignore_index": "i32"},
        "constexprs": {},
        "configs": _cfgs(("BLOCK_SIZE", "HAS_SMOOTHING"), [
            (1024, False, 4, 1), (4096, True, 8, 2), (8192, False, 16, 3), (16384, True, 16, 4),
            (2048, True, 4, 2), (65536, False, 16, 3), (256, False, 1, 1), (512, True, 2, 5), (32768, True, 8, 3),
            (16384, False, 4, 2)]),
    },
    # ---------------------------------------------------------------- scans and custom reductions
    {
        "file": _K + "scan_reduce.py", "kernel": "linear_recurrence_kernel",
        "args": {"a_ptr": "*fp16", "b_ptr": "*fp16", "h_ptr": "*fp16", "h0_ptr": "*fp32", "seq_len": "i32",
                 "stride_batch": "i32", "stride_t": "i32", "stride_d": 1, "n_dim": "i32"},
        "constexprs": {},
        "configs": _cfgs(("BLOCK_T", "BLOCK_D"), [
            (64, 32, 4, 2), (128, 32, 4, 3), (32, 64, 4, 1), (16, 128, 4, 2), (256, 64, 8, 3), (128, 128, 8, 4),
            (512, 32, 16, 2), (16, 16, 1, 1), (64, 64, 2, 5), (256, 128, 4, 3)]),
    },
    {
        "file": _K + "scan_reduce.py", "kernel": "welford_row_stats_kernel",
        "args": {"x_ptr": "*bf16", "mean_ptr": "*fp32", "rstd_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32",
                 "stride_row": "i32", "eps": "fp32"},
        "constexprs": {},
        "configs": _cfgs(("BLOCK_M", "BLOCK_N"), [
            (1, 1024, 4, 1), (4, 512, 4, 2), (8, 256, 4, 3), (16, 128, 4, 2), (32, 64, 8, 3), (1, 2048, 8, 1),
            (64, 128, 8, 4), (2, 64, 1, 1), (64, 256, 4, 2), (16, 512, 2, 5)]),
    },
    # ---------------------------------------------------------------- pointwise / row-wise
    {
        "file": _K + "pointwise.py", "kernel": "quantize_int8_rowwise_kernel",
        "args": {"x_ptr": "*fp16", "q_ptr": "*i8", "scale_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32",
                 "stride_x": "i32", "stride_q": "i32"},
        "constexprs": {},
        "configs": _cfgs(("BLOCK_M", "BLOCK_N"), [
            (1, 4096, 4, 1), (2, 4096, 8, 1), (4, 2048, 4, 2), (8, 1024, 4, 3), (16, 8192, 16, 2), (1, 16384, 16, 1),
            (32, 1024, 8, 3), (4, 8192, 4, 1), (1, 256, 1, 1), (64, 512, 2, 5)]),
    },
    {
        "file": _K + "pointwise.py", "kernel": "rope_bwd_inplace_kernel",
        "args": {"dq_ptr": "*bf16", "dq_row_stride": "i32", "dk_ptr": "*bf16", "dk_row_stride": "i32",
                 "cos_ptr": "*fp32", "cos_row_stride": "i32", "sin_ptr": "*fp32", "sin_row_stride": "i32",
                 "seq_len": "i32"},
        "constexprs": {},
        "configs": _cfgs(("n_qh", "n_kh", "hd", "pad_n_qh", "pad_n_kh", "pad_hd"), [
            (32, 8, 128, 32, 8, 128, 4, 1), (32, 32, 128, 32, 32, 128, 8, 1), (28, 4, 128, 32, 4, 128, 4, 1),
            (64, 8, 128, 64, 8, 128, 8, 2), (14, 2, 64, 16, 2, 64, 2, 1), (40, 40, 128, 64, 64, 128, 16, 1),
            (8, 1, 64, 8, 1, 64, 1, 1), (96, 8, 128, 128, 8, 128, 4, 3), (48, 8, 256, 64, 8, 256, 8, 4),
            (16, 16, 64, 16, 16, 64, 2, 5)]),
    },
    {
        "file": _K + "pointwise.py", "kernel": "geglu_tanh_bwd_kernel",
        "args": {"dc_ptr": "*bf16", "a_ptr": "*bf16", "b_ptr": "*bf16", "stride": "i32", "n_cols": "i32"},
        "constexprs": {},
        "configs": _cfgs(("BLOCK_SIZE",), [(1024, 4, 1), (2048, 4, 2), (4096, 8, 1), (8192, 16, 3), (16384, 16, 1),
                                           (16384, 4, 2), (512, 2, 1), (128, 1, 1), (32768, 16, 4), (8192, 8, 5)]),
    },
    {
        "file": _K + "pointwise.py", "kernel": "residual_dropout_kernel",
        "args": {"x_ptr": "*fp16", "residual_ptr": "*fp16", "out_ptr": "*fp16", "keep_ptr": "*i8",
                 "n_elements": "i32", "p": "fp32", "seed": "i32"},
        "constexprs": {},
        "configs": _cfgs(("BLOCK_SIZE", "STORE_MASK"), [
            (1024, True, 4, 1), (2048, False, 8, 2), (4096, True, 8, 1), (8192, False, 16, 3), (512, True, 2, 1),
            (128, False, 1, 1), (16384, True, 16, 4), (16384, False, 4, 2), (4096, True, 4, 3),
            (65536, False, 8, 5)]),
    },
    {
        "file": _K + "pointwise.py", "kernel": "fused_add_rmsnorm_int8_kernel",
        "args": {"x_ptr": "*bf16", "residual_ptr": "*bf16", "w_ptr": "*bf16", "q_ptr": "*i8", "scale_ptr": "*fp32",
                 "residual_out_ptr": "*bf16", "stride": "i32", "n_cols": "i32", "eps": "fp32"},
        "constexprs": {},
        "configs": _cfgs(("BLOCK_N",), [(1024, 4, 1), (2048, 4, 1), (4096, 8, 2), (8192, 16, 1), (16384, 16, 3),
                                        (8192, 4, 1), (512, 2, 1), (256, 1, 1), (32768, 16, 2), (4096, 4, 4)]),
    },
    {
        "file": _K + "pointwise.py", "kernel": "causal_conv1d_fwd_kernel",
        "args": {"x_ptr": "*bf16", "w_ptr": "*bf16", "bias_ptr": "*bf16", "out_ptr": "*bf16", "seqlen": "i32",
                 "dim": "i32", "stride_x_batch": "i32", "stride_x_seq": "i32", "stride_w_dim": "i32",
                 "stride_o_batch": "i32", "stride_o_seq": "i32"},
        "constexprs": {"SILU": True},
        "configs": _cfgs(("BLOCK_L", "BLOCK_D", "KERNEL_WIDTH"), [
            (64, 64, 4, 4, 1), (128, 64, 4, 4, 2), (32, 128, 4, 4, 3), (128, 128, 4, 8, 2), (256, 128, 4, 8, 3),
            (16, 32, 2, 1, 1), (64, 256, 3, 8, 4), (256, 256, 4, 4, 2), (512, 64, 4, 16, 3), (32, 32, 4, 2, 5)]),
    },
]
