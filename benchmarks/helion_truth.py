"""helion_truth.py -- ptxas truth for Helion kernels: Helion's generated Triton code, compiled with no GPU.

Two steps, two interpreters (kernlint's lint path never imports helion, torch or triton):

    # 1. record: needs helion + torch (CPU build) + triton, e.g. /work/venv-helion (see the note below)
    /work/venv-helion/bin/python benchmarks/helion_truth.py record [--only KERNEL] [--caps 80,90,100]
    # 2. report: kernlint's own venv; pairs every record with kernlint's static estimate for the same
    #    helion.Config and prints smem exact / register median abs error / spill agreement per target
    python benchmarks/helion_truth.py [benchmarks/truth/helion-triton-3.9.json] [--json]

How the truth is obtained (Helion 1.5.1, torch 2.13.0+cpu, Triton 3.9.0): Helion traces the kernel on
*CPU* tensors of the shapes below (`kernel.bind(args)`), and `BoundKernel.to_triton_code(config)` returns
the module it would launch: the `@triton.jit` device function plus the host wrapper. We import that module
from a temp file, run its host wrapper with a capturing `_launcher` (CPU tensors: only `torch.empty` runs,
the launch is intercepted) to learn the kernel's arguments and `num_warps`/`num_stages`, and compile the
device function with `kernlint.calibrate.triton_compile.compile_jit` (Triton's compiler + bundled ptxas,
`GPUTarget("cuda", cap, 32)`), exactly like benchmarks/record_truth.py. Helion specialises on the shapes
(static_shapes is its default), so the extents below are also what kernlint gets (`--config m=...`).
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "truth" / "helion-triton-3.9.json"
CAP_TO_TARGET = {80: "a100", 90: "h100", 100: "b200"}
MM = {"x": ("m", "k"), "y": ("k", "n")}


def _cfg(bs: list[int], nw: int, ns: int = 1, **kw: Any) -> dict[str, Any]:
    return {"block_sizes": bs, "num_warps": nw, "num_stages": ns, **kw}


MATMUL_CONFIGS = [_cfg([64, 64, 32], 4, 3), _cfg([128, 128, 64], 8, 4), _cfg([128, 256, 64], 8, 3),
                  _cfg([64, 128, 64], 4, 4), _cfg([32, 32, 32], 2, 2), _cfg([128, 64, 32], 4, 5),
                  _cfg([256, 256, 64], 8, 4)]
# (file, kernel, tensors: name -> shape over the extents, extents, configs). All tensors fp16 (kernlint's
# default pointee), extents multiples of every block so Helion drops the masks kernlint does not model.
SPECS: list[dict[str, Any]] = [
    {"file": "examples/helion_matmul.py", "kernel": "helion_matmul", "tensors": MM,
     "extents": {"m": 4096, "n": 4096, "k": 4096}, "configs": MATMUL_CONFIGS},
    {"file": "examples/helion_matmul.py", "kernel": "helion_matmul_tuned", "tensors": MM,
     "extents": {"m": 4096, "n": 4096, "k": 4096}, "configs": MATMUL_CONFIGS},
    {"file": "examples/helion_fused_epilogue.py", "kernel": "helion_matmul_bias_gelu",
     "tensors": {"x": ("m", "k"), "w": ("k", "n"), "bias": ("n",), "residual": ("m", "n")},
     "extents": {"m": 4096, "n": 4096, "k": 4096}, "configs": MATMUL_CONFIGS[:6]},
    {"file": "examples/helion_rms_norm.py", "kernel": "helion_rms_norm",
     "tensors": {"x": ("m", "n"), "weight": ("n",)}, "extents": {"m": 4096, "n": 4096},
     "configs": [_cfg([1], 8, reduction_loops=[None]), _cfg([1], 4, reduction_loops=[None]),
                 _cfg([2], 8, reduction_loops=[None]), _cfg([1], 16, reduction_loops=[None]),
                 _cfg([2], 4, reduction_loops=[1024]), _cfg([4], 4, reduction_loops=[512]),
                 _cfg([1], 1, reduction_loops=[None])]},
    {"file": "examples/helion_rms_norm.py", "kernel": "helion_rms_norm_looped",
     "tensors": {"x": ("m", "n"), "weight": ("n",)}, "extents": {"m": 4096, "n": 8192},
     "configs": [_cfg([2], 4, reduction_loops=[2048]), _cfg([1], 4, reduction_loops=[1024]),
                 _cfg([4], 8, reduction_loops=[2048]), _cfg([1], 8, reduction_loops=[None]),
                 _cfg([8], 4, reduction_loops=[256])]},
    {"file": "examples/helion_softmax.py", "kernel": "helion_softmax_two_pass",
     "tensors": {"x": ("m", "n")}, "extents": {"m": 4096, "n": 16384},
     "configs": [_cfg([1, 1024], 4), _cfg([1, 4096], 8), _cfg([2, 512], 4), _cfg([4, 256], 4),
                 _cfg([1, 2048], 2, 2), _cfg([1, 16384], 1)]},
    {"file": "examples/helion_softmax.py", "kernel": "helion_softmax_wide_tiles",
     "tensors": {"x": ("m", "n")}, "extents": {"m": 4096, "n": 16384},
     "configs": [_cfg([1, 16384], 1), _cfg([1, 16384], 8), _cfg([1, 8192], 4), _cfg([1, 1024], 4),
                 _cfg([2, 2048], 8)]},
    {"file": "examples/helion_attention.py", "kernel": "helion_attention",
     "tensors": {"q": ("b", "m", "d"), "k": ("b", "n", "d"), "v": ("b", "n", "d")},
     "extents": {"b": 32, "m": 1024, "n": 1024, "d": 64},
     "configs": [_cfg([1, 128, 64], 8, 3), _cfg([1, 64, 64], 4, 2), _cfg([1, 128, 32], 4, 3),
                 _cfg([1, 64, 32], 4, 1), _cfg([1, 128, 128], 8, 2), _cfg([2, 64, 64], 4, 3)]},
]


# ---------------------------------------------------------------------------------------------- record
TORCH_TO_TRITON = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64", "int32": "i32",
                   "int64": "i64", "int8": "i8", "uint8": "u8", "bool": "i1", "float8_e4m3fn": "fp8e4nv"}


class _Captured(Exception):
    pass


def _load_module(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def generate(kernel: Any, tensors: list[Any], config: dict[str, Any], workdir: str) -> dict[str, Any]:
    """Helion's Triton code for `config` on CPU tensors → (jit fn, arg spec, launch options, code hash)."""
    import helion
    import torch
    bound = kernel.bind(tuple(tensors))
    code = bound.to_triton_code(helion.Config(**config))
    digest = hashlib.sha256(code.encode()).hexdigest()[:16]
    path = Path(workdir, f"helion_gen_{digest}.py")
    path.write_text(code)
    mod = _load_module(path, f"helion_gen_{digest}")
    host = next(v for k, v in vars(mod).items() if callable(v) and getattr(v, "__module__", None) == mod.__name__
                and not k.startswith("_") and not hasattr(v, "arg_names"))
    seen: dict[str, Any] = {}

    def capture(fn: Any, grid: Any, *args: Any, **kw: Any) -> None:
        seen.update(fn=fn, grid=grid, args=args, kw=kw)
        raise _Captured

    try:
        host(*tensors, _launcher=capture)
    except _Captured:
        pass
    fn = seen["fn"]
    spec: dict[str, Any] = {}
    for name, val in zip(fn.arg_names, seen["args"]):
        if isinstance(val, torch.Tensor):
            spec[name] = "*" + TORCH_TO_TRITON[str(val.dtype).removeprefix("torch.")]
        elif isinstance(val, (bool, int, float)) or val is None:
            spec[name] = val
        else:
            raise TypeError(f"argument {name} of type {type(val).__name__}")
    launch = {k: v for k, v in seen["kw"].items() if k in ("num_warps", "num_stages", "maxnreg")}
    return {"fn": fn, "args": spec, "launch": launch, "grid": list(seen["grid"]), "code_sha256": digest,
            "code_lines": code.count("\n")}


