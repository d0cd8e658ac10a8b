"""Device side: import a released kernel from its staged copy and build its inputs, outputs and reference."""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

from .specs import KERNELS, extract_jit

_loaded: dict[str, Any] = {}


def _import(name: str, stage: Path) -> Any:
    """The kernel's JITFunction: the package module imported with its parent packages stubbed (their
    __init__ pulls in what a kernel file does not need), or, where that fails or the kernel was staged
    extracted, its jit functions extracted into a file of their own. Autotune/heuristics wrappers are
    unwrapped through `.fn`."""
    k = KERNELS[name]
    mod = None
    if not k.get("extract"):
        parts = k["module"].split(".")
        if str(stage) not in sys.path:
            sys.path.insert(0, str(stage))
        for i in range(1, len(parts)):
            pkg = ".".join(parts[:i])
            if pkg not in sys.modules:
                m = types.ModuleType(pkg)
                m.__path__ = [str(stage.joinpath(*parts[:i]))]
                sys.modules[pkg] = m
        try:
            mod = importlib.import_module(k["module"])
        except Exception as e:  # noqa: BLE001 - a dependency the device lacks: fall back to extraction
            print(f"[{name}] import failed ({type(e).__name__}: {e}); extracting the jit functions", flush=True)
            text = extract_jit((stage / Path(*parts)).with_suffix(".py").read_text(), [k["kernel"]], jit_only=True)
            d = Path(tempfile.mkdtemp())
            path = d / f"{parts[-1]}_extracted.py"
            path.write_text(text)
            mod = _from_file(f"{parts[-1]}_extracted", path)
    else:
        if str(stage / "extracted") not in sys.path:   # an extracted file's own imports (flag_gems_tle)
            sys.path.insert(0, str(stage / "extracted"))
        mod = _from_file(k["module"], stage / "extracted" / f"{k['module']}.py")
    fn = getattr(mod, k["kernel"])
    import triton
    while not isinstance(fn, triton.runtime.jit.JITFunction) and type(fn).__name__ != "InterpretedFunction":
        fn = fn.fn   # (an InterpretedFunction under TRITON_INTERPRET=1)
    return fn


