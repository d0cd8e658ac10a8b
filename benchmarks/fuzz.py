"""Fuzz kernlint at scale with the grammar and mutations of tests/fuzz/ (fixed seed, keeps going).

    python benchmarks/fuzz.py                       # 10,000 generated kernels + 5,000 mutations, seed 0
    python benchmarks/fuzz.py --kernels 200 --mutations 100 --seed 3

Prints case counts, invariant violations grouped by kind with the first reproducer of each, and time.
Exit status 1 when anything was found. Every case is checked for: no exception, no KL000/internal
error, finite non-negative estimates, identical results on a second run, and (generated kernels)
shared memory non-decreasing when one knob (a block size or num_stages) increases.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

from fuzz_grammar import RandomChooser, bump, generate_kernel  # noqa: E402
from fuzz_invariants import lint_checked, monotonic_violations  # noqa: E402
from fuzz_mutations import example_texts, mutate  # noqa: E402

from kernlint.pipeline.api import Settings  # noqa: E402


def _kind(problem: str) -> str:
    """Group violations by their stable prefix (numbers and names vary per case)."""
    for key in ("internal error", "KL000", "exception escaped", "non-deterministic", "smem fell"):
        if key in problem:
            return key + ": " + problem.split(":")[-1].strip()[:80] if key in ("internal error", "KL000") else key
    return "estimate not finite/non-negative: " + problem.split(":")[-1].split("=")[0].strip()


def run(kernels: int, mutations: int, seed: int, out_dir: Path | None) -> int:
    rng = random.Random(seed)
    ch = RandomChooser(rng)
    found: Counter[str] = Counter()
    first: dict[str, str] = {}
    counts = Counter()

    def record(problems: list[str], source: str | bytes) -> None:
        for p in problems:
            kind = _kind(p)
            found[kind] += 1
            if kind not in first:
                first[kind] = p
                if out_dir is not None:
                    out_dir.mkdir(parents=True, exist_ok=True)
                    data = source if isinstance(source, bytes) else source.encode()
                    (out_dir / f"case{len(first)}.py").write_bytes(data)

    start = time.perf_counter()
    for _ in range(kernels):
        gk = generate_kernel(ch)
        s = Settings(targets=gk.targets, cli_configs=(gk.config,), arg_types={"*": gk.pointee})
        try:
            result, problems = lint_checked(gk.source, s)
            counts["estimates"] += sum(len(k.estimates) for f in result.files for k in f.kernels)
            knob = ch.choice(gk.knobs)
            bigger = bump(gk.config, knob)
            if bigger is not None:
                problems += monotonic_violations(gk.source, gk.name, gk.config, bigger, knob, s)
                counts["monotonic pairs"] += 1
        except AssertionError as exc:
            problems = [str(exc)]
        counts["generated kernels"] += 1
        record(problems, gk.source)
        if counts["generated kernels"] % 500 == 0:  # progress, so a long run's partial counts survive
            print(f"  {counts['generated kernels']:,} kernels, {sum(found.values())} violations, "
                  f"{time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    gen_s = time.perf_counter() - start

    texts = example_texts()
    by_mutation: Counter[str] = Counter()
    start = time.perf_counter()
    for _ in range(mutations):
        name, kinds, data = mutate(ch, texts)
        by_mutation.update(kinds.split("+"))
        try:
            _, problems = lint_checked(data, Settings(targets=("h100", "b200", "a100")), path=name)
        except AssertionError as exc:
            problems = [str(exc)]
        counts["mutated files"] += 1
        record(problems, data)
    mut_s = time.perf_counter() - start

    print(f"seed {seed}: {counts['generated kernels']:,} generated kernels ({gen_s:.0f} s), "
          f"{counts['monotonic pairs']:,} monotonicity pairs, {counts['estimates']:,} estimates; "
          f"{counts['mutated files']:,} mutated files ({mut_s:.0f} s)")
    print("mutations applied: " + ", ".join(f"{k} {v}" for k, v in sorted(by_mutation.items())))
    if not found:
        print("violations: 0 (no crash, no KL000, all estimates finite and >= 0, deterministic, smem monotonic)")
        return 0
    print(f"violations: {sum(found.values())} in {len(found)} kinds")
    for kind, n in found.most_common():
        print(f"  {n:6d}  {kind}\n          first: {first[kind][:300]}")
    return 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=10_000)
    ap.add_argument("--mutations", type=int, default=5_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", type=Path, default=None, help="write the first reproducer of each kind here")
    a = ap.parse_args()
    return run(a.kernels, a.mutations, a.seed, a.save)


if __name__ == "__main__":
    raise SystemExit(main())
