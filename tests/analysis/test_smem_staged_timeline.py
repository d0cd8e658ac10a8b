"""A staged computed A tile (smem_staged_a.py) inside a straight-line region (smem_straight.py) is one event on
the region's timeline: its copy is dead by the time the later, larger dot's operands are copied, so the peak is
the larger dot's copies alone. Adding the staged tiles' own peak to the region's over-counted fla gdn2
`chunk_gdn2_fwd_kernel_inter_solve_fused` (11,264 B against Triton's 8,192).

Truth: Triton 3.9 `metadata.shared` of the probe below (16-row tiles: mma.sync on sm_80, sm_90 and sm_100),
4 warps, num_stages 3. fp16, 16×16×32 then 16×16×256: 16,384 B = c (16 × 256 × 2) + d (256 × 16 × 2), while a
(16 × 32 × 2 = 1,024, staged through the tl.where) and b are dead; 16×32×64 then BL 512: 49,152 = 16,384 + 32,768;
fp32 doubles both (32,768 / 98,304)."""
from __future__ import annotations

import pytest

from kernlint.pipeline.api import Settings, lint_paths

PROBE = '''
import triton
import triton.language as tl


@triton.jit
def where_then_big(a_ptr, b_ptr, g_ptr, c_ptr, d_ptr, o_ptr, n, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr, BL: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    rl = tl.arange(0, BL)
    g = tl.load(g_ptr + rm[:, None] * BK + rk[None, :])
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :]) * tl.where(rm[:, None] < n, g, 0.0)
    x = tl.dot(a, tl.load(b_ptr + rk[:, None] * BN + rn[None, :]))
    c = tl.load(c_ptr + rm[:, None] * BL + rl[None, :])
    d = tl.load(d_ptr + rl[:, None] * BN + rn[None, :])
    y = tl.dot(c, d)
    tl.store(o_ptr + rm[:, None] * BN + rn[None, :], x * 2 + y)
'''


@pytest.mark.parametrize("dtype,config,truth", [
    ("*fp16", {"BM": 16, "BN": 16, "BK": 32, "BL": 256}, 16384),
    ("*fp16", {"BM": 16, "BN": 32, "BK": 64, "BL": 512}, 49152),
    ("*fp32", {"BM": 16, "BN": 16, "BK": 32, "BL": 256}, 32768),
    ("*fp32", {"BM": 16, "BN": 32, "BK": 64, "BL": 512}, 98304),
])
def test_staged_a_tile_dead_at_the_regions_peak(tmp_path, dtype: str, config: dict, truth: int) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "probe.py"
    path.write_text(PROBE)
    args = {name: dtype for name in ("a_ptr", "b_ptr", "g_ptr", "c_ptr", "d_ptr")} | {"o_ptr": "*fp32", "n": "i32"}
    config = {**config, "num_warps": 4, "num_stages": 3}
    result = lint_paths([str(path)], Settings(targets=("a100", "h100", "b200"), cli_configs=(config,), arg_types=args))
    [kernel] = result.files[0].kernels
    got = {e.target.key: e.smem.total for e in kernel.estimates if e.config.origin == "cli"}
    assert got == {"a100": truth, "h100": truth, "b200": truth}
