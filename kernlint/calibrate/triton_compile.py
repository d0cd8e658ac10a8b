"""One ground-truth compile: Triton's compiler + the bundled ptxas on a CPU-only machine (no GPU, no driver).

``triton.compile(ASTSource(fn, signature, constexprs, attrs), target=GPUTarget("cuda", cap, 32), options)``
gives ``metadata.shared`` / ``metadata.tmem_size``; registers, spills and stack come from Triton's own
``ptxas -v`` log (``knobs.nvidia.dump_ptxas_log``, Triton >= 3.5) or from re-running the bundled ptxas on the
PTX. The recipe is described in docs/design.md ("Ground truth").

Only the standard library at import time: Triton is imported inside the functions, so this module is usable
from any interpreter that has Triton (benchmarks/record_truth.py, ``kernlint.calibrate.worker``).

Argument spec (Triton's AOT spelling, what the runtime binder derives for aligned inputs):
  * pointer args ("*fp16") and "i32" args get ``tt.divisibility=16``; ":16" is accepted, ":0" turns it off;
  * the int 1 becomes ``constexpr 1``; another int becomes i32 (i64 if >= 2**31), with the divisibility hint
    when it is a multiple of 16; a float becomes fp32; None becomes ``constexpr None``;
  * other scalar types ("fp32", "i64", "u1", ...) get no attribute;
  * an argument the kernel declares ``tl.constexpr`` is passed as a constexpr whatever its value.
Config keys that are CUDAOptions fields (num_warps, num_stages, maxnreg, ...) become options, the rest constexprs.
"""
from __future__ import annotations

import contextlib
import io
import os
import platform
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

PTXAS_RE: dict[str, re.Pattern[str]] = {
    "regs": re.compile(r"Used (\d+) registers"),
    "stack": re.compile(r"(\d+) bytes stack frame"),
    "spill_store": re.compile(r"(\d+) bytes spill stores"),
    "spill_load": re.compile(r"(\d+) bytes spill loads"),
}
RESULT_FIELDS = ("regs", "spill_store", "spill_load", "stack", "shared", "tmem", "num_warps_compiled",
                 "compile_s", "ptxas_log", "error")


def unwrap(obj: Any) -> Any:
    """Autotuner / Heuristics wrappers keep the inner function in ``.fn``."""
    from triton.runtime.jit import JITFunction
    seen = 0
    while not isinstance(obj, JITFunction) and hasattr(obj, "fn") and seen < 8:
        obj, seen = obj.fn, seen + 1
    if not isinstance(obj, JITFunction):
        raise TypeError(f"{obj!r} is not a @triton.jit function")
    return obj


def option_names() -> set[str]:
    import dataclasses
    from triton.backends.nvidia.compiler import CUDAOptions
    return {f.name for f in dataclasses.fields(CUDAOptions)}


def build_compile_args(fn: Any, args: dict[str, Any], constexprs: dict[str, Any], config: dict[str, Any],
                       option_names: set[str]) -> tuple[dict[str, str], dict[str, Any], dict[tuple[int, ...], Any],
                                                        dict[str, Any]]:
    """(signature, constexprs, attrs, options) the way the runtime binder would specialise aligned inputs."""
    options = {k: v for k, v in config.items() if k in option_names}
    values = {**args, **constexprs, **{k: v for k, v in config.items() if k in fn.arg_names or k not in options}}
    signature: dict[str, str] = {}
    cx: dict[str, Any] = {}
    attrs: dict[tuple[int, ...], Any] = {}
    div16 = [["tt.divisibility", 16]]
    for i, name in enumerate(fn.arg_names):
        param = fn.params[i]
        if name in values:
            val = values[name]
        elif param.has_default:
            val = param.default
        else:
            raise KeyError(f"spec gives no value for argument {name!r} of {fn.__name__}")
        if param.is_constexpr:
            signature[name] = "constexpr"
            cx[name] = val
        elif isinstance(val, str):
            ty, _, hint = val.partition(":")
            signature[name] = ty
            if hint != "0" and (ty.startswith("*") or ty == "i32" or hint == "16"):
                attrs[(i, )] = div16
        elif isinstance(val, bool):
            signature[name] = "u1"
        elif isinstance(val, int):
            if val == 1:
                signature[name] = "constexpr"
                cx[name] = 1
            else:
                signature[name] = "i64" if not -2**31 <= val < 2**31 else "i32"
                if val % 16 == 0:
                    attrs[(i, )] = div16
        elif isinstance(val, float):
            signature[name] = "fp32"
        elif val is None:
            signature[name] = "constexpr"
            cx[name] = None
        else:
            raise TypeError(f"unsupported spec value {val!r} for argument {name!r}")
    unknown = set(values) - set(fn.arg_names) - option_names
    if unknown:
        raise KeyError(f"spec names unknown argument(s) {sorted(unknown)} of {fn.__name__}")
    return signature, cx, attrs, options


