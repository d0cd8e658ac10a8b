"""benchmarks/public_accuracy.py on tiny fixture kernels: spec derivation, config plan, report (no download).

Expected specs follow the stated defaults of benchmarks/public_specs.py (written out by hand below); the
compile part runs only where Triton is installed.
"""
from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT

from benchmarks import public_accuracy as pa
from benchmarks import public_configs as pc
from benchmarks import public_specs as ps

from kernlint.analysis.estimate import shape_symbols  # noqa: E402
from kernlint.pipeline.api import Settings, lint_source  # noqa: E402

GATHER = textwrap.dedent('''
    import triton
    import triton.language as tl


    @triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4), triton.Config({"BLOCK": 256}, num_warps=8),
                              triton.Config({"BLOCK": 512}, num_warps=8)], key=["n"])
    @triton.jit
    def gather_kernel(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr, HAS_SCALE: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        idx = tl.load(idx_ptr + offs, mask=offs < n)
        x = tl.load(x_ptr + idx * 2, mask=offs < n)
        if HAS_SCALE:
            x = x * 2
        tl.store(out_ptr + offs, x.to(tl.float32), mask=offs < n)


    @triton.jit
    def scan_kernel(x_ptr, y_ptr, n, stride_chunk, BLOCK: tl.constexpr, D: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x_ptrs = x_ptr + offs
        for i in range(n):
            y = tl.load(x_ptrs) * D
            tl.store(y_ptr + offs, y)
            x_ptrs -= stride_chunk


    @triton.jit
    def cast_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr, OUT_DTYPE: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(OUT_DTYPE))


    @triton.jit
    def unpack_kernel(q_ptr, lo_ptr, seq_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        packed = tl.load(q_ptr + offs)
        start = tl.load(lo_ptr) // BLOCK
        base = tl.load(seq_ptr) * n
        tl.store(out_ptr + base + start + offs, (packed & 0xF) * scale)


    def launch(x, idx, out, n, flag, d, dt):
        gather_kernel[(1,)](x, idx, out, n, HAS_SCALE=flag)
        scan_kernel[(1,)](x, out, n, 16, BLOCK=d, D=d)
        cast_kernel[(1,)](x, out, BLOCK=d, OUT_DTYPE=dt)
''')


def _kernel(name: str):  # type: ignore[no-untyped-def]
    result = lint_source(GATHER, "fixture_kernels.py", Settings(targets=("h100",)))
    return next(k for f in result.files for k in f.kernels if k.jit.qualname == name)


def test_pointer_dtypes_from_the_kernels_own_usage() -> None:
    ka = _kernel("gather_kernel")
    got = ps.pointer_dtypes(ka.jit, {"x_ptr", "idx_ptr", "out_ptr"})
    # idx feeds x_ptr's address → index array; out gets x.to(tl.float32); x_ptr says nothing → default
    assert {k: v[0] for k, v in got.items()} == {"idx_ptr": "*i32", "out_ptr": "*fp32"}


def test_integer_arrays_from_bitwise_floor_division_and_address_use() -> None:
    ka = _kernel("unpack_kernel")
    got = ps.pointer_dtypes(ka.jit, {"q_ptr", "lo_ptr", "seq_ptr", "out_ptr"})
    # `packed & 0xF` → bit-packed u8; `load(lo) // BLOCK` → index; `base = load(seq) * n` feeds out's address
    assert {k: v[0] for k, v in got.items()} == {"q_ptr": "*u8", "lo_ptr": "*i32", "seq_ptr": "*i32"}


def test_a_pointer_increment_or_a_scaled_name_is_an_offset_not_a_pointer() -> None:
    ka = _kernel("scan_kernel")
    assert ps.offset_only(ka.jit, {"x_ptr", "y_ptr", "stride_chunk"}) == {"stride_chunk"}
    ka = _kernel("unpack_kernel")
    assert ps.offset_only(ka.jit, {"q_ptr", "out_ptr", "n", "scale"}) == {"n", "scale"}


