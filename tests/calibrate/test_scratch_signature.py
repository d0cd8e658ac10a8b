"""Scratch-module builder, signature derivation, sweep and cache keys: no Triton needed."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kernlint.analysis.configs import ConfigPoint
from kernlint.calibrate.scratch import ScratchError, build_scratch, find_kernel, source_tree_for
from kernlint.calibrate.session import _cache_key, prepare
from kernlint.calibrate.sweep import sweep_configs
from kernlint.calibrate.signature import (
    SpecError, compile_args, derive_signature, lint_arg_types, parse_spec, pointer_args, unit_stride_args,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def _scratch(spec: str):  # type: ignore[no-untyped-def]
    path, _, name = spec.partition("::")
    tree, pm = source_tree_for(path)
    jit = find_kernel(pm, name or None)
    return tree, pm, jit, build_scratch(tree, pm, jit)


def test_scratch_has_helpers_from_other_files_constants_and_triton_imports_only() -> None:
    _, _, _, s = _scratch("examples/persistent_matmul.py::persistent_matmul_kernel")
    src = s.source
    ast.parse(src)
    assert s.files == ("examples/persistent_matmul.py", "examples/kernel_utils.py")
    assert "def grouped_pid(" in src and "def persistent_matmul_kernel(" in src
    assert "GROUP_SIZE = tl.constexpr(8)" in src   # evaluated and written by kernlint, not copied
    assert "from triton.language import dot" in src
    assert "import torch" not in src and "itertools" not in src and "def persistent_matmul(" not in src
    assert "autotune" not in src and "PERSISTENT_CONFIGS" not in src and "def silu(" not in src
    assert s.missing == ()
    lines = src.splitlines()
    for span in s.spans:  # error lines map back to the user's files
        assert lines[span.start - 1].startswith("def ")
    def_line = next(i for i, ln in enumerate((ROOT / "examples/persistent_matmul.py").read_text().splitlines(), 1)
                    if ln.startswith("def persistent_matmul_kernel("))
    assert s.original_location(s.spans[-1].start + 1) == f"examples/persistent_matmul.py:{def_line + 1}"


def test_scratch_drops_heuristics_and_keeps_same_file_helpers() -> None:
    _, _, _, s = _scratch("examples/batched_matmul.py::bmm_kernel")
    assert "heuristics" not in s.source and "BMM_CONFIGS" not in s.source
    assert s.source.count("@triton.jit") == 2 and "def _bmm_program(" in s.source


def test_building_the_scratch_module_never_runs_the_users_module(tmp_path: Path) -> None:
    sentinel = tmp_path / "ran.txt"
    mod = tmp_path / "userkern.py"
    mod.write_text(textwrap.dedent(f"""
        import torch, triton
        import triton.language as tl
        open({str(sentinel)!r}, "w").write("top-level code ran")
        SCALE = tl.constexpr(2)
        raise SystemExit("importing this module is forbidden")

        @triton.jit
        def _twice(x):
            return x * SCALE

        @triton.autotune(configs=[triton.Config({{"BLOCK": 128}}, num_warps=4)], key=["n"])
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, _twice(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)
    """))
    cal, work = prepare(f"{mod}::k", ("h100",))
    assert not sentinel.exists()
    assert "SystemExit" not in cal.scratch.source and "open(" not in cal.scratch.source
    assert "SCALE = tl.constexpr(2)" in cal.scratch.source
    (row, task), = work
    assert task is not None and task["constexprs"] == {"BLOCK": 128} and task["config"]["num_warps"] == 4


def test_name_clash_between_files_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("import triton\n@triton.jit\ndef h(x):\n    return x\n")
    (tmp_path / "pkg" / "b.py").write_text(textwrap.dedent("""
        import triton
        from pkg.a import h as other
        @triton.jit
        def h(x):
            return x + 1
        @triton.jit
        def k(x_ptr):
            other(h(x_ptr))
    """))
    tree, pm = source_tree_for("pkg/b.py")
    with pytest.raises(ScratchError, match="`h` is both"):
        build_scratch(tree, pm, find_kernel(pm, "k"))


def test_signature_defaults_and_pointers_through_helpers() -> None:
    tree, pm, jit, _ = _scratch("examples/batched_matmul.py::bmm_kernel")
    sig = derive_signature(jit, pointer_args(jit, pm, tree), {"stride_ak": "1", "M": "4096", "stride_cn": "i32"},
                           unit_stride_args(jit, pm, tree))
    by = {a.name: a for a in sig}
    assert by["a_ptr"].kind == "pointer" and by["a_ptr"].value == "*fp16" and by["a_ptr"].source == "default"
    assert by["K"].value == "i32" and "divisible by 16" in by["K"].describe()
    assert by["stride_ak"].value == 1 and by["M"].value == 4096
    assert by["stride_bn"].value == 1 and "contiguous stride" in by["stride_bn"].describe()  # through the helper
    assert by["stride_cn"].value == "i32" and by["stride_bk"].value == "i32"
    assert by["BLOCK_M"].kind == "constexpr"
    args, fixed = compile_args(sig)
    assert args["c_ptr"] == "*fp16" and fixed == {}
    assert lint_arg_types(sig)["stride_ak"] == "1" and lint_arg_types(sig)["M"] == "i32"
    tree, pm, jit, _ = _scratch("examples/attention_fwd.py::attn_fwd_kernel")
    assert {"K", "V", "Q", "Out"} <= pointer_args(jit, pm, tree)


@pytest.mark.parametrize("given, match", [
    ({"a_pointer": "*bf16"}, "no argument 'a_pointer'"),
    ({"a_ptr": "i32"}, "a_ptr is used as a pointer"),
    ({"a_ptr": "*bfloat17"}, "unknown type"),
    ({"BLOCK_M": "*fp16"}, "BLOCK_M is a tl.constexpr"),
    ({"M": "i32:8"}, "unknown hint"),
])
def test_spec_errors_name_the_argument(given: dict[str, str], match: str) -> None:
    tree, pm, jit, _ = _scratch("examples/matmul.py::matmul_kernel")
    with pytest.raises(SpecError, match=match):
        derive_signature(jit, pointer_args(jit, pm, tree), given)


def test_spec_parsing() -> None:
    assert parse_spec("x", "*bfloat16") == "*bf16" and parse_spec("x", "*fp16:0") == "*fp16:0"
    assert parse_spec("x", "1e-5") == 1e-5 and parse_spec("x", "True") is True and parse_spec("x", "None") is None


def test_sweep_grid_is_capped_and_centred_on_the_base() -> None:
    base = ConfigPoint({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, 4, 3, "autotune", 1)
    grid = sweep_configs(("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"), {"BLOCK_M", "BLOCK_N", "BLOCK_K"}, base,
                         True, cap=48)
    assert len(grid) == 48 and grid[0] == {"GROUP_M": 8, "BLOCK_K": 64, "BLOCK_M": 128, "BLOCK_N": 128,
                                           "num_stages": 3, "num_warps": 4}
    assert {g["num_warps"] for g in grid} == {2, 4, 8} and {g["GROUP_M"] for g in grid} == {8}
    assert all(g["BLOCK_M"] in (64, 128, 256) for g in grid)
    flat = sweep_configs(("BLOCK",), {"BLOCK"}, ConfigPoint({"BLOCK": 1024}, 4, 3, "launch", 1), False)
    assert sorted({g["BLOCK"] for g in flat}) == [256, 512, 1024, 2048, 4096]
    assert {g["num_stages"] for g in flat} == {3}  # nothing to pipeline: stages are not swept


def test_cache_key_covers_source_config_and_toolchain() -> None:
    *_, s1 = _scratch("examples/matmul.py::matmul_kernel")
    *_, s2 = _scratch("examples/vector_add.py")
    task = {"kernel": "k", "args": {"a": "*fp16"}, "constexprs": {"B": 64}, "config": {"num_warps": 4}, "cap": 90}
    env = {"triton_version": "3.9.0", "ptxas_version": "12.9.86"}
    keys = {_cache_key(s1, task, env), _cache_key(s2, task, env), _cache_key(s1, {**task, "cap": 100}, env),
            _cache_key(s1, {**task, "constexprs": {"B": 128}}, env),
            _cache_key(s1, task, {**env, "triton_version": "3.6.0"}), _cache_key(s1, task, {**env, "ptxas_version": "x"})}
    assert len(keys) == 6


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_check_never_imports_triton_and_the_worker_needs_no_libcst() -> None:
    r = _python("import sys, io; from kernlint.cli import main; main(['check', 'examples', '--exit-zero'], io.StringIO());"
                "assert 'triton' not in sys.modules, 'check imported triton'")
    assert r.returncode == 0, r.stderr
    r = _python("import sys, kernlint.calibrate.worker, kernlint.calibrate.triton_compile;"
                "assert not {'libcst', 'rich', 'triton'} & set(sys.modules), sorted(sys.modules)")
    assert r.returncode == 0, r.stderr


def test_cli_errors_without_compiling(capsys: pytest.CaptureFixture[str]) -> None:
    from kernlint.cli import main

    assert main(["calibrate", "examples/matmul.py::matmul_kernel", "--arg", "a_ptr=i32"]) == 2
    assert "a_ptr is used as a pointer" in capsys.readouterr().err
    assert main(["calibrate", "examples/matmul.py::nope"]) == 2
    assert "no Triton kernel 'nope'" in capsys.readouterr().err


def test_missing_triton_is_one_line_with_the_install_hint(capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from kernlint.cli import main

    # an environment without Triton, whether or not this one has it: calibrate asks importlib before starting
    # a worker
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a, **k: None if name == "triton" else real_find_spec(name, *a, **k))
    assert main(["calibrate", "examples/vector_add.py"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "pip install 'kernlint[triton]'" in err
