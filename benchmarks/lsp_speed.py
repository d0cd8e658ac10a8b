"""Re-lint time of a ~1,000-line kernel file through the LSP server's lint path (budget: ≤ 100 ms).

    python benchmarks/lsp_speed.py [--lines 1000] [--runs 7]

The file is built from the example kernels that need no other module, copied with every top-level
function renamed (`matmul_kernel` → `matmul_kernel_3`) so each copy is a distinct kernel. Each run
changes one line, like a keystroke, and calls the same `lint_text` the server runs after its debounce:
parse, kernels, estimates for every config × target, rules, noqa — no LSP transport. `--edit comment`
changes a comment between kernels, `--edit kernel` a line inside the first kernel. The server reuses the
analyses of kernels whose inputs did not change (kernlint/pipeline/incremental.py) and libcst's statements of the
chunks of text that did not change (kernlint/frontend/cst_reuse.py); each run also re-lints the same text with
both dropped (`forget_analyses`: a whole parse, every kernel analysed), so both medians come from one run,
interleaved.
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SELF_CONTAINED = ("matmul.py", "softmax.py", "layernorm.py", "vector_add.py", "rmsnorm.py", "cross_entropy.py",
                  "rope.py", "quantize_fp8.py", "attention_fwd.py", "batched_matmul.py")
_DEF = re.compile(r"^def (\w+)", re.MULTILINE)
_IMPORT = re.compile(r"^(import|from) .*\n", re.MULTILINE)


def build_file(target_lines: int) -> str:
    header = "import torch\nimport triton\nimport triton.language as tl\n"
    bodies = [_IMPORT.sub("", (ROOT / "examples" / name).read_text(encoding="utf-8")) for name in SELF_CONTAINED]
    parts, lines, copy = [header], header.count("\n"), 0
    while lines < target_lines:
        body = bodies[copy % len(bodies)]
        for name in _DEF.findall(body):
            body = re.sub(rf"\b{name}\b", f"{name}_{copy}", body)
        parts.append(f"\n\n# ---- copy {copy} ----\n" + body)
        lines += body.count("\n") + 3
        copy += 1
    return "".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--edit", choices=("comment", "kernel"), default="comment",
                        help="the line changed: a comment between kernels, or a line of the first kernel")
    args = parser.parse_args(argv)
    from kernlint.lsp.server import KernlintServer

    server = KernlintServer(debounce_s=0)
    text = build_file(args.lines)
    uri = (ROOT / "lsp_speed_generated.py").as_uri()     # never written: the server lints in-memory text
    first = server.lint_text(uri, text, 0)                 # warm-up: imports, rule registry
    line = "# ---- copy 0 ----" if args.edit == "comment" else "tl.program_id(0)"
    assert line in text
    times, fresh, cpu, cpu_fresh = [], [], [], []   # wall and CPU ms (CPU time is steadier on a shared machine)
    for run in range(1, args.runs + 1):
        edited = text.replace(line, f"{line}  # edit {run}", 1)
        start, start_cpu = time.perf_counter(), time.process_time()
        linted = server.lint_text(uri, edited, run)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        server.forget_analyses()                            # the same re-lint, every kernel analysed again
        server.lint_text(uri, text, 0)
        server.forget_analyses()
        start, start_cpu = time.perf_counter(), time.process_time()
        again = server.lint_text(uri, edited, run)
        fresh.append((time.perf_counter() - start) * 1000)
        cpu_fresh.append((time.process_time() - start_cpu) * 1000)
        assert again.result.diagnostics == linted.result.diagnostics
        server.lint_text(uri, text, 0)                      # the next run's edit starts from this text
    result = linted.result
    estimates = sum(len(k.estimates) for k in result.kernels)
    print(f"{text.count(chr(10))} lines, {len(result.kernels)} kernels, {estimates} estimates, "
          f"{len(result.diagnostics)} diagnostics (first lint: {len(first.result.diagnostics)})")
    print(f"re-lint median {statistics.median(times):.1f} ms over {args.runs} runs "
          f"(min {min(times):.1f}, max {max(times):.1f}); budget 100 ms")
    print(f"re-lint analysing every kernel: median {statistics.median(fresh):.1f} ms "
          f"(reuse / every kernel: {statistics.median(times) / statistics.median(fresh):.2f})")
    print(f"CPU time: re-lint {statistics.median(cpu):.1f} ms, analysing every kernel "
          f"{statistics.median(cpu_fresh):.1f} ms (reuse / every kernel: "
          f"{statistics.median(cpu) / statistics.median(cpu_fresh):.2f})")
    return 0 if result.internal_error is None else 1


if __name__ == "__main__":
    sys.exit(main())
