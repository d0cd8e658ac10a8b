"""Front-to-back lint speed over a real directory, and a canonical dump of everything the lint produced.

    python benchmarks/lint_speed.py DIR [DIR ...] [--cwd BASE] [--dump out.json] [--profile N]

Runs `kernlint.pipeline.api.lint_paths` (one process, default Settings) over the Python files under the DIRs
(relative to `--cwd`, so module names match a `kernlint check` run from there) and prints files,
kernels, diagnostics, seconds and files/s. `--dump` writes a canonical JSON of the whole result: every
diagnostic with its span, notes and config, every kernel's config points and every estimate (registers
demand/allocated, spills, smem buffers, tmem, occupancy per config and target). Two dumps of the same
tree are byte-identical, so a speed change can be checked for "same output" with `cmp` (set PYTHONHASHSEED
(e.g. 0) for runs in different processes: reprs of sets follow string hashing).
`--profile N` prints the N most expensive functions (cProfile, cumulative time).

The repository root is put first on sys.path and its `rules/` is loaded as `kernlint.rules`, so the
checkout this script lives in is measured (an editable install maps `kernlint.rules` to the rules/ of
the checkout it was installed from, whichever `kernlint` is imported).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _load_this_checkouts_rules() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("kernlint.rules", ROOT / "rules" / "__init__.py",
                                                  submodule_search_locations=[str(ROOT / "rules")])
    if spec is None or spec.loader is None or "kernlint.rules" in sys.modules:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["kernlint.rules"] = module
    spec.loader.exec_module(module)


_load_this_checkouts_rules()

from kernlint.pipeline.api import LintResult, Settings, lint_paths  # noqa: E402
from kernlint.report.json_format import estimate_json  # noqa: E402


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _repr(value: Any) -> str:
    """repr without object addresses (`<object object at 0x7f…>` differs between processes)."""
    return _ADDRESS.sub(" at 0x?", repr(value))


def _diagnostic(d: Any) -> dict[str, Any]:
    return {"code": d.code, "rule": d.rule, "message": d.message, "severity": d.severity.value,
            "confidence": d.confidence.value, "path": d.span.path,
            "span": [d.span.start.line, d.span.start.col, d.span.end.line, d.span.end.col],
            "kernel": d.kernel, "target": d.target, "config": d.config, "notes": list(d.notes)}


def canonical(result: LintResult) -> dict[str, Any]:
    """Everything a lint produced, in file order, as plain JSON values (reprs for the rest)."""
    files = []
    for f in result.files:
        kernels = []
        for k in f.kernels:
            kernels.append({
                "name": k.jit.name, "qualname": k.jit.qualname, "line": k.jit.line,
                "decorator_line": k.jit.decorator_line, "params": [_repr(p) for p in k.jit.params],
                "autotune": _repr(k.jit.autotune), "heuristics": [(h.name, h.source, h.line) for h in k.jit.heuristics],
                "pointer_dtypes": k.ir.pointer_params,
                "unmodelled": [(u.line, u.construct) for u in k.ir.unmodelled],
                "points": [_repr(p) for p in k.points],
                "estimates": [estimate_json(e) for e in k.estimates],
            })
        files.append({"path": f.path, "internal_error": f.internal_error, "warnings": f.warnings,
                      "diagnostics": [_diagnostic(d) for d in f.diagnostics], "kernels": kernels})
    return {"files": files}


def counts(doc: dict[str, Any]) -> tuple[int, int, int]:
    """(kernels, diagnostics, estimates) in a canonical dump."""
    kernels = [k for f in doc["files"] for k in f["kernels"]]
    return (len(kernels), sum(len(f["diagnostics"]) for f in doc["files"]),
            sum(len(k["estimates"]) for k in kernels))


def run(dirs: list[str], cwd: str | None = None) -> tuple[LintResult, float]:
    here = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        start = time.perf_counter()
        result = lint_paths(dirs, Settings())
        return result, time.perf_counter() - start
    finally:
        os.chdir(here)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--cwd", help="directory the DIRs are relative to (module names depend on it)")
    ap.add_argument("--dump", help="write the canonical JSON of the result here")
    ap.add_argument("--profile", type=int, default=0, metavar="N", help="print the N top functions by cumulative time")
    args = ap.parse_args()
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        result, seconds = run(args.dirs, args.cwd)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile)
    else:
        result, seconds = run(args.dirs, args.cwd)
    doc = canonical(result)
    kernels, diagnostics, estimates = counts(doc)
    files = len(result.files)
    print(f"kernlint {Path(sys.modules['kernlint'].__file__ or '').parent}, "
          f"rules {Path(sys.modules['kernlint.rules'].__file__ or '').parent}")
    print(f"files {files}  kernels {kernels}  estimates {estimates}  diagnostics {diagnostics}  "
          f"internal errors {len(result.internal_errors)}")
    print(f"seconds {seconds:.2f}  files/s {files / seconds if seconds else 0.0:.1f}")
    if args.dump:
        Path(args.dump).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
