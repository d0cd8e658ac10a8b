"""The row-kernel terms of the time model: L1 wavefronts of unvectorised accesses, L2 re-read footprint."""
from __future__ import annotations

from pathlib import Path

from kernlint.api import Settings, lint_paths
from kernlint.recommend.core import bucket_env
from kernlint.recommend.model import access_wavefronts, kernel_work
from kernlint.recommend.source import read_kernel_source

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
    from kernlint.recommend.source import trip_count
    res = lint_paths([str(ROOT / "examples/attention_fwd.py")], Settings(targets=("h200",)))
    k = next(k for f in res.files for k in f.kernels if k.jit.name == "attn_fwd_kernel")
    src = read_kernel_source(k.jit.path, k.jit.name)
    env = {**bucket_env(k, src, dict(Z=1, H=32, N_CTX=2048, HEAD_DIM=128, CAUSAL=False)), "BLOCK_M": 128, "BLOCK_N": 64}
    assert "hi" not in env
    trips = {line: trip_count(src, line, env) for line in src.loops}
    assert 32 in trips.values()