def _from_file(modname: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(modname, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[modname] = mod
    spec.loader.exec_module(mod)
    return mod


def setup(name: str, shape: dict[str, Any], stage: Path):  # noqa: C901 - one branch per kernel
    """(launch(config) -> CompiledKernel, output tensors to NaN-poison, reference() -> expected outputs)."""
    import torch
    import triton
    if name not in _loaded:
        _loaded[name] = _import(name, stage)
    fn = _loaded[name]
    torch.manual_seed(0)
    dev, bf = os.environ.get("KL_DEVICE", "cuda"), torch.bfloat16   # KL_DEVICE=cpu: a TRITON_INTERPRET dry run

    def opts(cf):
        return dict(**cf["kwargs"], num_warps=cf["num_warps"], num_stages=cf["num_stages"])

    if name in ("liger.swiglu", "liger.geglu"):
        R, C = shape["n_rows"], shape["n_cols"]
        a, b = torch.randn(R, C, device=dev, dtype=bf), torch.randn(R, C, device=dev, dtype=bf)
        c = torch.empty_like(a)
        if name == "liger.swiglu":
            launch = lambda cf: fn[(R,)](a, b, c, c.stride(-2), 1.0, n_cols=C, **opts(cf))
            ref = lambda: [torch.nn.functional.silu(a.float()) * b.float()]
        else:
            launch = lambda cf: fn[(R,)](a, b, c, c.stride(-2), n_cols=C, **opts(cf))
            ref = lambda: [torch.nn.functional.gelu(a.float(), approximate="tanh") * b.float()]
        return launch, [c], ref
    if name in ("liger.rms_norm", "unsloth.rms_layernorm"):
        R, C = shape["n_rows"], shape["n_cols"]
        x = torch.randn(R, C, device=dev, dtype=bf)
        w = (1 + 0.1 * torch.randn(C, device=dev)).to(bf)
        y = torch.empty_like(x)
        r = torch.empty(R, device=dev, dtype=torch.float32)
        eps = 1e-6

        def ref():
            xf = x.float()
            rs = torch.rsqrt(xf.pow(2).mean(-1) + eps)
            return [xf * rs[:, None] * w.float(), rs]
        if name == "liger.rms_norm":   # casting_mode llama (0), elementwise_affine, offset 0
            launch = lambda cf: fn[(R,)](y, y.stride(0), x, x.stride(0), w, w.stride(0), r, r.stride(0), C, eps,
                                         0.0, 0, elementwise_affine=True, **opts(cf))
        else:
            launch = lambda cf: fn[(R,)](y, x, w, r, y.stride(0), x.stride(0), w.stride(0), r.stride(0), C, eps,
                                         LONG_INDEXING=0, **opts(cf))
        return launch, [y, r], ref
    if name == "liger.layer_norm":
        R, C = shape["n_rows"], shape["n_cols"]
        x = torch.randn(R, C, device=dev, dtype=bf)
        w, b = torch.randn(C, device=dev, dtype=bf), torch.randn(C, device=dev, dtype=bf)
        y = torch.empty_like(x)
        mean, rstd = torch.empty(R, device=dev), torch.empty(R, device=dev)
        launch = lambda cf: fn[(R,)](y, y.stride(0), x, x.stride(0), w, w.stride(0), b, b.stride(0), mean,
                                     mean.stride(0), rstd, rstd.stride(0), C, 1e-6, **opts(cf))
        ref = lambda: [torch.nn.functional.layer_norm(x.float(), (C,), w.float(), b.float(), 1e-6),
                       x.float().mean(-1)]
        return launch, [y, mean], ref
    if name == "unsloth.geglu_exact":
        n = shape["n_elements"]
        e, g = torch.randn(n, device=dev, dtype=bf), torch.randn(n, device=dev, dtype=bf)
        h = torch.empty_like(e)

        def launch(cf):
            grid = (triton.cdiv(n, cf["kwargs"]["BLOCK_SIZE"]),)
            return fn[grid](e, g, h, n, LONG_INDEXING=0, **opts(cf))
        return launch, [h], lambda: [torch.nn.functional.gelu(e.float()) * g.float()]
    if name == "mamba.layer_norm":
        M, N = shape["M"], shape["N"]
        x = torch.randn(M, N, device=dev, dtype=bf)
        w, b = 1 + 0.1 * torch.randn(N, device=dev), 0.1 * torch.randn(N, device=dev)
        y = torch.empty_like(x)
        mean, rstd = torch.empty(M, device=dev), torch.empty(M, device=dev)

        def launch(cf):
            return fn[(M,)](x, y, w, b, None, None, None, None, None, None, None, None, None, mean, rstd,
                            x.stride(0), y.stride(0), 0, 0, 0, 0, M, N, 1e-6, 0.0, IS_RMS_NORM=False,
                            HAS_RESIDUAL=False, STORE_RESIDUAL_OUT=False, HAS_BIAS=True, HAS_DROPOUT=False,
                            STORE_DROPOUT_MASK=False, HAS_ROWSCALE=False, HAS_X1=False, HAS_W1=False,
                            HAS_B1=False, **opts(cf))
        ref = lambda: [torch.nn.functional.layer_norm(x.float(), (N,), w, b, 1e-6), x.float().mean(-1)]
        return launch, [y, mean], ref
    if name == "flag_gems.mm":
        M, N, K = shape["M"], shape["N"], shape["K"]
        a = torch.randn(M, K, device=dev, dtype=bf)
        b = torch.randn(K, N, device=dev, dtype=bf)
        c = torch.empty(M, N, device=dev, dtype=bf)
        expect = a.float() @ b.float()   # once: every config is checked against it

        def launch(cf):
            kw = cf["kwargs"]
            grid = (triton.cdiv(M, kw["BLOCK_M"]) * triton.cdiv(N, kw["BLOCK_N"]),)
            return fn[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                            c.stride(1), GROUP_M=8, **opts(cf))
        return launch, [c], lambda: [expect]
    if name == "flag_gems.softmax":
        M, N = shape["M"], shape["N"]
        x = torch.randn(M, N, device=dev, dtype=bf)
        y = torch.empty_like(x)

        def launch(cf):   # ONE_TILE_PER_CTA as its heuristic derives it from TILE_N
            return fn[(M, 1, 1)](y, x, M, N, ONE_TILE_PER_CTA=cf["kwargs"]["TILE_N"] >= N, **opts(cf))
        return launch, [y], lambda: [torch.softmax(x.float(), -1)]
    if name in ("flag_gems.rms_norm", "flag_gems.rms_norm_loop", "fla.rms_norm"):
        M, N = (shape["T"], shape["D"]) if name == "fla.rms_norm" else (shape["M"], shape["N"])
        x = torch.randn(M, N, device=dev, dtype=bf)
        w = (1 + 0.1 * torch.randn(N, device=dev)).to(bf)
        y = torch.empty_like(x)
        r = torch.empty(M, device=dev, dtype=torch.float32)
        eps = 1e-6

        def ref():
            xf = x.float()
            rs = torch.rsqrt(xf.pow(2).mean(-1) + eps)
            return [xf * rs[:, None] * w.float(), rs]
        if name == "flag_gems.rms_norm":   # the launch's strides: (N, 1) for y and x
            launch = lambda cf: fn[(M,)](y, r, x, w, N, 1, N, 1, N, eps, **opts(cf))
        elif name == "flag_gems.rms_norm_loop":
            launch = lambda cf: fn[(M,)](y, r, x, w, N, eps, **opts(cf))
        else:   # fla's RMSNorm: weight, no bias, no residual, one group
            launch = lambda cf: fn[(M,)](x=x, y=y, w=w, b=None, res=None, res_out=None, mean=None, rstd=r, eps=eps,
                                         G=1, D=N, IS_RMS_NORM=True, HAS_RESIDUAL=False,
                                         STORE_RESIDUAL_OUT=False, HAS_WEIGHT=True, HAS_BIAS=False, **opts(cf))
        return launch, [y, r], ref
    if name == "fla.l2norm":
        T, D = shape["T"], shape["D"]
        x = torch.randn(T, D, device=dev, dtype=bf)
        y = torch.empty_like(x)
        r = torch.empty(T, device=dev, dtype=torch.float32)
        eps = 1e-6

        def launch(cf):
            grid = (triton.cdiv(T, cf["kwargs"]["BT"]),)
            return fn[grid](x=x, y=y, rstd=r, eps=eps, T=T, D=D, NB=triton.cdiv(T, 2048 * 32), **opts(cf))

        def ref():
            xf = x.float()
            rs = 1 / torch.sqrt(xf.pow(2).sum(-1) + eps)
            return [xf * rs[:, None], rs]
        return launch, [y, r], ref
    if name == "gemlite.gemm_a16w8":
        # GemLiteLinear's A16W8 layout (pack() with int8 weights and one scale per output channel): W_q is the
        # [N, K] int8 weight transposed (not contiguous), scales [1, N]; channel_scale_mode 1, W_group_mode 0
        import triton.language as tl
        M, N, K = shape["M"], shape["N"], shape["K"]
        x = torch.randn(M, K, device=dev, dtype=bf)
        wq = torch.randint(-127, 128, (N, K), device=dev, dtype=torch.int8)
        scales = (0.002 + 0.004 * torch.rand(N, device=dev)).to(bf).view(N, -1).t().contiguous()
        zeros = torch.tensor([[]], dtype=torch.int32, device=dev)
        b = wq.t()
        c = torch.empty(M, N, device=dev, dtype=bf)
        expect = (x.float() @ wq.float().t()) * scales.float()
        m_closest = min(1 << (M - 1).bit_length(), 4096)   # utils.get_closest_m for power-of-two M (a key only)

        def launch(cf):
            kw = cf["kwargs"]
            bm, bn, bk = kw["BLOCK_SIZE_M"], kw["BLOCK_SIZE_N"], kw["BLOCK_SIZE_K"]
            grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
            return fn[grid](x, b, c, scales, zeros, None, M, N, K, m_closest, 8, K, 255, 1, 1008, 2, 1,
                            x.stride(0), x.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1), None, None,
                            scales.stride(0), scales.stride(1), False, input_dtype=tl.bfloat16,
                            output_dtype=tl.bfloat16, acc_dtype=tl.float32, meta_dtype=tl.bfloat16,
                            channel_scale_mode=1, W_group_mode=0, zero_is_scalar=False, data_contiguous=False,
                            GROUP_SIZE_M=8, NUM_STAGES=cf["num_stages"], EVEN_M=M % bm == 0, EVEN_N=N % bn == 0,
                            EVEN_K=K % bk == 0, use_tma=False, use_5d_scales=False, warp_specialize=False,
                            **opts(cf))
        return launch, [c], lambda: [expect]
    if name == "flag_gems.mm_tma":   # general_mm's host-descriptor path: row-major A and B, GROUP_M 8
        from triton.tools.tensor_descriptor import TensorDescriptor
        M, N, K = shape["M"], shape["N"], shape["K"]
        a = torch.randn(M, K, device=dev, dtype=bf)
        b = torch.randn(K, N, device=dev, dtype=bf)
        c = torch.empty(M, N, device=dev, dtype=bf)
        expect = a.float() @ b.float()

        def launch(cf):   # block shapes as its pre_hook (matmul_tma_set_block_size_hook) sets them
            kw = cf["kwargs"]
            bm, bn, bk = kw["BLOCK_M"], kw["BLOCK_N"], kw["BLOCK_K"]
            a_d = TensorDescriptor(a, list(a.shape), list(a.stride()), [bm, bk])
            b_d = TensorDescriptor(b, list(b.shape), list(b.stride()), [bk, bn])
            c_d = TensorDescriptor(c, list(c.shape), list(c.stride()), [bm, bn])
            grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
            return fn[grid](a_d, b_d, c_d, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                            c.stride(1), GROUP_M=8, A_ROW_MAJOR=True, B_ROW_MAJOR=True,
                            dtype=str(a.dtype).split(".")[-1], **opts(cf))
        return launch, [c], lambda: [expect]
    raise KeyError(name)
