"""Computed dot operands, continued (tests/analysis/test_smem_computed_operands.py has the rules and the main grid):
loads converted to another type, rows loaded before the loop, and the sm_90 register-A conversion.

Truth: Triton 3.9 compiles of exactly the kernels below (metadata.shared, TTGIR allocations read), 16-byte-
aligned pointers; each number is restated by hand arithmetic in the `_expected_*` functions.
"""
from __future__ import annotations

from pathlib import Path

from kernlint.pipeline.api import Settings, lint_paths


def _estimates(tmp_path: Path, source: str, configs: list[dict[str, int]], args: dict[str, str]
               ) -> dict[tuple[str, int, int, int], int]:
    path = tmp_path / "casts.py"
    path.write_text(source)
    result = lint_paths([str(path)], Settings(targets=("a100", "h100", "b200"), cli_configs=tuple(configs),
                                               arg_types=args))
    return {(k.jit.name, e.config.constexprs["BM"], e.config.num_stages, e.target.capability): e.smem.total
            for k in result.files[0].kernels for e in k.estimates if e.config.origin == "cli"}


CASTS = '''import triton
import triton.language as tl


@triton.jit
def c_down_A(h_ptr, f_ptr, i8_ptr, o_ptr, NT, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    a_off = om[:, None] * BK + ok[None, :]
    b_off = ok[:, None] * BN + on[None, :]
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        a = tl.load(f_ptr + i * BM * BK + a_off).to(tl.float16)
        b = tl.load(h_ptr + i * BK * BN + b_off)
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)


@triton.jit
def c_down_B(h_ptr, f_ptr, i8_ptr, o_ptr, NT, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    a_off = om[:, None] * BK + ok[None, :]
    b_off = ok[:, None] * BN + on[None, :]
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        a = tl.load(h_ptr + i * BM * BK + a_off)
        b = tl.load(f_ptr + i * BK * BN + b_off).to(tl.float16)
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)


@triton.jit
def c_up_A(h_ptr, f_ptr, i8_ptr, o_ptr, NT, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    a_off = om[:, None] * BK + ok[None, :]
    b_off = ok[:, None] * BN + on[None, :]
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        a = tl.load(h_ptr + i * BM * BK + a_off).to(tl.float32)
        b = tl.load(f_ptr + i * BK * BN + b_off)
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)


@triton.jit
def c_up_B(h_ptr, f_ptr, i8_ptr, o_ptr, NT, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    a_off = om[:, None] * BK + ok[None, :]
    b_off = ok[:, None] * BN + on[None, :]
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        a = tl.load(f_ptr + i * BM * BK + a_off)
        b = tl.load(h_ptr + i * BK * BN + b_off).to(tl.float32)
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)


@triton.jit
def c_int8_A(h_ptr, f_ptr, i8_ptr, o_ptr, NT, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    a_off = om[:, None] * BK + ok[None, :]
    b_off = ok[:, None] * BN + on[None, :]
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        a = tl.load(i8_ptr + i * BM * BK + a_off).to(tl.float16)
        b = tl.load(h_ptr + i * BK * BN + b_off)
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)
'''

CAST_CONFIGS = ((64, 64, 64, 4, 3), (128, 64, 64, 8, 4))

CAST_TRUTH = {  # Triton 3.9, (sm_80, sm_90, sm_100) per config of CAST_CONFIGS
    "c_down_A": [(49152, 57344, 57360), (122880, 131072, 131088)],
    "c_down_B": [(49152, 65536, 65552), (98304, 122880, 122896)],
    "c_up_A": [(49152, 65536, 65552), (98304, 114688, 114704)],
    "c_up_B": [(49152, 81920, 81936), (122880, 172032, 172048)],
    "c_int8_A": [(24576, 32768, 32784), (49152, 57344, 57360)],
}