def record(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="helion_truth.py record")
    ap.add_argument("--only", default=None)
    ap.add_argument("--caps", default="80,90,100")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--timeout", type=int, default=240)
    ns = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import helion
    import torch

    from kernlint.calibrate.triton_compile import compile_jit, environment

    caps = [int(c) for c in ns.caps.split(",")]
    records: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as work:
        sys.path.insert(0, work)
        for spec in SPECS:
            if ns.only and ns.only != spec["kernel"]:
                continue
            mod = _load_module(ROOT / spec["file"], "examples." + Path(spec["file"]).stem)
            kernel = getattr(mod, spec["kernel"])
            ext = spec["extents"]
            tensors = [torch.randn([ext[d] for d in shape], dtype=torch.float16)
                       for shape in spec["tensors"].values()]
            for cfg in spec["configs"]:
                base = {"file": spec["file"], "kernel": spec["kernel"], "extents": ext, "helion_config": cfg}
                try:
                    gen = generate(kernel, tensors, cfg, work)
                except Exception as exc:  # noqa: BLE001 - a config Helion rejects is recorded, the sweep goes on
                    for cap in caps:
                        records.append({**base, "cap": cap, "error": f"helion: {type(exc).__name__}: "
                                        f"{str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ''}"})
                    print(f"{spec['kernel']} {cfg}: helion error {records[-1]['error']}", flush=True)
                    continue
                for cap in caps:
                    res = compile_jit(gen["fn"], gen["args"], {}, gen["launch"], cap, ns.timeout)
                    rec = {**base, "cap": cap, "args": gen["args"], "launch": gen["launch"], "grid": gen["grid"],
                           "code_sha256": gen["code_sha256"], "code_lines": gen["code_lines"], **res}
                    records.append(rec)
                    print(f"{spec['kernel']:26} sm_{cap} {cfg['block_sizes']} w{cfg['num_warps']} "
                          f"s{cfg['num_stages']} -> regs {res['regs']} spill {res['spill_store']} "
                          f"smem {res['shared']} {res['error'] or ''}", flush=True)
    doc = {"schema": "kernlint.helion-truth/1", **environment(), "helion_version": _version("helion"),
           "torch_version": torch.__version__, "caps": caps, "wall_s": round(time.perf_counter() - t0, 1),
           "records": records}
    del helion
    out = Path(ns.out)
    if ns.only and out.exists():  # keep the other kernels' records
        old = json.loads(out.read_text())
        doc["records"] = [r for r in old["records"] if r["kernel"] != ns.only] + records
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(records)} records -> {out}")
    return 0


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(dist)
    except PackageNotFoundError:
        return None


