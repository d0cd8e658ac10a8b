"""The row-kernel terms of the time model: L1 wavefronts of unvectorised accesses, L2 re-read footprint."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernlint.pipeline.api import Settings, lint_paths
from kernlint.recommend.core import bucket_env
from kernlint.recommend.model import access_wavefronts, kernel_work
from kernlint.frontend.host_facts import read_kernel_source

ROOT = Path(__file__).resolve().parents[2]


def _work(path: str, name: str, shape: dict[str, int], block: int, warps: int):  # type: ignore[no-untyped-def]
    res = lint_paths([str(ROOT / path)], Settings(targets=("h200",)))
    k = next(k for f in res.files for k in f.kernels if k.jit.name == name)
    src = read_kernel_source(k.jit.path, name)
    env = {**bucket_env(k, src, shape), "BLOCK_SIZE": block}
    return src, kernel_work(k.ir, src, env, 1, warps)


def test_unvectorised_access_costs_more_wavefronts_and_more_warps_shrink_it() -> None:
    n = 1024.0
    assert access_wavefronts(n, 2, 1, vectorised=False) > access_wavefronts(n, 2, 1, vectorised=True)
    # same tile, more warps → fewer elements per thread → each scalar instruction spans fewer lines
    assert access_wavefronts(n, 2, 16, vectorised=False) < access_wavefronts(n, 2, 1, vectorised=False)
    # vectorised: the work is the bytes moved, independent of how the tile is split
    assert access_wavefronts(n, 2, 16, vectorised=True) == access_wavefronts(n, 2, 1, vectorised=True)


def test_do_not_specialize_bound_makes_masked_loads_scalar() -> None:
    src, w = _work("examples/rmsnorm.py", "rmsnorm_fwd_kernel", {"n_rows": 4096, "n_cols": 8192}, 1024, 4)
    assert "n_cols" in src.unspecialized
    assert w.scalar_accesses > 0
    _, ln = _work("examples/layernorm.py", "layernorm_fwd_kernel", {"M": 4096, "N": 8192}, 1024, 4)
    assert ln.scalar_accesses == 0                      # N is specialised (divisible by 16): vectorised
    _, odd = _work("examples/layernorm.py", "layernorm_fwd_kernel", {"M": 4096, "N": 8191}, 1024, 4)
    assert odd.scalar_accesses > 0                      # 8191 gets no divisibility-16 hint


def test_multi_pass_rows_count_re_reads() -> None:
    _, ln = _work("examples/layernorm.py", "layernorm_fwd_kernel", {"M": 2048, "N": 16384}, 2048, 16)
    assert ln.reread_bytes > 0 and ln.reread_footprint > 0
    # X is swept three times: the re-reads are twice one sweep
    assert ln.reread_bytes == 2 * ln.reread_footprint
    _, ce = _work("examples/cross_entropy.py", "cross_entropy_fwd_kernel", {"n_rows": 1024, "n_cols": 32000},
                  4096, 4)
    assert ce.reread_bytes == 0                          # one pass (online logsumexp)


def test_loop_bound_locals_resolve_through_their_definitions_not_a_default_shape() -> None:
    # attention's inner loop runs `range(0, hi, BLOCK_N)` with `hi = N_CTX` (non-causal) in a jit helper:
    # N_CTX = 2048 and BLOCK_N = 64 give 2048 / 64 = 32 trips, not the default shape's 4096 / 64
    from kernlint.frontend.host_facts import trip_count
    res = lint_paths([str(ROOT / "examples/attention_fwd.py")], Settings(targets=("h200",)))
    k = next(k for f in res.files for k in f.kernels if k.jit.name == "attn_fwd_kernel")
    src = read_kernel_source(k.jit.path, k.jit.name)
    env = {**bucket_env(k, src, dict(Z=1, H=32, N_CTX=2048, HEAD_DIM=128, CAUSAL=False)), "BLOCK_M": 128, "BLOCK_N": 64}
    assert "hi" not in env
    trips = {line: trip_count(src, line, env) for line in src.loops}
    assert 32 in trips.values()


def test_small_row_loops_count_ptxas_unroll_by_four() -> None:
    """layernorm N=4096 (fp16 rows): three loops of N / BLOCK trips. Passes 1-2 only load and accumulate;
    ptxas unrolls them ×4 when one iteration loads ≤ 16 B per thread (SASS facts in loop_unroll.ptxas_unroll and
    test_ptxas_unrolls_layernorm_pass_one_by_four below); pass 3 stores, so its iterations stay serial."""
    shape = {"M": 4096, "N": 4096}
    # BLOCK 1024, 8 warps: 1024 fp16 / 256 threads = 4 elements = 8 B per thread → unrolled (4 trips → 1 round
    # trip per pass); round trips = 1 + 1 + 4 (pass 3) = 6; pass 1 keeps 4 × 1024 × 2 B = 8192 B in flight
    _, w8 = _work("examples/layernorm.py", "layernorm_fwd_kernel", shape, 1024, 8)
    assert w8.serial == 1 + 1 + 4
    assert w8.segments[0] == (4 * 1024 * 2, 4 * 1024 * 2)
    # 2 warps: 16 elements = 32 B per thread → not unrolled: 4 + 4 + 4 round trips, one iteration in flight
    _, w2 = _work("examples/layernorm.py", "layernorm_fwd_kernel", shape, 1024, 2)
    assert w2.serial == 4 + 4 + 4
    assert w2.segments[0] == (4 * 1024 * 2, 1024 * 2)
    # BLOCK 2048, 8 warps: 8 elements = 16 B per thread → unrolled, but only 2 trips exist: 1 + 1 + 2
    _, b2048 = _work("examples/layernorm.py", "layernorm_fwd_kernel", shape, 2048, 8)
    assert b2048.serial == 1 + 1 + 2
    # a loop that reduces across the tile every iteration (cross-entropy's online logsumexp) is not counted
    _, ce = _work("examples/cross_entropy.py", "cross_entropy_fwd_kernel", {"n_rows": 4096, "n_cols": 32768},
                  1024, 8)
    assert ce.serial >= 32768 / 1024


def test_unvectorised_loads_count_a_register_per_element_for_the_unroll() -> None:
    """rmsnorm's n_cols is do_not_specialize, so its masked fp16 loads are scalar (LDG.U16): each element fills
    a 32-bit register. SASS (Triton 3.6 and 3.9, sm_90, nvdisasm; live check below): at 32 warps pass 1 is
    unrolled ×4 at BLOCK 4096 (4 elements = 16 B of registers per thread) and not at BLOCK 8192 (8 elements:
    32 B of registers, though only 16 B of data)."""
    shape = {"n_rows": 1024, "n_cols": 32768}
    # BLOCK 4096: unrolled ×4, but 4 iterations × 4 scalar loads = 16 load instructions, more than the 9 ptxas
    # issues before their first use (loop_unroll.HOISTED_LOADS): two round trips of 2 iterations each
    _, b4096 = _work("examples/rmsnorm.py", "rmsnorm_fwd_kernel", shape, 4096, 32)
    assert b4096.segments[0][:2] == (8 * 4096 * 2, 2 * 4096 * 2)     # 8 trips; 2 iterations' loads in flight
    assert b4096.serial == 8 / 2 + 8                                 # pass 1: 4 round trips; pass 2 stores: 8
    # BLOCK 2048: 2 scalar loads per iteration, 4 × 2 = 8 instructions all go before the first use
    _, b2048 = _work("examples/rmsnorm.py", "rmsnorm_fwd_kernel", shape, 2048, 32)
    assert b2048.segments[0][:2] == (16 * 2048 * 2, 4 * 2048 * 2)    # 16 trips; 4 iterations in flight
    _, b8192 = _work("examples/rmsnorm.py", "rmsnorm_fwd_kernel", shape, 8192, 32)
    assert b8192.segments[0][:2] == (4 * 8192 * 2, 8192 * 2)         # 4 trips; one iteration in flight


def _pass_one_sass(text: str, kernel: str, sig: dict[str, str], attrs: dict, block: int, warps: int) -> str:
    """Triton's sm_90 SASS up to the first barrier: pass 1's loop and its unrolled tails."""
    import importlib.util
    import os
    import subprocess
    import tempfile

    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")   # 3.9's default, stated (silences its warning)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/nvdisasm")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{kernel}_scratch.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(f"{kernel}_scratch", path)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        k = triton.compile(ASTSource(getattr(mod, kernel), sig, {"BLOCK_SIZE": block}, attrs),
                           target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": 1})
        cubin = Path(tmp) / "k.cubin"
        cubin.write_bytes(k.asm["cubin"])
        sass = subprocess.run([nvdisasm, "-c", str(cubin)], capture_output=True, text=True, check=True).stdout
    return sass.split("BAR.SYNC")[0]


def _loads_before_first_use(sass: str) -> int:
    """Loads of the first loop body (after its backward-branch target) issued before the first HADD2.F32,
    the instruction that converts a loaded fp16 value: how many loads one round trip carries."""
    body = sass.split("HADD2.F32")[0]
    return len(re.findall(r"\bLDG\.", body))


def _scalar_rmsnorm_pass_one(block: int) -> str:
    """sm_90 SASS of examples/rmsnorm.py's pass 1 at 32 warps with n_cols given no divisibility hint, as
    do_not_specialize does (skips without the kernlint[triton] extra or Triton's bundled nvdisasm)."""
    import os

    import pytest
    triton = pytest.importorskip("triton", reason="the SASS check needs the kernlint[triton] extra")
    if not os.path.exists(os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/nvdisasm")):
        pytest.skip("Triton's bundled nvdisasm is missing")
    text = (ROOT / "examples/rmsnorm.py").read_text().replace("import torch\n", "").split("\ndef rms_norm(")[0]
    sig = {"x_ptr": "*fp16", "w_ptr": "*fp16", "y_ptr": "*fp16", "rstd_ptr": "*fp32", "row_stride": "i32",
           "n_cols": "i32", "eps": "fp32", "BLOCK_SIZE": "constexpr"}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(5)}    # pointers and row_stride; not n_cols
    return _pass_one_sass(text, "rmsnorm_fwd_kernel", sig, attrs, block, 32)


def test_ptxas_unrolls_scalar_rmsnorm_loads_by_register_count() -> None:
    """Live check of the fact above when Triton is installed: 4 + 2 + 1 unrolled copies of 4 scalar loads at
    BLOCK 4096, one copy of 8 at BLOCK 8192."""
    assert len(re.findall(r"\bLDG\.", _scalar_rmsnorm_pass_one(4096))) == 4 * (4 + 2 + 1)
    assert len(re.findall(r"\bLDG\.", _scalar_rmsnorm_pass_one(8192))) == 8


def test_ptxas_hoists_at_most_nine_or_ten_loads_ahead_of_their_use() -> None:
    """Live check of loop_unroll.HOISTED_LOADS: the ×4-unrolled pass 1 of rmsnorm at 4 scalar loads per iteration
    (BLOCK 4096, 32 warps: 16 loads) issues 9-10 of them before the first conversion of a loaded value, so
    its 4 iterations take two round trips; at 2 per iteration (BLOCK 2048: 8 loads) all go first."""
    assert 9 <= _loads_before_first_use(_scalar_rmsnorm_pass_one(4096)) <= 10 < 16
    assert _loads_before_first_use(_scalar_rmsnorm_pass_one(2048)) == 8


def test_ptxas_unrolls_layernorm_pass_one_by_four() -> None:
    """The ptxas fact behind loop_unroll.ptxas_unroll, checked live when Triton is installed: compile
    examples/layernorm.py for sm_90 and count the global loads of pass 1 in the SASS (before the first
    barrier of the tl.sum). Unrolled ×4 with a 2- and a 1-iteration tail: 4 + 2 + 1 = 7 loads at 4 fp16 per
    thread; not unrolled at 16 per thread (two 16-B loads)."""
    import importlib.util
    import os
    import re
    import subprocess
    import tempfile

    import pytest
    triton = pytest.importorskip("triton", reason="the SASS check needs the kernlint[triton] extra")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/nvdisasm")
    if not os.path.exists(nvdisasm):
        pytest.skip("Triton's bundled nvdisasm is missing")
    text = (ROOT / "examples/layernorm.py").read_text().replace("import torch\n", "")
    text = text.split("\ndef layer_norm(")[0]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "layernorm_scratch.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location("layernorm_scratch", path)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sig = {"X": "*fp16", "Y": "*fp16", "W": "*fp32", "B": "*fp32", "Mean": "*fp32", "Rstd": "*fp32",
               "row_stride": "i32", "N": "i32", "eps": "fp32", "BLOCK_SIZE": "constexpr"}
        attrs = {(i,): [["tt.divisibility", 16]] for i in range(8)}

        def pass_one_loads(warps: int) -> int:
            k = triton.compile(ASTSource(mod.layernorm_fwd_kernel, sig, {"BLOCK_SIZE": 1024}, attrs),
                               target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": 1})
            cubin = Path(tmp) / f"k{warps}.cubin"
            cubin.write_bytes(k.asm["cubin"])
            sass = subprocess.run([nvdisasm, "-c", str(cubin)], capture_output=True, text=True, check=True).stdout
            head = sass.split("BAR.SYNC")[0]
            return len(re.findall(r"\bLDG\.", head))

        assert pass_one_loads(8) == 4 + 2 + 1
        assert pass_one_loads(2) == 2


def test_masked_tail_of_a_row_loop_moves_no_memory() -> None:
    """swiglu (examples/swiglu.py) sweeps `range(0, n_cols, BLOCK_SIZE)` with loads and a store masked by
    `cols < n_cols`. 11008 columns at BLOCK 4096 take 3 iterations, but the masked-off part of the third
    reads nothing: a row moves 11008 × 2 B per fp16 tensor, not 3 × 4096 × 2 B."""
    shape = {"n_rows": 8192, "n_cols": 11008}
    _, w = _work("examples/swiglu.py", "swiglu_fwd_kernel", shape, 4096, 16)
    row = 11008 * 2
    assert w.bytes == 3 * row                       # a and b loaded, c stored
    assert w.serial == 3                            # but the CTA still runs 3 iterations
    _, whole = _work("examples/swiglu.py", "swiglu_fwd_kernel", {"n_rows": 8192, "n_cols": 12288}, 4096, 16)
    assert whole.bytes == 3 * 12288 * 2             # no tail: every iteration is full


def test_scalar_loads_in_a_row_loop_lengthen_its_round_trips() -> None:
    """rmsnorm (n_cols do_not_specialize: every access unvectorised) at 1024×32768 and 32 warps.
    Hand count of the L1 wavefronts the scalar accesses add over vectorised ones (model.access_wavefronts):
      BLOCK 4096: 4 fp16 per thread, a warp instruction spans 32 × 8 B = 2 lines; scalar: 4 instructions × 2
        lines × 32 warps = 256 wavefronts per access and iteration, vectorised 1 × 2 × 32 = 64: 192 extra.
      BLOCK 2048: 2 per thread, 1 line; scalar 2 × 1 × 32 = 64, vectorised 32: 32 extra.
    Four accesses sweep the row (pass 1 loads x; pass 2 loads x and w and stores y): 4 × 8 iterations × 192 =
    6144 against 4 × 16 × 32 = 2048. Nsight Compute measured the 2× L1 sectors behind this and the 2048 block
    20 % faster (benchmarks/gpu/ncu/h200_counters_run1.csv); the latency term now carries the difference."""
    from kernlint.hardware.specs import SPECS
    from kernlint.recommend.core import _evaluate, learn_space
    shape = {"n_rows": 1024, "n_cols": 32768}
    _, w4096 = _work("examples/rmsnorm.py", "rmsnorm_fwd_kernel", shape, 4096, 32)
    _, w2048 = _work("examples/rmsnorm.py", "rmsnorm_fwd_kernel", shape, 2048, 32)
    assert (w4096.scalar_excess, w2048.scalar_excess) == (4 * 8 * 192, 4 * 16 * 32)
    res = lint_paths([str(ROOT / "examples/rmsnorm.py")], Settings(targets=("h200",)))
    k = next(k for f in res.files for k in f.kernels if k.jit.name == "rmsnorm_fwd_kernel")
    src = read_kernel_source(k.jit.path, k.jit.name)
    env, space = bucket_env(k, src, shape), learn_space(k, src, shape)
    t = {b: _evaluate(k, src, SPECS["h200"], {**space.fixed, "BLOCK_SIZE": b}, 32, 1, env).score.time_us
         for b in (2048, 4096)}
    assert t[2048] < t[4096]     # before this term the model ranked 4096 first (H200 run 24: 0.885 of best)
    _, vec = _work("examples/layernorm.py", "layernorm_fwd_kernel", {"M": 4096, "N": 8192}, 1024, 8)
    assert vec.scalar_excess == 0                       # vectorised rows pay nothing extra


def test_block_wide_reductions_of_a_loop_free_kernel_cost_a_barrier_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    """softmax (examples/softmax.py) is loop-free with two reductions across the CTA (the row max and the row
    sum); rmsnorm reduces between its row loops and is left alone. By hand, at 8 warps the two barrier chains
    add 2 × log2(8) × BLOCK_REDUCTION_US to one CTA's latency, at 4 warps 2 × 2 × BLOCK_REDUCTION_US."""
    from kernlint.hardware.specs import SPECS
    from kernlint.recommend import model
    from kernlint.recommend.core import _evaluate, learn_space
    shape = {"n_rows": 4096, "n_cols": 4096}
    _, soft = _work("examples/softmax.py", "softmax_kernel", shape, 4096, 8)
    _, rms = _work("examples/rmsnorm.py", "rmsnorm_fwd_kernel", shape, 1024, 8)
    assert (soft.block_reductions, rms.block_reductions) == (2, 0)
    res = lint_paths([str(ROOT / "examples/softmax.py")], Settings(targets=("h200",)))
    k = next(k for f in res.files for k in f.kernels if k.jit.name == "softmax_kernel")
    src = read_kernel_source(k.jit.path, k.jit.name)
    env, space = bucket_env(k, src, shape), learn_space(k, src, shape)

    def latency(warps: int) -> float:
        c = _evaluate(k, src, SPECS["h200"], {**space.fixed, "BLOCK_SIZE": 4096}, warps, 1, env)
        assert c is not None
        return c.score.terms["latency"]

    with_term = {w: latency(w) for w in (4, 8)}
    saved = model.BLOCK_REDUCTION_US
    monkeypatch.setattr(model, "BLOCK_REDUCTION_US", 0.0)
    without = {w: latency(w) for w in (4, 8)}
    assert abs(with_term[8] - without[8] - 2 * 3 * saved) < 1e-9
    assert abs(with_term[4] - without[4] - 2 * 2 * saved) < 1e-9


def test_a_cta_above_the_second_largest_carve_out_is_charged_the_measured_slowdown(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """examples/matmul.py at 128×128×64 fp16: each stage holds (128 + 128) × 64 × 2 B = 32 KiB, so 6 stages are
    192 KiB (under the 196 KB step of compute capability 9.0) and 7 stages 224 KiB (over it). By hand: the
    7-stage score is (1 + FULL_CARVEOUT_PENALTY) × the score without the term; the 6-stage one is unchanged."""
    from kernlint.hardware.specs import SPECS
    from kernlint.recommend import model
    from kernlint.recommend.core import _evaluate, learn_space
    shape = {"M": 1536, "N": 6144, "K": 2048}
    res = lint_paths([str(ROOT / "examples/matmul.py")], Settings(targets=("h200",)))
    k = next(k for f in res.files for k in f.kernels if k.jit.name == "matmul_kernel")
    src = read_kernel_source(k.jit.path, k.jit.name)
    env, space = bucket_env(k, src, shape), learn_space(k, src, shape)
    tile = {**space.fixed, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}

    def scored(stages: int) -> tuple[float, int]:
        c = _evaluate(k, src, SPECS["h200"], tile, 8, stages, env)
        assert c is not None and c.estimate.smem is not None
        return c.score.time_us - model.LAUNCH_US, c.estimate.smem.total

    with_term = {s: scored(s) for s in (6, 7)}
    saved = model.FULL_CARVEOUT_PENALTY
    monkeypatch.setattr(model, "FULL_CARVEOUT_PENALTY", 0.0)
    without = {s: scored(s) for s in (6, 7)}
    assert with_term[6][1] == 6 * 32768 and with_term[7][1] == 7 * 32768
    assert abs(with_term[6][0] - without[6][0]) < 1e-9
    assert abs(with_term[7][0] - without[7][0] * (1 + saved)) < 1e-6


def test_a_loop_that_moves_no_bytes_at_this_bucket_scores_without_dividing_by_zero() -> None:
    # swiglu at n_cols = 0: the row loop runs 0 times, so every loop segment moves 0 bytes (fla's
    # prepare_position_ids_kernel reached this with a loop bound it had wrongly evaluated to 0)
    import dataclasses

    from kernlint.analysis.configs import ConfigPoint
    from kernlint.analysis.estimate import estimate
    from kernlint.hardware.specs import SPECS
    from kernlint.recommend.model import score
    res = lint_paths([str(ROOT / "examples/swiglu.py")], Settings(targets=("h200",)))
    k = next(k for f in res.files for k in f.kernels if k.jit.name == "swiglu_fwd_kernel")
    src, w = _work("examples/swiglu.py", "swiglu_fwd_kernel", {"n_rows": 4096, "n_cols": 4096}, 1024, 4)
    idle = dataclasses.replace(w, segments=tuple((0.0, f) for _, f in w.segments), bytes=0.0)
    est = estimate(k.ir, ConfigPoint({"BLOCK_SIZE": 1024}, 4, 1, "cli", k.jit.line), SPECS["h200"])
    sc = score(est, idle, SPECS["h200"], 4096)
    assert sc.terms["memory"] == 0.0 and sc.time_us > 0


def test_an_operand_loaded_then_transposed_is_a_dot_operand() -> None:
    """examples/attention_fwd.py takes `tl.dot(q, tl.trans(k))`: k is re-read by every CTA of the head, an L2
    hit like v, not a DRAM stream. By hand, one 64-row CTA at N_CTX 512 (BLOCK_N 64, HEAD_DIM 64, fp16):
    q 64 × 64 × 2 B once, then 512 / 64 = 8 trips of k and v, 64 × 64 × 2 B each:
    8192 + 8 × 2 × 8192 = 139,264 B of dot operands (k used to count as 73,728 - 8192 = 65,536 B of DRAM)."""
    res = lint_paths([str(ROOT / "examples/attention_fwd.py")], Settings(targets=("h200",)))
    k = next(k for f in res.files for k in f.kernels if k.jit.name == "attn_fwd_kernel")
    src = read_kernel_source(k.jit.path, k.jit.name)
    shape = dict(Z=16, H=16, N_CTX=512, HEAD_DIM=64, CAUSAL=False)
    env = {**bucket_env(k, src, shape), "BLOCK_M": 64, "BLOCK_N": 64, "HEAD_DIM": 64, "CAUSAL": False}
    w = kernel_work(k.ir, src, env, 3, 4)
    assert w.dot_bytes == 8192 + 8 * 2 * 8192