def _expected_cast(kernel: str, config: tuple[int, int, int, int, int], cap: int) -> int:
    """A load converted to another type before the dot is a computed operand: read from its pipelined
    loads on sm_80 (the conversion moves to them), A in registers / tensor memory and B staged on sm_90 /
    sm_100, the load pipelined in num_stages − 1 buffers of its own type. Before, kernlint took it for a
    loaded operand (num_stages buffers of the load on sm_90 / sm_100, B never staged)."""
    bm, bn, bk, _, stages = config
    p, s = stages - 1, stages
    a_tile, b_tile = bm * bk, bk * bn
    bar = 16 if cap == 100 else 0
    a_bytes, a_load, b_bytes, b_load = {
        "c_down_A": (2, 4, 2, 2), "c_down_B": (2, 2, 2, 4), "c_up_A": (4, 2, 4, 4), "c_up_B": (4, 4, 4, 2),
        "c_int8_A": (2, 1, 2, 2)}[kernel]
    a_cast, b_cast = a_bytes != a_load, b_bytes != b_load
    if cap == 80:
        return p * a_tile * a_load + p * b_tile * b_load
    a = (p if a_cast else s) * a_tile * a_load
    b = p * b_tile * b_load + b_tile * b_bytes if b_cast else s * b_tile * b_load
    return a + b + bar


def test_converted_loads_hand_arithmetic() -> None:
    for kernel, rows in CAST_TRUTH.items():
        for config, measured in zip(CAST_CONFIGS, rows):
            for cap, shared in zip((80, 90, 100), measured):
                assert _expected_cast(kernel, config, cap) == shared, (kernel, config, cap)


def test_converted_loads_are_computed_operands(tmp_path: Path) -> None:
    configs = [{"BM": bm, "BN": bn, "BK": bk, "num_warps": w, "num_stages": s} for bm, bn, bk, w, s in CAST_CONFIGS]
    args = {"h_ptr": "*fp16", "f_ptr": "*fp32", "i8_ptr": "*i8", "o_ptr": "*fp32", "NT": "i32"}
    got = _estimates(tmp_path, CASTS, configs, args)
    want = {(kernel, config[0], config[4], cap): shared for kernel, rows in CAST_TRUTH.items()
            for config, measured in zip(CAST_CONFIGS, rows) for cap, shared in zip((80, 90, 100), measured)}
    assert got == want


MORE = '''import triton
import triton.language as tl


@triton.jit
def b_times_vector_from_before(x_ptr, b_ptr, v_ptr, o_ptr, NT, scale,
                               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    v = tl.load(v_ptr + ok).to(tl.float32)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        a = tl.load(x_ptr + i * BM * BK + om[:, None] * BK + ok[None, :])
        x = tl.load(b_ptr + i * BK * BN + ok[:, None] * BN + on[None, :])
        b = (x.to(tl.float32) * tl.exp2(v[:, None])).to(tl.float16)
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)


@triton.jit
def a_scaled(x_ptr, b_ptr, v_ptr, o_ptr, NT, scale, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        a = (tl.load(x_ptr + i * BM * BK + om[:, None] * BK + ok[None, :]).to(tl.float32) * scale).to(tl.float16)
        b = tl.load(b_ptr + i * BK * BN + ok[:, None] * BN + on[None, :])
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)


@triton.jit
def tf32_a_scaled(x_ptr, b_ptr, v_ptr, o_ptr, NT, scale, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        a = tl.load(x_ptr + i * BM * BK + om[:, None] * BK + ok[None, :]).to(tl.float32) * scale
        b = tl.load(b_ptr + i * BK * BN + ok[:, None] * BN + on[None, :]).to(tl.float32)
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)


@triton.jit
def b_times_column_from_before(x_ptr, b_ptr, v_ptr, o_ptr, NT, scale,
                               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    v = tl.load(v_ptr + ok[:, None]).to(tl.float32)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        a = tl.load(x_ptr + i * BM * BK + om[:, None] * BK + ok[None, :])
        x = tl.load(b_ptr + i * BK * BN + ok[:, None] * BN + on[None, :])
        b = (x.to(tl.float32) * tl.exp2(v)).to(tl.float16)
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)
'''

MORE_CONFIGS = ((64, 64, 64, 4, 3), (64, 64, 128, 4, 3), (64, 64, 64, 2, 3), (128, 64, 64, 8, 3), (128, 128, 32, 4, 3))

