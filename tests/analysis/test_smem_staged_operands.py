"""mma.sync A operands computed through a `tl.where` are staged in shared memory (kernlint/analysis/
smem_staged_a.py), and a loaded tile read by several straight-line dots is staged once (smem.py).

Truth: Triton 3.9 `metadata.shared` of the probes below, compiled for sm_80, sm_90 and sm_100 (16- and 32-row
tiles fall back to mma.sync on sm_90/100 too; 64-row tiles are checked on sm_80 only, where wgmma/tcgen05 read
a computed A differently). Without a `tl.where` Triton moves the conversion to the dot-operand layout up to the
load (a scalar or broadcast product, exp2, a product of loads, a widen-narrow round trip): one shared copy of
the loaded tile; with one anywhere between the load and the dot, the computed tile is copied instead, next to
the B tile.
"""
from __future__ import annotations

import pytest

from kernlint.pipeline.api import Settings, lint_paths

PROBES = '''
import triton
import triton.language as tl


@triton.jit
def hoist_probe(a_ptr, b_ptr, g_ptr, s_ptr, c_ptr, n, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                MODE: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    if MODE == 0:
        a = a * 2.0
    elif MODE == 1:
        a = a * tl.load(s_ptr + rk)[None, :]
    elif MODE == 2:
        a = tl.where(rm[:, None] < n, a, 0.0)
    elif MODE == 4:
        a = a * tl.load(g_ptr + rm[:, None] * BK + rk[None, :])
    elif MODE == 5:
        a = (a.to(tl.float32) * 2.0).to(a_ptr.dtype.element_ty)
    elif MODE == 6:
        a = tl.load(s_ptr + rk)[None, :] * a
    elif MODE == 7:
        a = a * tl.math.exp2(tl.load(g_ptr + rm[:, None] * BK + rk[None, :]))
    elif MODE == 8:
        a = tl.where(rm[:, None] < n, tl.load(g_ptr + rm[:, None] * BK + rk[None, :]), 0.0) * a
    elif MODE == 9:
        a = tl.math.exp2(tl.where(rm[:, None] < n, a, 0.0)) * 2.0
    elif MODE == 10:
        a = a * tl.where(rk[None, :] < n, tl.load(s_ptr + rk)[None, :], 0.0)
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], c)


@triton.jit
def two_a_where_two_dots(a_ptr, b_ptr, g_ptr, c_ptr, n, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    g = tl.where(rm[:, None] < n, tl.load(g_ptr + rm[:, None] * BK + rk[None, :]), 0.0)
    a1 = tl.load(a_ptr + rm[:, None] * BK + rk[None, :]) * g
    a2 = tl.load(a_ptr + BM * BK + rm[:, None] * BK + rk[None, :]) * g
    b1 = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    b2 = tl.load(b_ptr + BK * BN + rk[:, None] * BN + rn[None, :])
    c = tl.dot(a1, b1) + tl.dot(a2, b1) + tl.dot(a1, b2) + tl.dot(a2, b2)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], c)


@triton.jit
def a_where_loop(a_ptr, b_ptr, g_ptr, c_ptr, n, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        g = tl.load(g_ptr + rm[:, None] * K + (k + rk)[None, :])
        a = a * tl.where(rm[:, None] < n, g, 0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
'''


def _args(name: str, dtype: str) -> dict[str, str]:
    args = {"a_ptr": dtype, "b_ptr": dtype, "g_ptr": dtype, "s_ptr": dtype, "c_ptr": "*fp32", "n": "i32",
            "K": "i32"}
    if name != "hoist_probe":
        args.pop("s_ptr")
    if name != "a_where_loop":
        args.pop("K")
    return args


def _shared(tmp_path, name: str, config: dict, dtype: str,  # type: ignore[no-untyped-def]
            targets: tuple[str, ...]) -> dict:
    path = tmp_path / "probes.py"
    path.write_text(PROBES)
    result = lint_paths([str(path)], Settings(targets=targets, cli_configs=(config,), arg_types=_args(name, dtype)))
    [kernel] = [k for k in result.files[0].kernels if k.jit.name == name]
    return {e.target.key: e.smem.total for e in kernel.estimates if e.config.origin == "cli"}


ALL = ("a100", "h100", "b200")


@pytest.mark.parametrize("mode,truth", [
    # hoisted to the load: one 16×64 fp32 A copy + the 64×16 B copy, alive together at the dot
    (0, 4096), (1, 4096), (4, 4096), (5, 4096), (6, 4096), (7, 4096),
    # a tl.where on the way (either operand, deep in the chain, on a broadcast vector): the computed tile
    # is copied next to B
    (2, 8192), (8, 8192), (9, 8192), (10, 8192),
])
def test_where_blocks_the_hoist(tmp_path, mode: int, truth: int) -> None:  # type: ignore[no-untyped-def]
    config = {"BM": 16, "BN": 16, "BK": 64, "MODE": mode, "num_warps": 4, "num_stages": 1}
    assert _shared(tmp_path, "hoist_probe", config, "*fp32", ALL) == {t: truth for t in ALL}


@pytest.mark.parametrize("name,dtype,config,targets,truth", [
    # a1, a2 (through tl.where) and b1, b2 alive together; b1 and b2 each read by two dots, staged once:
    # 4 × 16 × 64 × 2 B (fp16), × 4 B (fp32); 4 × 64 × 64 × 2 B at 64-row tiles on sm_80
    ("two_a_where_two_dots", "*fp16", {"BM": 16, "BN": 16, "BK": 64, "num_warps": 4}, ALL, 8192),
    ("two_a_where_two_dots", "*fp16", {"BM": 32, "BN": 32, "BK": 32, "num_warps": 2}, ALL, 8192),
    ("two_a_where_two_dots", "*fp32", {"BM": 16, "BN": 16, "BK": 64, "num_warps": 4}, ALL, 16384),
    ("two_a_where_two_dots", "*fp16", {"BM": 64, "BN": 64, "BK": 64, "num_warps": 4}, ("a100",), 32768),
    ("two_a_where_two_dots", "*fp32", {"BM": 64, "BN": 64, "BK": 64, "num_warps": 4}, ("a100",), 65536),
    # in a pipelined loop: B (num_stages − 1 = 2 buffers), the feeding loads of A (2 × a, g) + one copy of A
    ("a_where_loop", "*fp16", {"BM": 16, "BN": 16, "BK": 64, "num_warps": 4}, ALL, 2 * 2048 + 2 * 4096 + 2048),
    ("a_where_loop", "*fp32", {"BM": 16, "BN": 16, "BK": 64, "num_warps": 4}, ALL, 2 * 4096 + 2 * 8192 + 4096),
    ("a_where_loop", "*fp16", {"BM": 32, "BN": 32, "BK": 32, "num_warps": 2}, ALL, 14336),
    ("a_where_loop", "*fp16", {"BM": 64, "BN": 64, "BK": 64, "num_warps": 4}, ("a100",), 57344),
    ("a_where_loop", "*fp32", {"BM": 64, "BN": 64, "BK": 64, "num_warps": 4}, ("a100",), 114688),
])
def test_staged_operands_against_compiles(tmp_path, name: str, dtype: str, config: dict,  # type: ignore[no-untyped-def]
                                          targets: tuple[str, ...], truth: int) -> None:
    got = _shared(tmp_path, name, {**config, "num_stages": 3}, dtype, targets)
    assert got == {t: truth for t in targets}
