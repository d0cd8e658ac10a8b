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
BF16 = ["--arg", "*bf16"]


def _rows(*pairs: tuple[int, int]) -> list[dict[str, int]]:
    return [dict(n_rows=r, n_cols=c) for r, c in pairs]


# name -> src (under .corpus/src), how the device loads it (package import with its parents stubbed, or the
# jit functions extracted into a file of their own where the package's imports need what the device lacks),
# kernel, shapes, the constexprs a config may set, and the --arg specs a user would pass.
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
}


def next_pow2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def cfg(kw: dict[str, Any], w: int, s: int) -> dict[str, Any]:
    return {"kwargs": kw, "num_warps": w, "num_stages": s}


def calculate_settings(n: int) -> tuple[int, int]:
    """liger_kernel.ops.utils.calculate_settings / unsloth.kernels.utils.calculate_settings (CUDA)."""
    b = next_pow2(n)
    return b, 32 if b >= 32768 else 16 if b >= 8192 else 8 if b >= 2048 else 4


def block(name: str, shape: dict[str, Any]) -> int | None:
    """The one block size the launch code computes (whole-row kernels), None where it is free."""
    if name == "mamba.layer_norm":
        return min(65536 // 2, next_pow2(shape["N"]))
    if name == "unsloth.geglu_exact":
        return None
    return calculate_settings(shape["n_cols"])[0]


def author_configs(name: str, shape: dict[str, Any]) -> list[dict[str, Any]]:
    """The launch code's config on an H200 (num_stages not passed: Triton's default, 3)."""
    if name == "mamba.layer_norm":   # @triton.autotune over num_warps 1..32 (pruned to <= 1024 threads)
        return [cfg({"BLOCK_N": block(name, shape)}, w, 3) for w in (1, 2, 4, 8, 16, 32)]
    if name == "unsloth.geglu_exact":   # module constant BLOCK_SIZE = 1024, default warps
        return [cfg({"BLOCK_SIZE": 1024}, 4, 3)]
    b, w = calculate_settings(shape["n_cols"])
    if name == "unsloth.rms_layernorm" and shape["n_cols"] == 5120:
        w = 4   # unsloth's _NUM_WARPS table: ((9, 0), 5120): 4
    return [cfg({"BLOCK_SIZE": b}, w, 3)]


def grid_configs(name: str, shape: dict[str, Any]) -> list[dict[str, Any]]:
    """Exhaustive over the author's space: whole-row kernels need their block (one size), so warps × stages;
    the elementwise kernel's block is free, so BLOCK_SIZE 256..16384 × warps × stages (≤ 64 elements per
    thread)."""
    out = []
    b = block(name, shape)
    key = "BLOCK_N" if name == "mamba.layer_norm" else "BLOCK_SIZE"
    blocks = [b] if b is not None else [256, 512, 1024, 2048, 4096, 8192, 16384]
    for bs in blocks:
        for w in (1, 2, 4, 8, 16, 32):
            if b is None and not 1 <= bs // (32 * w) <= 64:
                continue
            for s in (1, 3):
                out.append(cfg({key: bs}, w, s))
    return out


def kernlint_shape(name: str, shape: dict[str, Any], pin: bool) -> str:
    """The --shape a user passes: the problem sizes; with `pin`, also the block size the launch computes."""
    sizes = dict(shape)
    if pin:
        b = block(name, shape)
        if b is not None:
            sizes["BLOCK_N" if name == "mamba.layer_norm" else "BLOCK_SIZE"] = b
        elif name == "unsloth.geglu_exact":
            sizes["BLOCK_SIZE"] = 1024
    return ",".join(f"{k}={v}" for k, v in sizes.items())


# ------------------------------------------------------------------ staging ------------------------------

def extract_jit(source: str, names: list[str], jit_only: bool = False) -> str:
    """The module's triton/torch imports and the named top-level functions with every top-level function or
    assignment they use (transitively): a file that imports without the package's other dependencies. With
    `jit_only` the autotune/heuristics decorators above the `@triton.jit` are left out."""
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
        todo += [x.id for x in ast.walk(top[n]) if isinstance(x, ast.Name)]
    keep = {id(top[n]) for n in want}
    lines = source.splitlines()
    parts = ["import math", "import torch", "import triton", "import triton.language as tl"]
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
    for k in KERNELS.values():
        if k.get("extract"):
            text = extract_jit((src / k["src"]).read_text(), [k["kernel"]])
            (dst / "extracted").mkdir(exist_ok=True)
            (dst / "extracted" / f"{k['module']}.py").write_text(text)
        else:
            pkg = k["module"].split(".")[0]
            out = dst / pkg
            if not out.exists():
                shutil.copytree(src / k["root"] / pkg, out, ignore=shutil.ignore_patterns(
                    "*.so", "*.cu", "*.cpp", "*.h", "__pycache__", "*.pyc", "*.md"))
    total = sum(f.stat().st_size for f in dst.rglob("*") if f.is_file())
    print(f"staged {len(list(dst.rglob('*.py')))} python files, {total / 1e6:.1f} MB in {dst}")
