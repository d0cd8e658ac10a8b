"""Versioned JSON: every diagnostic plus every kernel × config × target estimate with its breakdown.

What made the run incomplete (exit status 2) is in the document too: `internal_errors` (files the engine
failed on) and `path_errors` (paths given that could not be linted: missing, unreadable directory). Adding
`path_errors` kept schema 1: it is a new key, and readers of schema 1 ignore keys they do not know.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TextIO

from kernlint import __version__
from kernlint.pipeline.results import LintResult
from kernlint.core.diagnostic import Diagnostic
from kernlint.report import ReportContext

if TYPE_CHECKING:   # an annotation: a run over files without kernels never imports the engine (or libcst)
    from kernlint.analysis.estimate import KernelEstimate

SCHEMA_VERSION = 1


def diagnostic_json(d: Diagnostic) -> dict[str, Any]:
    return {
        "code": d.code, "rule": d.rule, "message": d.message, "severity": d.severity.value,
        "confidence": d.confidence.value, "filename": d.span.path,
        "location": {"row": d.span.start.line, "column": d.span.start.col + 1},
        "end_location": {"row": d.span.end.line, "column": d.span.end.col + 1},
        "kernel": d.kernel, "target": d.target, "config": d.config,
    }


def _jsonable(value: Any) -> Any:
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    return repr(value)


def estimate_json(e: KernelEstimate) -> dict[str, Any]:
    c = e.config
    out: dict[str, Any] = {
        "target": e.target.key, "arch": e.target.arch,
        "config": {"constexprs": {k: _jsonable(v) for k, v in c.constexprs.items()}, "num_warps": c.num_warps,
                   "num_stages": c.num_stages, "maxnreg": c.maxnreg, "origin": c.origin, "line": c.line,
                   "unknown": dict(c.unknown), **({"invalid": c.invalid} if c.invalid else {})},
        "confidence": e.confidence.value, "assumptions": list(e.assumptions), "missing": list(e.missing),
    }
    if e.registers is not None:
        r = e.registers
        out["registers"] = {"demand": r.demand, "allocated": r.allocated, "budget": r.budget,
                            "pressure": round(r.pressure, 3), "spill_bytes": r.spill_bytes,
                            "peak_line": r.peak_line,
                            "peak_tiles": [{"name": t.name, "shape": t.shape, "dtype": t.dtype,
                                            "registers": round(t.registers, 1), "line": t.line}
                                           for t in r.peak_tiles]}
    if e.smem is not None:
        out["shared_memory"] = {"bytes": e.smem.total, "limit": e.target.smem_per_cta_optin,
                                "buffers": [{"label": b.label, "bytes": b.bytes, "detail": b.detail, "line": b.line}
                                            for b in e.smem.buffers]}
        out["tensor_memory"] = {"columns": e.smem.tmem_columns, "limit": e.target.tmem_columns}
    if e.occupancy is not None:
        o = e.occupancy
        out["occupancy"] = {"ctas_per_sm": o.ctas_per_sm, "warps_per_sm": o.warps_per_sm,
                            "occupancy": round(o.occupancy, 4), "limiter": o.limiter, "by_limit": o.by_limit}
    return out


def render(result: LintResult, out: TextIO, targets: tuple[str, ...]) -> None:
    kernels = []
    for f in result.files:
        for k in f.kernels:
            kernels.append({
                "file": f.path, "name": k.jit.name, "qualname": k.jit.qualname, "line": k.jit.line,
                "autotune": None if k.jit.autotune is None else {
                    "configs": len(k.jit.autotune.configs), "key": list(k.jit.autotune.key),
                    "unknown_reason": k.jit.autotune.unknown_reason},
                "pointer_dtypes": k.ir.pointer_params,
                "unmodelled": [{"line": u.line, "construct": u.construct} for u in k.ir.unmodelled],
                "estimates": [estimate_json(e) for e in k.estimates],
            })
    doc = {"schema": SCHEMA_VERSION, "kernlint": __version__, "targets": list(targets),
           "diagnostics": [diagnostic_json(d) for d in result.diagnostics],
           "internal_errors": result.internal_errors, "path_errors": list(result.path_errors), "kernels": kernels,
           # kernels of other vendors' backends, not judged against NVIDIA targets (`vendor-backends = "check"`)
           "vendor_backends": {"skipped_kernels": result.vendor_skipped,
                               "files": [{"file": f.path, "kernels": f.vendor_skipped, "reason": f.vendor_reason}
                                         for f in result.files if f.vendor_reason is not None]}}
    json.dump(doc, out, indent=2)
    out.write("\n")


def render_to(result: LintResult, out: TextIO, ctx: ReportContext) -> None:
    render(result, out, ctx.targets)
