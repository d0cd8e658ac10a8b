"""Time `kernlint recommend FILE` with the search's time-floor pruning on and off, and check both print the same.

    python benchmarks/recommend_speed.py examples/matmul.py [FILE ...] [--target h100] [--repeat 1]

Each file is searched in this process, pruned and unpruned alternately (kernlint.recommend.core.PRUNE), with
the CLI's own code path (`recommend.cli.run`: lint, every kernel and target, shapes unknown unless
`--shape`); the files are linted again for every run, so no estimate is shared between runs. Prints wall and
CPU seconds per file and their ratio; exit status 1 when any output differs. Budget (issue 35): ≤ 10 s for
any development-corpus file on two cores.
"""
from __future__ import annotations

import argparse
import io
import statistics
import sys
import time


def run_once(path: str, extra: list[str], prune: bool) -> tuple[float, float, str]:
    from kernlint.recommend import cli, core

    parser = argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers())
    args = parser.parse_args(["recommend", path, *extra])
    core.PRUNE = prune
    core._kernel_source_facts.cache_clear()   # each run reads the file's host facts afresh
    cli._def_texts.cache_clear()
    out = io.StringIO()
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        cli.run(args, out)
    finally:
        core.PRUNE = True
    return time.perf_counter() - wall, time.process_time() - cpu, out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--target", action="append", default=[])
    parser.add_argument("--shape", action="append", default=[])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    extra = [f"--target={t}" for t in args.target] + [f"--shape={s}" for s in args.shape]
    differ = 0
    print(f"{'file':60} {'unpruned s':>11} {'pruned s':>9} {'ratio':>6} {'CPU ratio':>9}  output")
    for path in args.files:
        rows: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
        texts: dict[bool, str] = {}
        for _ in range(args.repeat):
            for prune in (False, True):
                wall, cpu, texts[prune] = run_once(path, extra, prune)
                rows[prune].append((wall, cpu))
        off = [statistics.median(x) for x in zip(*rows[False])]
        on = [statistics.median(x) for x in zip(*rows[True])]
        same = texts[True] == texts[False]
        differ += not same
        print(f"{path[-60:]:60} {off[0]:11.2f} {on[0]:9.2f} {on[0] / off[0]:6.2f} {on[1] / off[1]:9.2f}  "
              f"{'identical' if same else 'DIFFERS'}", flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
