"""CLI speed: cold start of `kernlint check` on one small file, and a warm-cache re-run over many files.

    python benchmarks/cli_speed.py [--files 1000] [--repeat 5]

Cold start = a fresh `python -m kernlint check` process on one small kernel file, wall time, median of
`--repeat` runs: once with `--no-cache` (parses with libcst) and once with a warm cache (the usual
editor/pre-commit case: nothing changed). Warm re-run = `kernlint check` over `--files` generated kernel
files whose results are all cached. Each cold run also asserts that triton/torch/pygls were not imported.
Budgets (docs/design.md, "Performance budgets"): cold ≤ 300 ms, warm 1,000 files ≤ 2 s.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def add_{i}(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y * {i}, mask=mask)


def launch(x, y, out, n):
    add_{i}[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
'''
PROBE = ("import sys, runpy\nsys.argv = ['kernlint', *sys.argv[1:]]\n"
         "try:\n    runpy.run_module('kernlint', run_name='__main__')\nexcept SystemExit:\n    pass\n"
         "bad = [m for m in ('triton', 'torch', 'pygls') if m in sys.modules]\n"
         "assert not bad, f'imported on the check path: {bad}'\n")


def _time(cmd: list[str], cwd: Path, repeat: int) -> float:
    times = []
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": ""}  # measure an installed package, with .pyc files
    env.pop("PYTHONDONTWRITEBYTECODE")
    for _ in range(repeat):
        t = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - t)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=0, help="-j for the cold fill of the many-file tree (0: cores)")
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        one = Path(tmp) / "one"
        one.mkdir()
        (one / "k.py").write_text(KERNEL.format(i=1))
        _time([py, "-c", "pass"], one, 1)  # warm the OS file cache for the interpreter
        base = _time([py, "-c", "pass"], one, args.repeat)
        _time([py, "-c", PROBE, "check", "k.py"], one, 1)  # writes .pyc files and fills the cache
        no_cache = _time([py, "-c", PROBE, "check", "k.py", "--no-cache"], one, args.repeat)
        warm_one = _time([py, "-c", PROBE, "check", "k.py"], one, args.repeat)
        many = Path(tmp) / "many"
        for i in range(args.files):
            d = many / f"pkg{i // 100}"
            d.mkdir(parents=True, exist_ok=True)
            (d / f"k{i}.py").write_text(KERNEL.format(i=i))
        jobs = ["-j", str(args.jobs)] if args.jobs else []
        t = time.perf_counter()
        _time([py, "-m", "kernlint", "check", ".", "--output-format", "concise", *jobs], many, 1)
        fill = time.perf_counter() - t
        warm_many = _time([py, "-m", "kernlint", "check", ".", "--output-format", "concise"], many, args.repeat)
    print(f"python startup alone:               {base * 1000:7.0f} ms")
    print(f"cold start, one small file, no cache: {no_cache * 1000:7.0f} ms")
    print(f"cold start, one small file, cached:   {warm_one * 1000:7.0f} ms   (budget 300 ms)")
    print(f"cache fill, {args.files} files ({os.cpu_count()} cores):  {fill:7.2f} s")
    print(f"warm cache, {args.files} files:            {warm_many:7.2f} s   (budget 2 s for 1,000)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
