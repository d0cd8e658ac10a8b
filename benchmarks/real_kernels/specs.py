"""The released kernels benchmarked, their shapes, the authors' configs and the grid (no torch, no GPU)."""
from __future__ import annotations

import ast
import shutil
from pathlib import Path
from typing import Any

STAGE = ".corpus/real_kernels"     # staged sources, git-ignored, carried to the GPU
LIGER = "liger_kernel-0.8.5-py3-none-any.whl"
UNSLOTH = "unsloth-2026.10.9-py3-none-any.whl"
MAMBA = "mamba_ssm-2.3.2.post1.tar.gz/mamba_ssm-2.3.2.post1"
GEMS = "flag_gems-5.0.2-py3-none-any.whl"
FLA = "fla_core-0.6.0-py3-none-any.whl"
GEMLITE = "gemlite-0.6.0.post2.tar.gz/gemlite-0.6.0.post2"
# helper jit functions that extracted kernels import, each staged as a file of its own under its module name:
# flag_gems kernels call `tle.program_id` (flag_gems.utils.triton_lang_extension: the program id as int64);
# gemlite's GEMM takes its tile swizzle, masked load and dequantisation from triton_kernels/utils.py
HELPERS = [dict(module="flag_gems_tle", src=f"{GEMS}/flag_gems/utils/triton_lang_extension.py",
                names=["program_id", "num_programs"]),
           dict(module="gemlite_utils", src=f"{GEMLITE}/gemlite/triton_kernels/utils.py",
                names=["load_ptr", "swizzle_tile", "linear_tile", "dequantize"])]
BF16 = ["--arg", "*bf16"]


def _rows(*pairs: tuple[int, int]) -> list[dict[str, int]]:
    return [dict(n_rows=r, n_cols=c) for r, c in pairs]