def test_configs_spread_over_autotune_and_flags_default_false() -> None:
    ka = _kernel("gather_kernel")
    plan = pc.plan_configs(ka.jit, ka.points, set(shape_symbols(ka.ir)), max_configs=2)
    # 3 autotune configs, 2 wanted: the first and the last; HAS_SCALE (launch value unknown) is an `if` flag
    assert plan.skip is None
    assert plan.configs == [{"BLOCK": 128, "HAS_SCALE": False, "num_warps": 4, "num_stages": 3},
                            {"BLOCK": 512, "HAS_SCALE": False, "num_warps": 8, "num_stages": 3}]


FLAG_PASSED_DOWN = """
import triton
import triton.language as tl

@triton.jit
def _inner(x, DEBUG: tl.constexpr, SCALE: tl.constexpr):
    if DEBUG:
        tl.device_print("x", x)
    return x * SCALE

@triton.jit
def outer_kernel(x_ptr, BLOCK: tl.constexpr, DEBUG: tl.constexpr, SCALE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = _inner(tl.load(x_ptr + offs), DEBUG, SCALE=SCALE)
    if not DEBUG:
        tl.store(x_ptr + offs, _inner(x, DEBUG=DEBUG, SCALE=SCALE))
"""


def test_a_flag_handed_to_a_helper_that_only_tests_it_is_still_a_flag() -> None:
    # flash-attn's AMD kernels pass DEBUG_TRITON to inner loops that only `print` under it: 64 made Triton
    # format a tensor in an f-string and reject the kernel; SCALE is a value wherever it goes
    from kernlint.frontend.kernels import collect_module_facts
    from kernlint.frontend.parse import parse_bytes
    facts, _ = collect_module_facts("flags.py", parse_bytes(FLAG_PASSED_DOWN.encode()).module)  # type: ignore[union-attr]
    jits = {j.name: j for j in facts.jit_functions}
    outer, helper = jits["outer_kernel"], {"_inner": jits["_inner"]}.get
    kernels = {k.jit.name: k for f in lint_source(FLAG_PASSED_DOWN, "flags.py", Settings(targets=("h100",))).files
               for k in f.kernels}
    assert ps.condition_only(outer, "DEBUG", helper) and not ps.condition_only(outer, "DEBUG")
    assert not ps.condition_only(outer, "SCALE", helper)
    plan = pc.plan_configs(outer, kernels["outer_kernel"].points, {"BLOCK"}, 1, helper)
    assert plan.configs[0]["DEBUG"] is False and plan.configs[0]["SCALE"] == 64


def test_unknown_block_sizes_get_the_default_set_and_sizes_get_64() -> None:
    ka = _kernel("scan_kernel")
    blocks = set(shape_symbols(ka.ir)) & set(ka.jit.constexpr_names)
    assert blocks == {"BLOCK"}
    plan = pc.plan_configs(ka.jit, ka.points, blocks, max_configs=4)
    assert plan.configs == [{"BLOCK": 64, "D": 64, "num_warps": 4, "num_stages": 3},
                            {"BLOCK": 128, "D": 64, "num_warps": 8, "num_stages": 3}]
    assert pc.split_config(plan.configs[0], blocks) == ({"BLOCK": 64, "num_warps": 4, "num_stages": 3}, {"D": 64})


def test_a_dtype_constexpr_is_skipped_with_the_reason() -> None:
    ka = _kernel("cast_kernel")
    plan = pc.plan_configs(ka.jit, ka.points, set(shape_symbols(ka.ir)), max_configs=2)
    assert plan.configs == [] and plan.skip is not None and plan.skip.startswith("dtype constexpr OUT_DTYPE")


def test_discovery_counts_only_launched_kernels(tmp_path: Path) -> None:
    helper = "import triton\n\n@triton.jit\ndef helper(x):\n    return x\n"
    texts = {"a.py": GATHER.encode(), "b.py": helper.encode(), "c.py": b"print(1)\n"}
    assert ps.jit_source_files(texts) == ["a.py", "b.py"]
    launched = ps.launched_names(texts)
    names = [n for n, _ in ps.top_level_jit_functions(GATHER) + ps.top_level_jit_functions(helper) if n in launched]
    assert names == ["gather_kernel", "scan_kernel", "cast_kernel"]


