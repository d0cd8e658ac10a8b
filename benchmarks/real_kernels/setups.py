"""Device side: import a released kernel from its staged copy and build its inputs, outputs and reference."""
from __future__ import annotations

import importlib
import importlib.util
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
        mod = _from_file(k["module"], stage / "extracted" / f"{k['module']}.py")
    fn = getattr(mod, k["kernel"])
    import triton
    while not isinstance(fn, triton.runtime.jit.JITFunction):
        fn = fn.fn
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
    dev, bf = "cuda", torch.bfloat16

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
    raise KeyError(name)