# name -> src (under .corpus/src), how the device loads it (package import with its parents stubbed, or the
# jit functions extracted into a file of their own where the package's imports need what the device lacks:
# `jit_only` leaves the autotune/heuristics decorators out, `prelude` adds import lines), kernel, shapes, the
# constexprs a config may set, and the --arg specs a user would pass.
KERNELS: dict[str, dict[str, Any]] = {
    "liger.swiglu": dict(src=f"{LIGER}/liger_kernel/ops/swiglu.py", root=LIGER, module="liger_kernel.ops.swiglu",
                         kernel="_swiglu_forward_kernel", tunable=["BLOCK_SIZE"],
                         shapes=_rows((4096, 14336), (8192, 11008), (2048, 28672)),
                         args=["a_ptr=*bf16", "b_ptr=*bf16", "c_ptr=*bf16"]),
    "liger.geglu": dict(src=f"{LIGER}/liger_kernel/ops/geglu.py", root=LIGER, module="liger_kernel.ops.geglu",
                        kernel="_geglu_tanh_forward_kernel", tunable=["BLOCK_SIZE"],
                        shapes=_rows((4096, 14336), (8192, 11008), (2048, 16384)),
                        args=["a=*bf16", "b=*bf16", "c=*bf16"]),
    "liger.rms_norm": dict(src=f"{LIGER}/liger_kernel/ops/rms_norm.py", root=LIGER,
                           module="liger_kernel.ops.rms_norm", kernel="_rms_norm_forward_kernel",
                           tunable=["BLOCK_SIZE"], shapes=_rows((4096, 4096), (16384, 8192), (8192, 5120)),
                           args=["Y_ptr=*bf16", "X_ptr=*bf16", "W_ptr=*bf16", "RSTD_ptr=*fp32"]),
    "liger.layer_norm": dict(src=f"{LIGER}/liger_kernel/ops/layer_norm.py", root=LIGER,
                             module="liger_kernel.ops.layer_norm", kernel="_layer_norm_forward_kernel",
                             tunable=["BLOCK_SIZE"], shapes=_rows((4096, 4096), (8192, 8192), (16384, 2048)),
                             args=["Y_ptr=*bf16", "X_ptr=*bf16", "W_ptr=*bf16", "B_ptr=*bf16",
                                   "Mean_ptr=*fp32", "RSTD_ptr=*fp32"]),
    "unsloth.rms_layernorm": dict(src=f"{UNSLOTH}/unsloth/kernels/rms_layernorm.py", extract=True,
                                  module="unsloth_rms_layernorm", kernel="_rms_layernorm_forward",
                                  tunable=["BLOCK_SIZE"], shapes=_rows((4096, 5120), (8192, 8192), (2048, 16384)),
                                  args=["Y=*bf16", "X=*bf16", "W=*bf16", "r=*fp32"]),
    "unsloth.geglu_exact": dict(src=f"{UNSLOTH}/unsloth/kernels/geglu.py", extract=True,
                                module="unsloth_geglu", kernel="_exact_forward_kernel", tunable=["BLOCK_SIZE"],
                                shapes=[dict(n_elements=4096 * 14336), dict(n_elements=8192 * 11008),
                                        dict(n_elements=1024 * 8192)],
                                args=["e=*bf16", "g=*bf16", "h=*bf16"]),
    "mamba.layer_norm": dict(src=f"{MAMBA}/mamba_ssm/ops/triton/layer_norm.py", root=MAMBA,
                             module="mamba_ssm.ops.triton.layer_norm", kernel="_layer_norm_fwd_1pass_kernel",
                             tunable=["BLOCK_N"], shapes=[dict(M=8192, N=2560), dict(M=16384, N=4096),
                                                          dict(M=4096, N=8192)],
                             args=["X=*bf16", "Y=*bf16", "W=*fp32", "B=*fp32", "Mean=*fp32", "Rstd=*fp32"]),
    "flag_gems.mm": dict(src=f"{GEMS}/flag_gems/ops/mm.py", extract=True, jit_only=True,
                         prelude=["import flag_gems_tle as tle"], module="flag_gems_mm",
                         kernel="mm_kernel_general", tunable=["BLOCK_M", "BLOCK_N", "BLOCK_K"],
                         shapes=[dict(M=4096, N=4096, K=4096), dict(M=8192, N=14336, K=4096),
                                 dict(M=1024, N=4096, K=14336)],
                         args=["A=*bf16", "B=*bf16", "C=*bf16", "stride_ak=1", "stride_bn=1", "stride_cn=1"]),
    "flag_gems.mm_tma": dict(src=f"{GEMS}/flag_gems/runtime/backend/_nvidia/hopper/ops/mm.py", extract=True,
                             jit_only=True, module="flag_gems_mm_tma", kernel="mm_kernel_general_host_tma",
                             tunable=["BLOCK_M", "BLOCK_N", "BLOCK_K"],
                             shapes=[dict(M=4096, N=4096, K=4096), dict(M=8192, N=14336, K=4096),
                                     dict(M=1024, N=4096, K=14336)],
                             args=["stride_ak=1", "stride_bn=1", "stride_cn=1"]),
    "flag_gems.softmax": dict(src=f"{GEMS}/flag_gems/ops/softmax.py", extract=True, jit_only=True,
                              prelude=["import flag_gems_tle as tle"], module="flag_gems_softmax",
                              kernel="softmax_kernel_inner", tunable=["TILE_N"],
                              shapes=[dict(M=32768, N=1024), dict(M=4096, N=32000), dict(M=1024, N=128256)],
                              args=["output_ptr=*bf16", "input_ptr=*bf16"]),
    "flag_gems.rms_norm": dict(src=f"{GEMS}/flag_gems/ops/rms_norm.py", extract=True, jit_only=True,
                               prelude=["import flag_gems_tle as tle"], module="flag_gems_rms_norm",
                               kernel="rms_norm_kernel", tunable=["BLOCK_SIZE"],
                               shapes=[dict(M=16384, N=4096), dict(M=32768, N=2048), dict(M=16384, N=3072)],
                               args=["out_ptr=*bf16", "INV_RMS=*fp32", "in_ptr=*bf16", "w_ptr=*bf16",
                                     "y_stride_c=1", "x_stride_c=1"]),
    "flag_gems.rms_norm_loop": dict(src=f"{GEMS}/flag_gems/ops/rms_norm.py", extract=True, jit_only=True,
                                    prelude=["import flag_gems_tle as tle"], module="flag_gems_rms_norm_loop",
                                    kernel="rms_norm_loop_kernel", tunable=["TILE_N"],
                                    shapes=[dict(M=8192, N=5120), dict(M=8192, N=8192), dict(M=4096, N=16384)],
                                    args=["out_ptr=*bf16", "INV_RMS=*fp32", "in_ptr=*bf16", "w_ptr=*bf16"]),
    "gemlite.gemm_a16w8": dict(src=f"{GEMLITE}/gemlite/triton_kernels/gemm_kernels.py", extract=True,
                               jit_only=True, module="gemlite_gemm", kernel="gemm_INT_kernel",
                               prelude=["from gemlite_utils import dequantize, linear_tile, load_ptr, swizzle_tile",
                                        "BLOCK_QUANT_SIZE = 128"],
                               tunable=["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "A_load_order"],
                               shapes=[dict(M=4096, N=4096, K=4096), dict(M=8192, N=14336, K=4096),
                                       dict(M=1024, N=4096, K=14336)],
                               args=["a_ptr=*bf16", "b_ptr=*i8", "c_ptr=*bf16", "scales_ptr=*bf16", "stride_ak=1",
                                     "stride_bk=1", "stride_cn=1"]),
    "fla.rms_norm": dict(src=f"{FLA}/fla/modules/norm/layernorm.py", extract=True, jit_only=True,
                         module="fla_layernorm", kernel="layer_norm_fwd_kernel_row", tunable=["BD"],
                         shapes=[dict(T=8192, D=4096), dict(T=16384, D=2048), dict(T=4096, D=8192)],
                         args=["x=*bf16", "y=*bf16", "w=*bf16", "rstd=*fp32"]),
    "fla.l2norm": dict(src=f"{FLA}/fla/modules/norm/l2norm.py", extract=True, jit_only=True,
                       module="fla_l2norm", kernel="l2norm_fwd_kernel", tunable=["BD", "BT"],
                       shapes=[dict(T=262144, D=128), dict(T=131072, D=256), dict(T=524288, D=64)],
                       args=["x=*bf16", "y=*bf16", "rstd=*fp32"]),
}


def next_pow2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def cfg(kw: dict[str, Any], w: int, s: int) -> dict[str, Any]:
    return {"kwargs": kw, "num_warps": w, "num_stages": s}


def calculate_settings(n: int) -> tuple[int, int]:
    """liger_kernel.ops.utils.calculate_settings / unsloth.kernels.utils.calculate_settings (CUDA)."""
    b = next_pow2(n)
    return b, 32 if b >= 32768 else 16 if b >= 8192 else 8 if b >= 2048 else 4


# flag_gems' `mm` autotune list on an H200: runtime.get_tuned_config("mm") reads the arch-specialised
# flag_gems/runtime/backend/_nvidia/hopper/tune_configs.yaml of the wheel (the same 22 entries as the
# vendor-wide _nvidia/tune_configs.yaml): (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps). The kernel timed
# is the portable ops/mm.py `mm_kernel_general` that list drives; on sm_90 with Triton >= 3.5 flag_gems'
# hopper backend sends TMA-aligned fp16/bf16 inputs to a host-descriptor kernel with a generated list instead.
GEMS_MM = [(64, 64, 64, 5, 4), (64, 128, 64, 3, 4), (64, 64, 128, 4, 8), (64, 128, 128, 4, 8), (64, 64, 64, 4, 4),
           (64, 64, 128, 3, 4), (64, 128, 64, 4, 4), (128, 128, 32, 5, 8), (128, 128, 32, 4, 8),
           (32, 64, 256, 4, 4), (16, 64, 256, 4, 4), (16, 64, 64, 5, 2), (16, 64, 128, 4, 2),
           (128, 128, 64, 3, 8), (128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 256, 32, 3, 8),
           (256, 128, 32, 3, 8), (128, 256, 64, 4, 8), (256, 128, 64, 4, 8), (128, 256, 32, 4, 8),
           (256, 128, 32, 4, 8)]


# gemlite's "fast" GEMM autotune list for NVIDIA (get_fast_autotune_config_nvidia, AUTOTUNE.GEMM = "fast"):
# (BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, A_load_order, num_warps, num_stages), GROUP_SIZE_M 8 throughout
GEMLITE_FAST = [(64, 64, 64, 0, 4, 5), (64, 128, 32, 2, 8, 5), (64, 128, 64, 0, 4, 5), (64, 128, 128, 2, 4, 5),
                (64, 128, 128, 2, 4, 5), (64, 128, 256, 0, 4, 5), (64, 256, 64, 2, 8, 5), (64, 256, 128, 0, 8, 5),
                (128, 128, 128, 2, 4, 5), (128, 128, 128, 2, 4, 5), (128, 128, 128, 0, 8, 5),
                (128, 128, 128, 0, 8, 5), (128, 128, 128, 2, 8, 5), (128, 128, 128, 2, 8, 5),
                (128, 256, 128, 2, 8, 5), (128, 128, 256, 2, 4, 5), (128, 128, 256, 0, 8, 5),
                (128, 128, 256, 2, 4, 5), (64, 32, 256, 0, 4, 5), (64, 128, 256, 2, 4, 5), (128, 256, 128, 0, 8, 5),
                (32, 128, 128, 0, 4, 5), (32, 128, 256, 0, 4, 5)]
H200_SMEM_OPTIN = 232448   # bytes: what Triton's driver reports as max_shared_mem on sm_90


def gemlite_pruned(shape: dict[str, Any]) -> list[tuple[int, int, int, int, int, int]]:
    """gemlite's kernel_config_pruner for int8 weights (elements_per_sample 1), channel-wise scales
    (group_size = K), no cached config (its configs/ ship none for an H200): BLOCK_SIZE_M clamped by M,
    N/K tiles capped by the problem, num_stages lowered until its shared-memory estimate fits, duplicates
    dropped. (m, n, k, A_load_order, num_warps, num_stages)."""
    m_, n_, k_ = shape["M"], shape["N"], shape["K"]
    out: list[tuple[int, int, int, int, int, int]] = []
    for bm, bn, bk, a, w, st in GEMLITE_FAST:
        bm = 16 if m_ <= 16 else min(max(bm, 16), 32) if m_ <= 32 else min(max(bm, 32), 64) if m_ <= 64 \
            else min(max(bm, 64), 128) if m_ <= 128 else min(max(bm, 64), 256)
        bn, bk = next_pow2(min(n_, bn)), next_pow2(min(k_, bk))
        bk = max(min(bk, k_), 32)
        while st > 1 and (bm * bk * 2 + bk * bn * 1) * max(st - 1, 1) > H200_SMEM_OPTIN:
            st -= 1
        if (bm, bn, bk, a, w, st) not in out:
            out.append((bm, bn, bk, a, w, st))
    return out


def gems_mm_tma() -> list[tuple[int, int, int, int, int]]:
    """flag_gems' hopper `matmul_get_configs()`: BLOCK_M 32-256 × BLOCK_N 32-128 × BLOCK_K 32-128 × stages 2-4 ×
    warps 4/8, kept where its estimate (A + B tiles at 4 bytes an element × stages + 1 KiB) fits the device's
    opt-in shared memory. (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps)."""
    return [(m, n, k, st, w) for m in (32, 64, 128, 256) for n in (32, 64, 128) for k in (32, 64, 128)
            for st in (2, 3, 4) for w in (4, 8) if (m * k + k * n) * 4 * st + 1024 <= H200_SMEM_OPTIN]


def gems_softmax_inner(n: int) -> tuple[int, int]:
    """flag_gems' softmax_inner heuristics (_nvidia/heuristics_config_utils.py): TILE_N, num_warps."""
    tile = next_pow2(n) if n <= 32 * 1024 else 4096
    return tile, 4 if tile < 2048 else 8 if tile < 4096 else 16


def fla_bd(d: int) -> int:
    """fla's launch: BD = min(65536 // x.element_size(), next_power_of_2(D)) (bf16 inputs)."""
    return min(65536 // 2, next_pow2(d))


def block(name: str, shape: dict[str, Any]) -> int | None:
    """The one block size the launch code computes (whole-row kernels), None where it is free."""
    if name == "mamba.layer_norm":
        return min(65536 // 2, next_pow2(shape["N"]))
    if name in ("unsloth.geglu_exact", "flag_gems.mm", "flag_gems.mm_tma", "flag_gems.rms_norm_loop",
                "fla.l2norm", "gemlite.gemm_a16w8"):
        return None
    if name == "flag_gems.softmax":
        return gems_softmax_inner(shape["N"])[0]
    if name == "flag_gems.rms_norm":
        return next_pow2(shape["N"])
    if name == "fla.rms_norm":
        return fla_bd(shape["D"])
    return calculate_settings(shape["n_cols"])[0]


def block_key(name: str) -> str:
    return {"mamba.layer_norm": "BLOCK_N", "flag_gems.softmax": "TILE_N", "fla.rms_norm": "BD",
            "fla.l2norm": "BD", "flag_gems.rms_norm_loop": "TILE_N"}.get(name, "BLOCK_SIZE")


def author_configs(name: str, shape: dict[str, Any]) -> list[dict[str, Any]]:
    """The launch code's config on an H200 (num_stages not passed: Triton's default, 3; flag_gems' config
    loader fills a missing num_stages with 2). For an autotuned kernel, its whole list."""
    if name == "mamba.layer_norm":   # @triton.autotune over num_warps 1..32 (pruned to <= 1024 threads)
        return [cfg({"BLOCK_N": block(name, shape)}, w, 3) for w in (1, 2, 4, 8, 16, 32)]
    if name == "unsloth.geglu_exact":   # module constant BLOCK_SIZE = 1024, default warps
        return [cfg({"BLOCK_SIZE": 1024}, 4, 3)]
    if name == "flag_gems.mm":
        return [cfg({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, w, st) for m, n, k, st, w in GEMS_MM]
    if name == "flag_gems.mm_tma":
        return [cfg({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, w, st) for m, n, k, st, w in gems_mm_tma()]
    if name == "gemlite.gemm_a16w8":
        return [cfg({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "A_load_order": a}, w, st)
                for m, n, k, a, w, st in gemlite_pruned(shape)]
    if name == "flag_gems.softmax":   # @triton.heuristics: TILE_N, ONE_TILE_PER_CTA (derived), num_warps
        t, w = gems_softmax_inner(shape["N"])
        return [cfg({"TILE_N": t}, w, 3)]
    if name == "flag_gems.rms_norm":   # N <= 4096: rms_norm_kernel[M,](..., BLOCK_SIZE), Triton's default warps
        return [cfg({"BLOCK_SIZE": next_pow2(shape["N"])}, 4, 3)]
    if name == "flag_gems.rms_norm_loop":   # N > 4096: autotune "rms_norm_loop": gen tile_n × warps
        return [cfg({"TILE_N": t}, w, 2) for t in (1024, 2048, 4096, 8192) for w in (4, 8, 16)]
    if name == "fla.rms_norm":   # D > 512: layer_norm_fwd_kernel_row, autotune num_warps 2..16
        return [cfg({"BD": fla_bd(shape["D"])}, w, 3) for w in (2, 4, 8, 16)]
    if name == "fla.l2norm":   # D <= 512: l2norm_fwd_kernel, autotune BT 8..128 × num_warps 1..16
        return [cfg({"BD": fla_bd(shape["D"]), "BT": bt}, w, 3) for w in (1, 2, 4, 8, 16)
                for bt in (8, 16, 32, 64, 128)]
    b, w = calculate_settings(shape["n_cols"])
    if name == "unsloth.rms_layernorm" and shape["n_cols"] == 5120:
        w = 4   # unsloth's _NUM_WARPS table: ((9, 0), 5120): 4
    return [cfg({"BLOCK_SIZE": b}, w, 3)]


def _per_thread(elems: int, w: int, most: int = 128) -> bool:
    return 1 <= elems // (32 * w) <= most


def grid_configs(name: str, shape: dict[str, Any]) -> list[dict[str, Any]]:
    """Exhaustive over the author's space, always holding the author's configs: whole-row kernels need their
    block (one size), so warps × stages; where a tile is free (the elementwise kernel's block, the looped
    kernels' tiles, the row tile of fla's l2norm, the GEMM's tiles) it is searched too, keeping each thread's
    share of a tile within reason (≤ 64 elements for the elementwise kernel, ≤ 128 otherwise)."""
    out: list[dict[str, Any]] = []
    if name == "flag_gems.mm":
        for m in (64, 128, 256):
            for n in (64, 128, 256):
                for k in (32, 64):
                    if m * n > 128 * 256:
                        continue
                    out += [cfg({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, w, st) for w in (4, 8) for st in (3, 4)]
    elif name == "flag_gems.mm_tma":
        pass   # the author's list is itself the grid over its space (162 configs)
    elif name == "gemlite.gemm_a16w8":   # N and K are constexprs: every config compiles once per shape
        for m, n, k in ((128, 128, 64), (128, 256, 64), (256, 128, 64), (64, 256, 64)):
            out += [cfg({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "A_load_order": 0}, w, st)
                    for w in (4, 8) for st in (3, 4)]
    elif name in ("flag_gems.softmax", "flag_gems.rms_norm_loop"):
        top = min(next_pow2(shape["N"]), 32768 if name == "flag_gems.softmax" else 16384)
        stages = (1, 3) if name == "flag_gems.softmax" else (1, 2, 3)
        for t in (1024, 2048, 4096, 8192, 16384, 32768):
            if t <= max(top, 1024):
                out += [cfg({"TILE_N": t}, w, st) for w in (1, 2, 4, 8, 16, 32) if _per_thread(t, w)
                        for st in stages]
    elif name == "fla.l2norm":
        bd = fla_bd(shape["D"])
        for bt in (4, 8, 16, 32, 64, 128):
            out += [cfg({"BD": bd, "BT": bt}, w, st) for w in (1, 2, 4, 8, 16, 32) if _per_thread(bd * bt, w)
                    for st in (1, 3)]
    else:
        b = block(name, shape)
        key = block_key(name)
        blocks = [b] if b is not None else [256, 512, 1024, 2048, 4096, 8192, 16384]
        for bs in blocks:
            for w in (1, 2, 4, 8, 16, 32):
                if b is None and not 1 <= bs // (32 * w) <= 64:
                    continue
                for st in (1, 3):
                    out.append(cfg({key: bs}, w, st))
    keys = {_key(c) for c in out}
    return out + [c for c in author_configs(name, shape) if _key(c) not in keys]


def _key(c: dict[str, Any]) -> tuple[Any, ...]:
    return (tuple(sorted(c["kwargs"].items())), c["num_warps"], c["num_stages"])


def kernlint_shape(name: str, shape: dict[str, Any], pin: bool) -> str:
    """The --shape a user passes: the problem sizes; with `pin`, also the block size the launch computes."""
    sizes = dict(shape)
    if pin:
        b = block(name, shape)
        if b is not None:
            sizes[block_key(name)] = b
        elif name == "unsloth.geglu_exact":
            sizes["BLOCK_SIZE"] = 1024
        elif name == "fla.l2norm":
            sizes["BD"] = fla_bd(shape["D"])
    return ",".join(f"{k}={v}" for k, v in sizes.items())


# ------------------------------------------------------------------ staging ------------------------------

def extract_jit(source: str, names: list[str], jit_only: bool = False, prelude: list[str] | None = None) -> str:
    """The module's triton/torch imports and the named top-level functions with every top-level function or
    assignment they use (transitively): a file that imports without the package's other dependencies. With
    `jit_only` the autotune/heuristics decorators above the `@triton.jit` are left out; `prelude` lines
    follow the imports."""
    tree = ast.parse(source)
    top: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            top[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    top[t.id] = node
    want: list[str] = []
    todo = list(names)
    while todo:
        n = todo.pop()
        if n in want or n not in top:
            continue
        want.append(n)
        node = top[n]
        parts_ = [node]
        if jit_only and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):   # not the dropped decorators
            parts_ = [node.args, *node.body, *node.decorator_list[-1:]]
        todo += [x.id for part in parts_ for x in ast.walk(part) if isinstance(x, ast.Name)]
    keep = {id(top[n]) for n in want}
    lines = source.splitlines()
    parts = ["import math", "import torch", "import triton", "import triton.language as tl", *(prelude or [])]
    for node in tree.body:
        if id(node) in keep:
            decos = getattr(node, "decorator_list", [])
            start = min([node.lineno] + [d.lineno for d in (decos[-1:] if jit_only else decos)])
            parts.append("\n".join(lines[start - 1:node.end_lineno]))
    return "\n\n\n".join(parts) + "\n"


def stage(root: Path) -> None:
    """Copy what the device imports into .corpus/real_kernels: the packages' trees (python files only) for the
    kernels imported as modules, extracted files for the others."""
    src, dst = root / ".corpus" / "src", root / STAGE
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    (dst / "extracted").mkdir()
    for k in KERNELS.values():
        if k.get("extract"):
            text = extract_jit((src / k["src"]).read_text(), [k["kernel"]], k.get("jit_only", False),
                               k.get("prelude"))
            (dst / "extracted" / f"{k['module']}.py").write_text(text)
        else:
            pkg = k["module"].split(".")[0]
            out = dst / pkg
            if not out.exists():
                shutil.copytree(src / k["root"] / pkg, out, ignore=shutil.ignore_patterns(
                    "*.so", "*.cu", "*.cpp", "*.h", "__pycache__", "*.pyc", "*.md"))
    for h in HELPERS:
        text = extract_jit((src / h["src"]).read_text(), h["names"], jit_only=True)
        (dst / "extracted" / f"{h['module']}.py").write_text(text)
    total = sum(f.stat().st_size for f in dst.rglob("*") if f.is_file())
    print(f"staged {len(list(dst.rglob('*.py')))} python files, {total / 1e6:.1f} MB in {dst}")