def _fixture(tmp_path: Path) -> pa.Candidate:
    (tmp_path / "fixture_kernels.py").write_text(GATHER)
    return pa.Candidate("fixture", str(tmp_path / "fixture_kernels.py"), "gather_kernel", 9)


def test_report_coverage_and_metrics_without_triton(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    res, prepared = pa.prepare_kernel(_fixture(tmp_path), (90,), 2)
    assert res.skip is None and prepared is not None
    _, work = prepared
    assert [(s["config"], s["cap"]) for s, _, _ in work] == [
        ({"BLOCK": 128, "num_warps": 4, "num_stages": 3}, 90), ({"BLOCK": 512, "num_warps": 8, "num_stages": 3}, 90)]
    assert work[0][0]["args"] == {"x_ptr": "*fp16", "idx_ptr": "*i32", "out_ptr": "*fp32", "n": "i32"}
    # a gather + elementwise kernel needs no shared memory (Triton allocates none without a layout
    # conversion, reduction or pipelined load); registers: a made-up ptxas number, 30
    for stub, e, _ in work:
        rec = {**stub, "regs": 30, "spill_store": 0, "shared": 0, "error": None}
        res.records.append(rec)
        res.pairs.append((rec, e))
    res.records.append({**work[0][0], "error": "CompilationError: at 1:2: boom"})
    skipped = pa.KernelResult(pa.Candidate("fixture", "x.py", "cast_kernel", 30), skip="dtype constexpr OUT_DTYPE")
    text = pa.render([res, skipped], {"fixture": 3})
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("fixture "))
    # found 3 / sampled 2 / spec 1 / compiled 1 / failed 0 / skipped 1; 3 records, 1 failed
    assert line.split() == ["fixture", "3", "/", "2", "/", "1", "/", "1", "/", "0", "/", "1;", "3", "(1)"]
    assert "CompilationError 1" in text and "dtype constexpr OUT_DTYPE 1" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("fixture ") and " h100 " in ln).split()
    assert row[2] == "2" and row[3] == "1.000"          # 2 pairs; shared memory 0 = 0 exactly


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs Triton")
def test_fixture_compiles_with_the_derived_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kernlint.calibrate.session import Cache
    from kernlint.calibrate.worker import WorkerPool

    monkeypatch.chdir(ROOT)
    res, prepared = pa.prepare_kernel(_fixture(tmp_path), (90,), 1)
    assert prepared is not None
    with WorkerPool(None, 1) as pool:
        pa.compile_kernel(res, prepared[0], prepared[1], pool, pool.environment(), Cache(None), tmp_path, 300)
    (rec,) = res.records
    assert rec["error"] is None and rec["shared"] == 0 and rec["regs"] > 0
    assert len(res.pairs) == 1


def test_a_flag_that_chooses_a_tile_is_still_a_flag() -> None:
    source = FLAG_PASSED_DOWN + '''

@triton.jit
def pick_kernel(x_ptr, BLOCK: tl.constexpr, USE_WIDE: tl.constexpr):
    acc = tl.zeros([BLOCK * 2], dtype=tl.float32) if USE_WIDE else tl.zeros([BLOCK], dtype=tl.float32)
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.sum(acc))
'''
    (ka,) = [k for f in lint_source(source, "pick.py", Settings(targets=("h100",))).files for k in f.kernels
             if k.jit.name == "pick_kernel"]
    shapes = set(shape_symbols(ka.ir))
    assert "USE_WIDE" in shapes                    # the choice puts it in a shape ...
    plan = pc.plan_configs(ka.jit, ka.points, shapes & set(ka.jit.constexpr_names), 1)
    assert plan.configs[0]["USE_WIDE"] is False    # ... but 64 or 128 would compile a different kernel
