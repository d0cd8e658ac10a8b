"""Hardware counters for configs the time model ranks in the wrong order (Nsight Compute, on the H200).

    ncu --clock-control none --profile-from-start off --csv --metrics "$(python3 benchmarks/gpu/ncu_pairs.py --metrics)" \
        python3 benchmarks/gpu/ncu_pairs.py > counters.csv
    python3 benchmarks/gpu/ncu_pairs.py --report counters.csv      (here or there: a table per pair)

Each group is one kernel × shape of benchmarks/gpu_configs.py with the config measured fastest there first,
then the one the model picked (benchmarks/gpu/h200_results_run24.json), then neighbours. Every config is
launched twice to compile and warm, then once between cudaProfilerStart/Stop, so ncu profiles exactly one
launch per config, in the order of GROUPS. The counters answer why the model's pick is slower: DRAM
throughput, L1/L2 traffic, achieved occupancy and where warps stall.
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

# (kernel, shape, [(constexprs, num_warps, num_stages), ...]) — fastest measured first, the model's pick second
GROUPS: list[tuple[str, dict[str, Any], list[tuple[dict[str, int], int, int]]]] = [
    ("rmsnorm", {"n_rows": 1024, "n_cols": 32768},
     [({"BLOCK_SIZE": 2048}, 32, 1), ({"BLOCK_SIZE": 4096}, 32, 1), ({"BLOCK_SIZE": 2048}, 16, 1)]),
    ("rmsnorm", {"n_rows": 16384, "n_cols": 4096}, [({"BLOCK_SIZE": 512}, 8, 1), ({"BLOCK_SIZE": 512}, 4, 1)]),
    ("cross_entropy", {"n_rows": 2048, "n_cols": 151936},
     [({"BLOCK_SIZE": 8192}, 4, 1), ({"BLOCK_SIZE": 2048}, 2, 1), ({"BLOCK_SIZE": 4096}, 4, 1)]),
    ("layernorm", {"M": 4096, "N": 4096}, [({"BLOCK_SIZE": 1024}, 8, 1), ({"BLOCK_SIZE": 512}, 4, 1)]),
    ("layernorm", {"M": 8192, "N": 8192},
     [({"BLOCK_SIZE": 1024}, 8, 1), ({"BLOCK_SIZE": 2048}, 8, 1), ({"BLOCK_SIZE": 2048}, 16, 1)]),
    ("swiglu", {"n_rows": 8192, "n_cols": 11008}, [({"BLOCK_SIZE": 4096}, 16, 1), ({"BLOCK_SIZE": 1024}, 2, 1)]),
    ("matmul", {"M": 1536, "N": 6144, "K": 2048},
     [({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, 4, 3),
      ({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, 8, 7),
      ({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, 8, 3)]),
    ("matmul_bf16", {"M": 512, "N": 4096, "K": 14336},
     [({"BLOCK_M": 64, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, 8, 4),
      ({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, 8, 7),
      ({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, 4, 5)]),
]

# Nsight Compute metric names (ncu --query-metrics on sm_90): time, DRAM, L2 and L1 traffic, occupancy, stalls
METRICS = [
    "gpu__time_duration.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sector_hit_rate.pct",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_lg.sum", "l1tex__t_sector_hit_rate.pct",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "smsp__inst_executed.sum", "launch__registers_per_thread", "launch__occupancy_limit_registers",
    "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_drain_per_issue_active.ratio",
]


def labels() -> list[str]:
    return [f"{name} {','.join(f'{k}={v}' for k, v in shape.items())} | "
            f"{','.join(f'{k}={v}' for k, v in kw.items())} w{w} s{s}"
            for name, shape, cfgs in GROUPS for kw, w, s in cfgs]


def profile() -> None:
    import torch
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gpu_configs import _setup, cfg  # type: ignore[import-not-found]
    for name, shape, cfgs in GROUPS:
        launch, _, _, _, _ = _setup(name, shape)
        for kw, w, s in cfgs:
            c = cfg(kw, w, s)
            launch(c)
            launch(c)
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
            launch(c)
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
        del launch
        torch.cuda.empty_cache()


def report(path: str) -> None:
    """ncu --csv rows (ID, ..., Metric Name, Metric Unit, Metric Value) → one line per config, in GROUPS order."""
    rows = list(csv.reader(line for line in Path(path).read_text().splitlines() if line.startswith('"')))
    head, body = rows[0], rows[1:]
    idx = {h: i for i, h in enumerate(head)}
    by_id: dict[str, dict[str, str]] = {}
    for r in body:
        by_id.setdefault(r[idx["ID"]], {})[r[idx["Metric Name"]]] = r[idx["Metric Value"]]
    names = labels()
    short = {m: m.replace("smsp__average_warps_issue_stalled_", "stall_").replace("_per_issue_active.ratio", "")
             .replace(".sum", "").replace(".avg.pct_of_peak_sustained", "%").replace("pipe_lsu_mem_global_op_", "")
             .replace("_srcunit_tex_op_read", "_from_l1") for m in METRICS}
    for i, (kid, vals) in enumerate(sorted(by_id.items(), key=lambda kv: int(kv[0]))):
        print(f"== {names[i] if i < len(names) else kid}")
        print("   " + "  ".join(f"{short[m]}={vals.get(m, '?')}" for m in METRICS))


if __name__ == "__main__":
    if "-h" in sys.argv or "--help" in sys.argv:
        print(__doc__)
    elif "--metrics" in sys.argv:
        print(",".join(METRICS))
    elif "--report" in sys.argv:
        report(sys.argv[sys.argv.index("--report") + 1])
    else:
        profile()