def parse_ptxas_log(log: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for key, rx in PTXAS_RE.items():
        m = rx.search(log)
        if m:
            out[key] = int(m.group(1))
    return out


def _ptxas_exe(cap: int) -> str:
    from triton.backends.nvidia.compiler import get_ptxas
    try:
        tool = get_ptxas(cap)
    except TypeError:  # 3.4-3.5: get_ptxas() takes no argument
        tool = get_ptxas()
    return tool.path if hasattr(tool, "path") else tool[0]


def ptxas_rerun(ptx: str, cap: int, enable_fp_fusion: bool) -> dict[str, int]:
    """Fallback: run the bundled ptxas -v on the PTX with the flags this Triton's make_cubin uses."""
    import inspect
    from triton.backends.nvidia import compiler as nvc
    from triton.backends.nvidia.compiler import sm_arch_from_capability
    try:
        reg_alloc = ["--regAllocOptLevel=2"] if "regAllocOptLevel" in inspect.getsource(nvc.CUDABackend.make_cubin) \
            else []
    except (OSError, TypeError):
        reg_alloc = []
    with tempfile.TemporaryDirectory() as d:
        src = Path(d, "k.ptx")
        src.write_text(ptx)
        cmd = [_ptxas_exe(cap), "-lineinfo", *([] if enable_fp_fusion else ["--fmad=false"]), "-v", *reg_alloc,
               f"--gpu-name={sm_arch_from_capability(cap)}", str(src), "-o", str(Path(d, "k.o"))]
        p = subprocess.run(cmd, capture_output=True, text=True)
    return parse_ptxas_log(p.stdout + p.stderr)


def error_line(exc: BaseException) -> str:
    """One informative line: the ptxas 'error'/'fatal' line, or the innermost cause of a CompilationError
    (nested @jit helpers wrap it once per call level) with its 'at line:col', else line 1 of the message."""
    name = type(exc).__name__
    msg = str(exc).strip()
    lines = [ln.strip() for ln in msg.splitlines() if ln.strip()]
    if name == "PTXASError":
        bad = [ln for ln in lines[1:] if re.search(r"\b(error|fatal)\s*:", ln) and "aborted" not in ln]
        if bad:
            return f"{name}: {bad[0].split(':', 1)[-1].strip()}"[:400]
    if hasattr(exc, "error_message"):  # CompilationError and subclasses
        where, inner, seen = "", exc, 0
        while inner is not None and seen < 32:
            seen += 1
            parts = str(inner).strip().splitlines()
            first = parts[0] if parts else ""
            if hasattr(inner, "error_message"):
                if first.startswith("at "):
                    where = first.rstrip(":")
                    # the failing source line follows: it names the function (kernel or helper) for
                    # session.attribute_error, whose lines Triton counts from that function's def
                    # (Triton prints the function's lines up to the failing one, then a `^` under it)
                    caret = next((i for i, ln in enumerate(parts) if ln.strip() == "^"), None)
                    code = parts[caret - 1].strip() if caret and caret > 1 else ""
                    where += f" `{code}`" if code and "`" not in code else ""
                if inner.error_message:
                    text = str(inner.error_message).strip().splitlines()
                    return f"{name}: {where}: {text[0] if text else ''}"[:400]
            else:
                return f"{name}: {where}: {type(inner).__name__}: {first}"[:400]
            inner = inner.__cause__ or inner.__context__
        return f"{name}: {where}"[:400]
    return f"{name}: {lines[0] if lines else ''}"[:400]


class CompileTimeout(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise CompileTimeout("compile timed out")


def compile_jit(fn: Any, args: dict[str, Any], constexprs: dict[str, Any], config: dict[str, Any], cap: int,
                timeout_s: int) -> dict[str, Any]:
    """Compile one JITFunction for one config and capability; returns RESULT_FIELDS (never raises)."""
    out: dict[str, Any] = dict.fromkeys(RESULT_FIELDS)
    t0 = time.perf_counter()
    knobs = None
    try:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        try:
            from triton import knobs as _k  # Triton >= 3.4
            knobs = _k
        except ImportError:
            knobs = None
        sig, cx, attrs, options = build_compile_args(fn, args, constexprs, config, option_names())
        if knobs is not None:
            knobs.compilation.always_compile = True  # cold compile every time, so Triton runs ptxas and logs it
            knobs.nvidia.dump_ptxas_log = True  # >= 3.5: Triton prints its own `ptxas -v` log to stdout
        else:
            os.environ["TRITON_ALWAYS_COMPILE"] = "1"
        buf = io.StringIO()
        old = signal.signal(signal.SIGALRM, _on_alarm) if timeout_s else None
        if timeout_s:
            signal.alarm(timeout_s)
        t0 = time.perf_counter()
        try:
            with contextlib.redirect_stdout(buf):
                k = triton.compile(ASTSource(fn, sig, cx, attrs), target=GPUTarget("cuda", cap, 32), options=options)
        finally:
            out["compile_s"] = round(time.perf_counter() - t0, 4)
            if timeout_s:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, old)
        md = k.metadata
        ptxas = parse_ptxas_log(buf.getvalue())
        out["ptxas_log"] = "triton"
        if "regs" not in ptxas:
            ptxas = ptxas_rerun(k.asm["ptx"], cap, bool(getattr(md, "enable_fp_fusion", True)))
            out["ptxas_log"] = "rerun"
        out.update(regs=ptxas.get("regs"), spill_store=ptxas.get("spill_store", 0),
                   spill_load=ptxas.get("spill_load", 0), stack=ptxas.get("stack", 0), shared=md.shared,
                   tmem=getattr(md, "tmem_size", None), num_warps_compiled=md.num_warps)
    except BaseException as exc:  # CompilationError, PTXASError, timeout, bad spec ... : record and go on
        if isinstance(exc, KeyboardInterrupt):
            raise
        if out["compile_s"] is None:
            out["compile_s"] = round(time.perf_counter() - t0, 4)
        out["error"] = error_line(exc)
    finally:
        if knobs is not None:
            knobs.compilation.always_compile = False
            knobs.nvidia.dump_ptxas_log = False
        os.environ.pop("TRITON_ALWAYS_COMPILE", None)
    return out


def tool_version(path: Path) -> str | None:
    if not path.exists():
        return None
    out = subprocess.run([str(path), "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+\.\d+), V([\d.]+)", out)
    return m.group(2) if m else (out.strip().splitlines()[-1] if out.strip() else None)


def environment() -> dict[str, Any]:
    """Triton and bundled ptxas versions: part of every truth record and of the calibrate cache key."""
    import triton
    import triton.backends.nvidia as nv
    bindir = Path(nv.__file__).parent / "bin"
    return {"triton_version": triton.__version__, "ptxas_version": tool_version(bindir / "ptxas"),
            "ptxas_blackwell_version": tool_version(bindir / "ptxas-blackwell"),
            "python": platform.python_version()}
