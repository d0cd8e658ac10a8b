"""Recommended vs author vs exhaustive-grid configs, timed on a GPU (issue 4).

  python benchmarks/gpu_configs.py plan            # here (kernlint, no GPU): writes benchmarks/gpu/plan.json
  python3 benchmarks/gpu_configs.py run OUTDIR     # on the GPU (triton + torch only): times every config
  python benchmarks/gpu_configs.py report RESULTS  # here: benchmarks/gpu/h200_configs.md from the results

Per kernel × shape: the configs timed are the grid (≤ 60, a coarse exhaustive grid around common
practice), kernlint's top-5 (in rank order, for the seeded-search count) and the author's config(s)
(the launch code's choice; for autotuned kernels every author config, the author's value being the
best of them, which is what their autotuner would pick). Every config is first checked against torch on
random inputs with a NaN-poisoned output; then timed with the median of triton.testing.do_bench
(CUDA-graph replay for kernels under ~10 µs, docs/design.md); finalists are re-timed in 3 alternating
rounds to cancel clock drift (heavy kernels lower the clocks: issue 4). Since run 10 the finalists are the
recommendation, the author's pick and every grid config within 5 % of the fastest first timing (≤ 6), 5
rounds, and the best is the fastest finalist median (before: 3 rounds of rec/author/fastest only, so a
config timed once could win on a lucky draw). Since run 20 the recommendation, the author's pick and that
best are re-timed in 5 more alternating rounds and those fresh medians are reported, with configs whose
cubins are byte-identical timed as one program (benchmarks/gpu/timing.py says why).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PLAN = ROOT / "benchmarks" / "gpu" / "plan.json"
sys.path.insert(0, str(ROOT / "benchmarks" / "gpu"))
ROUNDS = 5   # alternating re-timing rounds of the finalists (3 before run 10)
from timing import check_config, config_key, settle, time_config  # noqa: E402 - benchmarks/gpu/timing.py, on the path above

# kernel → (example file, kernel name, shapes). Shapes name the host variables the launch code uses; the
# fourth shape of each kernel was added after the model's constants were fitted, the fifth (several with
# column counts that are not multiples of 16: unvectorised accesses) before H200 run 10, the sixth before
# run 13 (split_of).
KERNELS: dict[str, tuple[str, str, list[dict[str, Any]]]] = {
    "matmul": ("examples/matmul.py", "matmul_kernel",
               [dict(M=4096, N=4096, K=4096), dict(M=16, N=4096, K=4096), dict(M=1024, N=1024, K=16384),
                dict(M=2048, N=11008, K=4096), dict(M=8192, N=2048, K=1024), dict(M=1536, N=6144, K=2048)]),
    # the same tutorial kernel on bf16 operands (8th kernel): a skinny M=64 decode-like shape and a large-K one
    "matmul_bf16": ("examples/matmul.py", "matmul_kernel",
                    [dict(M=4096, N=4096, K=4096), dict(M=64, N=8192, K=4096), dict(M=2048, N=2048, K=8192),
                     dict(M=512, N=4096, K=14336), dict(M=256, N=16384, K=2048),
                     dict(M=128, N=4096, K=11008)]),
    "attention": ("examples/attention_fwd.py", "attn_fwd_kernel",
                  [dict(Z=4, H=16, N_CTX=1024, HEAD_DIM=64, CAUSAL=False),
                   dict(Z=2, H=16, N_CTX=4096, HEAD_DIM=64, CAUSAL=False),
                   dict(Z=1, H=32, N_CTX=2048, HEAD_DIM=128, CAUSAL=False),
                   dict(Z=8, H=8, N_CTX=2048, HEAD_DIM=128, CAUSAL=False),
                   dict(Z=16, H=16, N_CTX=512, HEAD_DIM=64, CAUSAL=False),
                   dict(Z=4, H=8, N_CTX=3072, HEAD_DIM=64, CAUSAL=False)]),
    "softmax": ("examples/softmax.py", "softmax_kernel",
                [dict(n_rows=4096, n_cols=1024), dict(n_rows=4096, n_cols=4096), dict(n_rows=2048, n_cols=16384),
                 dict(n_rows=8192, n_cols=2048), dict(n_rows=16384, n_cols=3000),
                 dict(n_rows=32768, n_cols=512)]),
    "layernorm": ("examples/layernorm.py", "layernorm_fwd_kernel",
                  [dict(M=4096, N=1024), dict(M=4096, N=4096), dict(M=2048, N=16384), dict(M=8192, N=8192),
                   dict(M=4096, N=5000), dict(M=8192, N=3072)]),
    "rmsnorm": ("examples/rmsnorm.py", "rmsnorm_fwd_kernel",
                [dict(n_rows=4096, n_cols=1024), dict(n_rows=4096, n_cols=8192), dict(n_rows=1024, n_cols=32768),
                 dict(n_rows=16384, n_cols=4096), dict(n_rows=2048, n_cols=16384), dict(n_rows=8192, n_cols=5120)]),
    "cross_entropy": ("examples/cross_entropy.py", "cross_entropy_fwd_kernel",
                      [dict(n_rows=4096, n_cols=32000), dict(n_rows=1024, n_cols=128256), dict(n_rows=8192, n_cols=8192),
                       dict(n_rows=2048, n_cols=50257), dict(n_rows=2048, n_cols=151936),
                       dict(n_rows=8192, n_cols=32768)]),
    "swiglu": ("examples/swiglu.py", "swiglu_fwd_kernel",
               [dict(n_rows=4096, n_cols=4096), dict(n_rows=4096, n_cols=14336), dict(n_rows=1024, n_cols=8192),
                dict(n_rows=8192, n_cols=11008), dict(n_rows=4096, n_cols=11000), dict(n_rows=2048, n_cols=28672)]),
}


def split_of(index: int) -> str:
    """Which shapes the time model's constants were tuned on: `fit` (index 0 and 2), `held` (index 1, only
    reported by benchmarks/gpu/fit_model.py), `new` (index 3, added in H200 run 6 after the last fit) and
    `fresh` (index 4, chosen before run 10 and never looked at while changing the model) and `unseen`
    (index 5, chosen before run 13, after the ptxas-unroll term was written from the saved timings)."""
    return "held" if index == 1 else "new" if index == 3 else "fresh" if index == 4 else \
        "unseen" if index >= 5 else "fit"


def next_pow2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def cfg(kw: dict[str, Any], w: int, s: int) -> dict[str, Any]:
    return {"kwargs": kw, "num_warps": w, "num_stages": s}


def author_configs(name: str, shape: dict[str, Any]) -> list[dict[str, Any]]:
    """What the example's own launch code (or autotune list) uses."""
    if name in ("matmul", "matmul_bf16"):
        return [cfg({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, w, s) for m, n, k, w, s in
                [(128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 64, 8, 4), (128, 128, 32, 4, 4),
                 (128, 64, 64, 4, 4), (64, 128, 32, 4, 4), (64, 64, 32, 4, 5)]]  # the 256×256 one cannot fit
    if name == "attention":
        return [cfg({"BLOCK_M": m, "BLOCK_N": n}, w, s) for m, n, w, s in
                [(128, 64, 8, 2), (128, 64, 4, 2), (128, 32, 4, 3), (64, 64, 4, 3), (64, 32, 4, 4)]]
    if name == "swiglu":
        return [cfg({"BLOCK_SIZE": b}, w, s) for b, w, s in [(1024, 4, 1), (2048, 4, 1), (2048, 8, 2), (4096, 8, 1)]]
    if name == "softmax":
        b = next_pow2(shape["n_cols"])
        return [cfg({"BLOCK_SIZE": b}, 16 if b >= 16384 else 8 if b >= 2048 else 4, 3)]
    if name == "layernorm":
        b = min(65536 // 2, next_pow2(shape["N"]))
        return [cfg({"BLOCK_SIZE": b}, min(max(b // 256, 1), 8), 3)]
    if name == "rmsnorm":
        return [cfg({"BLOCK_SIZE": min(4096, next_pow2(shape["n_cols"]))}, 8, 3)]
    if name == "cross_entropy":
        return [cfg({"BLOCK_SIZE": min(8192, next_pow2(shape["n_cols"]))}, 8, 3)]
    raise KeyError(name)


def grid_configs(name: str, shape: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if name in ("matmul", "matmul_bf16"):
        for m in (64, 128):
            for n in (64, 128, 256):
                for k in (32, 64):
                    for w, s in ((4, 3), (4, 4), (4, 5), (8, 3), (8, 4)):
                        out.append(cfg({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, w, s))
    elif name == "attention":
        for m, n in ((64, 32), (64, 64), (128, 32), (128, 64), (128, 128)):
            for w in (4, 8):
                for s in (2, 3, 4):
                    out.append(cfg({"BLOCK_M": m, "BLOCK_N": n}, w, s))
    elif name == "softmax":
        for w in (1, 2, 4, 8, 16, 32):
            out.append(cfg({"BLOCK_SIZE": next_pow2(shape["n_cols"])}, w, 1))
    else:
        cols = shape.get("n_cols", shape.get("N"))
        for b in (512, 1024, 2048, 4096, 8192, 16384):
            if b > next_pow2(cols):
                continue
            for w in (1, 2, 4, 8, 16, 32):
                if b // (32 * w) >= 1 and b // (32 * w) <= 64:   # 1–64 elements per thread
                    out.append(cfg({"BLOCK_SIZE": b}, w, 1))
    return out


# ------------------------------------------------------------------ plan (here, with kernlint) -------------

def plan() -> None:
    from launch_facts import analysed_kernels  # type: ignore[import-not-found]

    from kernlint.hardware.specs import SPECS
    from kernlint.recommend.core import recommend

    spec = SPECS["h200"]
    by_name = analysed_kernels()  # benchmarks/gpu/launch_facts.py
    out: dict[str, Any] = {"target": "h200", "pairs": []}
    for name, (_, kname, shapes) in KERNELS.items():
        for shape in shapes:
            bucket = dict(shape)
            if name == "softmax":   # the whole row in one block: the launch code's value, not searchable
                bucket["BLOCK_SIZE"] = next_pow2(shape["n_cols"])
            rec = recommend(by_name[name], spec, bucket, top_k=5)
            top = [dict(c.config(), model_us=round(c.score.time_us, 2), why=c.score.rationale()) for c in rec.ranked]
            for t in top:   # only the constexprs the launch passes (HEAD_DIM/CAUSAL come from the shape)
                t["kwargs"] = {k: v for k, v in t["kwargs"].items() if k not in shape}
            out["pairs"].append(dict(kernel=name, shape=shape, recommended=top, reason=rec.reason,
                                     author=author_configs(name, shape), grid=grid_configs(name, shape)))
            print(name, shape, top[0]["kwargs"] if top else rec.reason, top[0]["num_warps"] if top else "")
    PLAN.parent.mkdir(parents=True, exist_ok=True)
    PLAN.write_text(json.dumps(out, indent=1) + "\n")


# ------------------------------------------------------------------ run (on the GPU) -----------------------

def _setup(name: str, shape: dict[str, Any]):  # noqa: C901 - one branch per kernel
    import torch
    import triton

    sys.path.insert(0, str(ROOT))
    dev = "cuda"
    torch.manual_seed(0)
    if name in ("matmul", "matmul_bf16"):
        from examples.matmul import matmul_kernel
        M, N, K = shape["M"], shape["N"], shape["K"]
        dt = torch.bfloat16 if name == "matmul_bf16" else torch.float16
        a = torch.randn(M, K, device=dev, dtype=dt)
        b = torch.randn(K, N, device=dev, dtype=dt)
        c = torch.empty(M, N, device=dev, dtype=dt)
        ref = (a.float() @ b.float())

        def launch(cf):
            grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]),)
            return matmul_kernel.fn[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                   c.stride(0), c.stride(1), **cf["kwargs"], num_warps=cf["num_warps"],
                                   num_stages=cf["num_stages"])
        return launch, [c], lambda: [ref], 2.0 * M * N * K, (M * K + K * N + M * N) * 2
    if name == "attention":
        from examples.attention_fwd import attn_fwd_kernel
        Z, H, S, D, causal = shape["Z"], shape["H"], shape["N_CTX"], shape["HEAD_DIM"], shape["CAUSAL"]
        q, k, v = (torch.randn(Z, H, S, D, device=dev, dtype=torch.float16) for _ in range(3))
        o = torch.empty_like(q)
        lse = torch.empty((Z, H, S), device=dev, dtype=torch.float32)
        scale = D ** -0.5
        ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)

        def launch(cf):
            grid = lambda META: (triton.cdiv(S, META["BLOCK_M"]), Z * H, 1)
            return attn_fwd_kernel.fn[grid](q, k, v, scale, lse, o, *q.stride(), *k.stride(), *v.stride(), *o.stride(),
                                     H, S, HEAD_DIM=D, CAUSAL=causal, **cf["kwargs"], num_warps=cf["num_warps"],
                                     num_stages=cf["num_stages"])
        return launch, [o], lambda: [ref], 4.0 * Z * H * S * S * D, 4 * Z * H * S * D * 2
    rows = shape.get("n_rows", shape.get("M"))
    cols = shape.get("n_cols", shape.get("N"))
    if name == "softmax":
        from examples.softmax import softmax_kernel
        x = torch.randn(rows, cols, device=dev, dtype=torch.float16)
        y = torch.empty_like(x)

        def launch(cf):
            return softmax_kernel[(rows,)](y, x, x.stride(0), cols, **cf["kwargs"], num_warps=cf["num_warps"],
                                    num_stages=cf["num_stages"])
        return launch, [y], lambda: [torch.softmax(x.float(), -1)], 0, 2 * rows * cols * 2
    if name == "layernorm":
        from examples.layernorm import layernorm_fwd_kernel
        x = torch.randn(rows, cols, device=dev, dtype=torch.float16)
        w, bb = torch.randn(cols, device=dev), torch.randn(cols, device=dev)
        y = torch.empty_like(x)
        mean = torch.empty(rows, device=dev)
        rstd = torch.empty(rows, device=dev)

        def launch(cf):
            return layernorm_fwd_kernel[(rows,)](x, y, w, bb, mean, rstd, x.stride(0), cols, 1e-5, **cf["kwargs"],
                                          num_warps=cf["num_warps"], num_stages=cf["num_stages"])
        return (launch, [y], lambda: [torch.nn.functional.layer_norm(x.float(), (cols,), w, bb, 1e-5)], 0,
                2 * rows * cols * 2)
    if name == "rmsnorm":
        from examples.rmsnorm import rmsnorm_fwd_kernel
        x = torch.randn(rows, cols, device=dev, dtype=torch.float16)
        w = torch.randn(cols, device=dev, dtype=torch.float16)
        y = torch.empty_like(x)
        rstd = torch.empty(rows, device=dev)

        def launch(cf):
            return rmsnorm_fwd_kernel[(rows,)](x, w, y, rstd, x.stride(0), cols, 1e-6, **cf["kwargs"],
                                        num_warps=cf["num_warps"], num_stages=cf["num_stages"])

        def ref():
            xf = x.float()
            return [xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()]
        return launch, [y], ref, 0, 2 * rows * cols * 2
    if name == "cross_entropy":
        from examples.cross_entropy import cross_entropy_fwd_kernel
        logits = torch.randn(rows, cols, device=dev, dtype=torch.bfloat16)
        labels = torch.randint(0, cols, (rows,), device=dev)
        loss = torch.empty(rows, device=dev)
        lse = torch.empty(rows, device=dev)

        def launch(cf):
            return cross_entropy_fwd_kernel[(rows,)](logits, labels, loss, lse, logits.stride(0), cols, **cf["kwargs"],
                                              num_warps=cf["num_warps"], num_stages=cf["num_stages"])
        ref = lambda: [torch.nn.functional.cross_entropy(logits.float(), labels, reduction="none")]
        return launch, [loss], ref, 0, rows * cols * 2
    if name == "swiglu":
        from examples.swiglu import swiglu_fwd_kernel
        a = torch.randn(rows, cols, device=dev, dtype=torch.float16)
        b = torch.randn(rows, cols, device=dev, dtype=torch.float16)
        c = torch.empty_like(a)

        def launch(cf):
            return swiglu_fwd_kernel.fn[(rows,)](a, b, c, a.stride(0), cols, **cf["kwargs"], num_warps=cf["num_warps"],
                                          num_stages=cf["num_stages"])
        return launch, [c], lambda: [torch.nn.functional.silu(a.float()) * b.float()], 0, 3 * rows * cols * 2
    raise KeyError(name)


def _warm_worker(args: tuple[str, dict[str, Any], list[dict[str, Any]]]) -> int:
    name, shape, cfgs = args
    launch, outs, ref, _, _ = _setup(name, shape)
    n = 0
    for cf in cfgs:
        if check_config(launch, outs, ref, cf) is None:
            n += 1
    return n


def run(outdir: str) -> None:
    import multiprocessing as mp

    import torch
    import triton
    plan_ = json.loads(PLAN.read_text())
    only = os.environ.get("KL_ONLY")
    pairs = [p for p in plan_["pairs"] if not only or p["kernel"] in only.split(",")]
    # compile everything in parallel first: workers fill Triton's on-disk cache, the timing process hits it
    jobs = []
    for p in pairs:
        cfgs = list({config_key(c): c for c in p["grid"] + p["recommended"] + p["author"]}.values())
        for i in range(0, len(cfgs), 8):
            jobs.append((p["kernel"], p["shape"], cfgs[i:i + 8]))
    ctx = mp.get_context("spawn")
    with ctx.Pool(min(14, os.cpu_count() or 4)) as pool:
        pool.map(_warm_worker, jobs, chunksize=1)
    print(f"[warm] {len(jobs)} jobs; torch {torch.__version__} triton {triton.__version__}", flush=True)
    results = []
    for p in pairs:
        launch, outs, ref, flops, nbytes = _setup(p["kernel"], p["shape"])
        cfgs = {config_key(c): c for c in p["grid"] + p["recommended"] + p["author"]}
        times: dict[str, float] = {}
        errors: dict[str, str] = {}
        digests: dict[str, str | None] = {}
        for k, c in cfgs.items():
            err = check_config(launch, outs, ref, c, digests)
            if err:
                errors[k] = err
                continue
            times[k] = time_config(launch, c)
        rec_keys = [config_key(c) for c in p["recommended"]]
        auth_keys = [config_key(c) for c in p["author"]]
        rec = rec_keys[0] if rec_keys else None
        auth = min((k for k in auth_keys if k in times), key=lambda k: times[k], default=None)
        best = min(times, key=lambda k: times[k])
        # finalists: the recommendation, the author's pick and every config whose first timing is within 5 %
        # of the fastest (up to 6): the fastest of ~60 single noisy timings is biased low (a lucky draw), so
        # the best is taken only among configs re-timed the same way, median of 5 alternating rounds
        near = sorted((k for k in times if times[k] <= 1.05 * times[best]), key=lambda k: times[k])[:6]
        finalists = [k for k in dict.fromkeys([rec, auth, *near]) if k in times]
        rounds: dict[str, list[float]] = {k: [] for k in finalists}
        for _ in range(ROUNDS):   # alternating rounds: each finalist once per round
            for k in finalists:
                rounds[k].append(time_config(launch, cfgs[k]))
        for k, v in rounds.items():
            times[k] = sorted(v)[len(v) // 2]
        best = min(finalists, key=lambda k: times[k])
        # since run 20: the winner re-timed on fresh samples, identical cubins one program (gpu/timing.py)
        selection = {k: round(times[k], 2) for k in dict.fromkeys([rec, auth, best]) if k in times}
        final = settle(rec if rec in times else None, auth, best, digests, lambda k: time_config(launch, cfgs[k]))
        times.update(final["us"])
        best = final["best"]
        seeded = next((i + 1 for i, k in enumerate(rec_keys) if k in times and times[k] <= 1.05 * times[best]), None)
        # configs re-timed in the rounds (the others keep their single timing)
        row = dict(kernel=p["kernel"], shape=p["shape"], best=json.loads(best), best_us=times[best],
                   rec=json.loads(rec) if rec else None, rec_us=times.get(rec) if rec else None,
                   rec_error=errors.get(rec) if rec else p.get("reason"),
                   author=json.loads(auth) if auth else None, author_us=times.get(auth) if auth else None,
                   seeded_within_5pct=seeded, n_timed=len(times), n_failed=len(errors),
                   tflops=(flops / times[best] / 1e6) if flops else None,
                   tbps=nbytes / times[best] / 1e6, errors=sorted(set(errors.values()))[:4],
                   all_us={k: round(v, 2) for k, v in times.items()}, failed=errors, finalists=finalists,
                   selection_us=selection, same_program=final["merged"],
                   cubin={k: digests.get(k) for k in finalists})
        results.append(row)
        _write(outdir, results)   # after every pair: a run cut short by the time limit still reports
        rr = row["rec_us"] / row["best_us"] if row["rec_us"] else float("nan")
        ar = row["author_us"] / row["best_us"] if row["author_us"] else float("nan")
        print(f"{p['kernel']:<14} {json.dumps(p['shape']):<60} best {row['best_us']:8.1f} µs  rec/best "
              f"{1 / rr if rr == rr else float('nan'):.3f}  author/best {1 / ar if ar == ar else float('nan'):.3f}  "
              f"seed {seeded}  ({len(times)} timed, {len(errors)} failed)", flush=True)
    _write(outdir, results)


def _write(outdir: str, results: list[dict[str, Any]]) -> None:
    import torch
    import triton
    Path(outdir).mkdir(parents=True, exist_ok=True)
    info = dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__, triton=triton.__version__)
    (Path(outdir) / "gpu_configs_results.json").write_text(json.dumps(dict(info=info, rows=results), indent=1))


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "plan"
    if cmd in ("-h", "--help"):
        print(__doc__)
    elif cmd not in ("plan", "run", "report") or (cmd == "report" and len(sys.argv) < 3):
        print(f"usage: gpu_configs.py plan | run OUTDIR | report RESULTS.json (got {' '.join(sys.argv[1:])!r})",
              file=sys.stderr)
        sys.exit(2)
    elif cmd == "plan":
        plan()
    elif cmd == "run":
        run(sys.argv[2] if len(sys.argv) > 2 else os.environ.get("OUT", "."))
    elif cmd == "report":
        from gpu_report import report  # benchmarks/gpu_report.py
        report(sys.argv[2])
