"""probe_register_collapse.py -- the measurement behind kernlint/analysis/spill_collapse.py.

A synthetic straight-line kernel loads K tiles of E fp32 per thread, block-sums them and stores every tile
scaled by the sum, so all K·E words are live at once; ptxas's registers / spill stores / stack frame are
printed per (cap, warps, K×E). Needs a venv with Triton (>= 3.5 for its ptxas log), no GPU:

    PYTHONPATH=. /work/venv-cal/bin/python benchmarks/probe_register_collapse.py 90 4 4x64 5x64 6x64 9x32 10x32
    (add --maxnreg=N to compile with Triton's maxnreg option, i.e. a PTX .maxnreg directive)

Triton 3.9, 4 warps (budget 255): sm_90/100 -> 255 registers with 108-424 B spills up to 5×64 / 9×32 words,
32 registers with 3-6 KB from 10×32 / 6×64 up; sm_80 -> 32 from 9×32 / 5×64; sm_86/89/120 collapse to 40.
With --maxnreg (128 or 255) ptxas keeps that cap however far over it the kernel is (6×64: 128 / 255).
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import sys
import tempfile
from pathlib import Path


def kernel_source(k: int) -> str:
    lines = ["import triton", "import triton.language as tl", "", "@triton.jit",
             "def probe(x_ptr, out_ptr, n, BLOCK: tl.constexpr):",
             "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", "    m = offs < n"]
    lines += [f"    x{i} = tl.load(x_ptr + {i} * n + offs, mask=m)" for i in range(k)]
    lines += ["    s = " + " + ".join(f"x{i}" for i in range(k)), "    t = tl.sum(s, axis=0)"]
    lines += [f"    tl.store(out_ptr + {i} * n + offs, x{i} * t, mask=m)" for i in range(k)]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv) or len(argv) < 2:
        print(__doc__)
        return 0 if argv else 2
    try:
        import triton
    except ModuleNotFoundError:
        print("probe_register_collapse.py needs Triton: pip install -e '.[triton]'", file=sys.stderr)
        return 2
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kernlint.calibrate.triton_compile import parse_ptxas_log

    maxnreg = [int(a.split("=", 1)[1]) for a in argv if a.startswith("--maxnreg=")]
    argv = [a for a in argv if not a.startswith("--maxnreg=")]
    cap, warps = int(argv[0]), int(argv[1])
    options = {"num_warps": warps, **({"maxnreg": maxnreg[0]} if maxnreg else {})}
    knobs.compilation.always_compile = True
    knobs.nvidia.dump_ptxas_log = True
    with tempfile.TemporaryDirectory() as d:
        for shape in argv[2:]:
            k, per_thread = map(int, shape.split("x"))
            path = Path(d, f"probe_{k}.py")
            path.write_text(kernel_source(k))
            spec = importlib.util.spec_from_file_location(path.stem, path)
            assert spec and spec.loader
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            div16 = [["tt.divisibility", 16]]
            src = ASTSource(mod.probe, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                            {"BLOCK": per_thread * 32 * warps}, {(0,): div16, (1,): div16, (2,): div16})
            log = io.StringIO()
            with contextlib.redirect_stdout(log):
                triton.compile(src, target=GPUTarget("cuda", cap, 32), options=options)
            print(json.dumps({"cap": cap, "warps": warps, "tiles": k, "per_thread": per_thread,
                              "words": k * per_thread, **parse_ptxas_log(log.getvalue())}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