# ---------------------------------------------------------------------------------------------- report
def estimate_records(records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Any]]:
    """Pair each compiled record with kernlint's estimate for the same helion.Config, extents and target."""
    from kernlint.hardware.specs import resolve_target
    from kernlint.recommend.helion import estimate_config, load_kernel

    out: list[tuple[dict[str, Any], Any]] = []
    cache: dict[tuple[str, str], Any] = {}
    for r in records:
        if r.get("error") is not None or r["cap"] not in CAP_TO_TARGET:
            continue
        key = (r["file"], r["kernel"])
        if key not in cache:
            cache[key] = load_kernel(str(ROOT / r["file"]), r["kernel"])
        est = estimate_config(cache[key], r["helion_config"], r["extents"], resolve_target(CAP_TO_TARGET[r["cap"]]))
        if est.estimated:
            out.append((r, est))
    return out


def metrics(pairs: list[tuple[dict[str, Any], Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for target in sorted({e.target.key for _, e in pairs}):
        rows = [(r, e) for r, e in pairs if e.target.key == target]
        limit = rows[0][1].target.smem_per_cta_optin
        fits = [(r, e) for r, e in rows if r["shared"] <= limit]
        errs = [abs(e.registers.allocated - r["regs"]) / r["regs"] for r, e in fits if r.get("regs")]
        spill_t = [(r["spill_store"] or 0) > 0 for r, _ in fits]
        spill_p = [e.registers.demand > e.registers.budget for _, e in fits]
        oor_t = [r["shared"] > limit for r, _ in rows]
        oor_p = [e.smem.total > limit for _, e in rows]
        out[target] = {
            "pairs": len(rows), "smem_exact": sum(e.smem.total == r["shared"] for r, e in rows) / len(rows),
            "smem_within_2pct": sum(abs(e.smem.total - r["shared"]) <= 0.02 * max(r["shared"], 1)
                                    for r, e in rows) / len(rows),
            "oor_agree": sum(a == b for a, b in zip(oor_t, oor_p)) / len(rows),
            "regs_median_abs_err": statistics.median(errs) if errs else 0.0,
            "regs_within_20pct": sum(x <= 0.2 for x in errs) / len(errs) if errs else 1.0,
            "spill_agree": sum(a == b for a, b in zip(spill_t, spill_p)) / len(fits) if fits else 1.0,
            "spills_true": sum(spill_t), "spills_pred": sum(spill_p),
        }
    return out


def report(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="helion_truth.py")
    ap.add_argument("truth", nargs="?", default=str(OUT))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--rows", action="store_true", help="print every record next to its estimate")
    ns = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    doc = json.loads(Path(ns.truth).read_text())
    pairs = estimate_records(doc["records"])
    table = metrics(pairs)
    if ns.json:
        print(json.dumps(table, indent=1))
        return 0
    failed = [r for r in doc["records"] if r.get("error")]
    print(f"Helion {doc.get('helion_version')} / Triton {doc['triton_version']} / ptxas {doc['ptxas_version']}: "
          f"{len(doc['records'])} records, {len(failed)} failed, {len(pairs)} paired with an estimate")
    if ns.rows:
        for r, e in pairs:
            c = r["helion_config"]
            print(f"  {r['kernel']:26} {e.target.key:5} {c['block_sizes']!s:16} rl={c.get('reduction_loops')} "
                  f"w{c['num_warps']} s{c['num_stages']}  regs {r['regs']:>3}/{e.registers.allocated:<3} "
                  f"spill {r['spill_store']:>5}/{e.registers.spill_bytes:<5} smem {r['shared']:>6}/{e.smem.total}")
    print(f"{'target':8} {'pairs':>5} {'smem exact':>10} {'smem ±2%':>9} {'OOR agree':>9} {'regs med err':>12} "
          f"{'regs ≤20%':>9} {'spill agree':>11} {'spills t/p':>10}")
    for t, m in table.items():
        print(f"{t:8} {m['pairs']:>5} {m['smem_exact']:>10.0%} {m['smem_within_2pct']:>9.0%} {m['oor_agree']:>9.0%} "
              f"{m['regs_median_abs_err']:>12.1%} {m['regs_within_20pct']:>9.0%} {m['spill_agree']:>11.0%} "
              f"{m['spills_true']:>4}/{m['spills_pred']:<4}")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(record(args[1:]) if args[:1] == ["record"] else report(args))