MORE_TRUTH = {  # Triton 3.9, (sm_80, sm_90, sm_100) per config of MORE_CONFIGS
    "b_times_vector_from_before": [(32768, 49152, 49168), (65536, 98304, 98320), (32768, 32768, 32768), (49152, 73728, 73744), (32768, 49152, 49168)],
    "b_times_column_from_before": [(32768, 49152, 49168), (81920, 98304, 98320), (40960, 40960, 40960), (49152, 73728, 73744), (32768, 49152, 49168)],
    "a_scaled": [(40960, 49152, 40976), (81920, 90112, 81936), (40960, 40960, 40960), (65536, 73728, 57360), (40960, 45056, 40976)],
    "tf32_a_scaled": [(49152, 65536, 49168), (98304, 131072, 98320), (49152, 49152, 49152), (81920, 98304, 65552), (49152, 65536, 49168)],
}

# sm_90: A converted into the wgmma register-operand layout (computed_operands.wgmma_a_layout), measured
REGISTER_A_CONVERSION = {(64, 64, 4): 8192, (64, 128, 4): 8192, (128, 64, 8): 16384, (128, 32, 4): 4096}


def _expected_more(kernel: str, config: tuple[int, int, int, int, int], cap: int) -> int:
    """A [BK, 1] column loaded before the loop stops the conversion of B = x · exp2(v) when it has at least as
    many elements as threads (2 warps, or BK = 128 at 4 warps), a 1-D vector expanded in the chain never;
    `x · scale` stops it for A: sm_90 converts A into its register layout, or stages it when B is computed
    in the loop as well (tf32_a_scaled: B is an fp16 load converted to fp32). 2 warps: mma.sync everywhere."""
    bm, bn, bk, warps, stages = config
    p, s = stages - 1, stages
    al, bl = bm * bk * 2, bk * bn * 2
    family = "mma_sync" if cap == 80 or warps < 4 else cap
    bar = 16 if family == 100 else 0
    if kernel.startswith("b_times"):
        staged_80 = kernel == "b_times_column_from_before" and bk >= 32 * warps
        if family == "mma_sync":
            return p * al + p * bl + (bl if staged_80 else 0)
        return s * al + p * bl + bl + bar
    if kernel == "a_scaled":
        if family == "mma_sync":
            return p * al + p * bl + al
        return p * al + s * bl + (REGISTER_A_CONVERSION[(bm, bk, warps)] if family == 90 else bar)
    assert kernel == "tf32_a_scaled"
    if family == "mma_sync":
        return p * al + p * bl + 2 * al
    return p * al + p * bl + 2 * bl + (2 * al if family == 90 else bar)


def test_more_hand_arithmetic() -> None:
    for kernel, rows in MORE_TRUTH.items():
        for config, measured in zip(MORE_CONFIGS, rows):
            for cap, shared in zip((80, 90, 100), measured):
                assert _expected_more(kernel, config, cap) == shared, (kernel, config, cap)


def test_vectors_from_before_the_loop_and_register_a(tmp_path: Path) -> None:
    path = tmp_path / "more.py"
    path.write_text(MORE)
    configs = tuple({"BM": bm, "BN": bn, "BK": bk, "num_warps": w, "num_stages": s} for bm, bn, bk, w, s in MORE_CONFIGS)
    args = {"x_ptr": "*fp16", "b_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp32", "NT": "i32", "scale": "fp32"}
    result = lint_paths([str(path)], Settings(targets=("a100", "h100", "b200"), cli_configs=configs, arg_types=args))
    got = {(k.jit.name, tuple(e.config.constexprs[n] for n in ("BM", "BN", "BK")) + (e.config.num_warps,),
            e.target.capability): e.smem.total
           for k in result.files[0].kernels for e in k.estimates if e.config.origin == "cli"}
    want = {(kernel, config[:4], cap): shared for kernel, rows in MORE_TRUTH.items()
            for config, measured in zip(MORE_CONFIGS, rows) for cap, shared in zip((80, 90, 100), measured)}
    assert got == want
