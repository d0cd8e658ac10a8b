"""Checking and timing one config on the GPU for benchmarks/gpu_configs.py, and the last step of a pair.

`settle` re-times the winners on fresh samples:

Up to run 19 the best config was the fastest finalist median, and that same median was its reported time.
Picking the minimum of several noisy medians and reporting it is biased low (winner's curse): with six
finalists within 5 % of each other, the one picked is also the one whose five rounds ran luckiest. Two
facts from the saved runs show the size of it (benchmarks/gpu/h200_results_run19.json):
  * softmax 4096×4096: the recommendation 4096·w8·s1 measured 0.974 of the "best" 4096·w8·s3. The kernel has
    no loop, so num_stages changes nothing Triton emits: the two are the same program, and 2.6 % is noise.
  * swiglu 1024×8192: 4096·w8·s1 vs 4096·w8·s3, 0.967: its column loop has no dot, Triton does not pipeline
    it, and the two cubins are byte-identical (hashed in run 20).
So the winner is chosen on one set of samples and measured on another (`CONFIRM_ROUNDS` alternating rounds
of the recommendation, the author's pick and the selected best), and configs whose compiled cubins are
byte-identical are one program, timed once.
"""
from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Mapping
from typing import Any

CONFIRM_ROUNDS = 5


def config_key(c: dict[str, Any]) -> str:
    """A config as the JSON key the results files use: [[constexpr, value]..., num_warps, num_stages]."""
    return json.dumps([sorted(c["kwargs"].items()), c["num_warps"], c["num_stages"]])


def check_config(launch, outs, ref, cf, digests: dict[str, str | None] | None = None) -> str | None:
    """None when the config computes the reference; else why not. Records the cubin's hash in `digests`."""
    import hashlib

    import torch
    for o in outs:
        o.fill_(float("nan"))
    try:
        kernel = launch(cf)   # the launch returns Triton's CompiledKernel
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - OutOfResources, ptxas errors: the config is unusable
        return f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
    if digests is not None:
        cubin = getattr(kernel, "asm", {}).get("cubin")
        digests[config_key(cf)] = hashlib.sha256(cubin).hexdigest()[:16] if isinstance(cubin, bytes) else None
    for o, r in zip(outs, ref()):
        of = o.float()
        if torch.isnan(of).any():
            return "NaN in output (unwritten or wrong)"
        err = ((of - r).norm() / r.norm().clamp_min(1e-9)).item()
        if err > 2e-2:
            return f"wrong: rel err {err:.3g}"
    return None


def time_config(launch, cf) -> float:
    """One timing of a config, µs: the median of do_bench (CUDA-graph replay under 10 µs)."""
    import torch
    import triton.testing as tt
    fn = lambda: launch(cf)
    t = tt.do_bench(fn, warmup=10, rep=40, return_mode="median")
    if t < 0.010:   # < 10 µs: launch gaps dominate plain do_bench; replay a CUDA graph instead
        with torch.cuda.stream(torch.cuda.Stream()):
            t = tt.do_bench_cudagraph(fn, rep=40, return_mode="median")
    return t * 1000.0   # µs


def settle(rec: str | None, auth: str | None, best: str, digests: Mapping[str, str | None],
           timer: Callable[[str], float], rounds: int = CONFIRM_ROUNDS) -> dict[str, Any]:
    """Re-time `rec`, `auth` and the selected `best` (config keys) in alternating rounds; one program each.

    `digests` maps a config key to a hash of its compiled cubin (None or absent: unknown, never merged);
    `timer(key)` times one config once. Returns the median per key (`us`), the fastest of them (`best`:
    the grid holds all three configs, so the re-measured fastest is the grid's best) and the keys timed as
    another key's program (`merged`)."""
    def same(a: str, b: str) -> bool:
        return a == b or (digests.get(a) is not None and digests.get(a) == digests.get(b))

    program: dict[str, str] = {}   # config key -> the key whose timings stand for its program
    timed: list[str] = []
    for key in (rec, best, auth):   # the recommendation first: an identical best is timed as the rec
        if key is None or key in program:
            continue
        rep = next((t for t in timed if same(t, key)), None)
        if rep is None:
            timed.append(key)
            rep = key
        program[key] = rep
    samples: dict[str, list[float]] = {k: [] for k in timed}
    for _ in range(rounds):
        for key in timed:
            samples[key].append(timer(key))
    median = {k: statistics.median(v) for k, v in samples.items()}
    us = {k: median[rep] for k, rep in program.items()}
    fastest = min(us, key=lambda k: (us[k], k != rec))   # on a tie the recommendation is the best
    return {"best": fastest, "us": us, "merged": sorted(k for k, rep in program.items() if rep != k)}
