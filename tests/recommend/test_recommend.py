"""Recommender: feasible, inside the author's space, explained; the CLI writes a store; staleness."""
from __future__ import annotations

import pytest

import json
from pathlib import Path

from kernlint.pipeline.api import Settings, lint_paths
from kernlint.hardware.specs import SPECS
from kernlint.recommend.core import recommend
from kernlint.core.config_store import read_store, stale_entries, split_id

ROOT = Path(__file__).resolve().parents[2]


def _kernel(path: str, name: str):
    res = lint_paths([str(ROOT / path)], Settings(targets=("h100",)))
    return next(k for f in res.files for k in f.kernels if k.jit.name == name)


def test_matmul_recommendation_fits_and_stays_in_author_space() -> None:
    k = _kernel("examples/matmul.py", "matmul_kernel")
    rec = recommend(k, SPECS["h100"], {"M": 4096, "N": 4096, "K": 4096}, top_k=5)
    assert rec.ranked and rec.reason is None
    for c in rec.ranked:
        assert not c.estimate.smem_over
        assert 64 <= c.constexprs["BLOCK_M"] <= 256 and 32 <= c.constexprs["BLOCK_K"] <= 64
        assert c.constexprs["GROUP_M"] == 8            # not a tile size: the author's value
        assert "µs model" in c.score.rationale()
    assert rec.rejected["shared memory over the limit"] > 0   # 256x256 tiles with deep pipelines


def test_static_assert_is_respected() -> None:
    k = _kernel("examples/attention_fwd.py", "attn_fwd_kernel")
    rec = recommend(k, SPECS["h100"], {"Z": 2, "H": 8, "N_CTX": 1024, "HEAD_DIM": 64, "CAUSAL": True}, top_k=50)
    assert rec.ranked
    assert all(c.constexprs["BLOCK_M"] % c.constexprs["BLOCK_N"] == 0 for c in rec.ranked)
    assert all(c.constexprs["HEAD_DIM"] == 64 for c in rec.ranked)


def test_whole_row_block_needs_the_bucket() -> None:
    k = _kernel("examples/softmax.py", "softmax_kernel")
    assert recommend(k, SPECS["h100"], {"n_rows": 4096}).reason
    rec = recommend(k, SPECS["h100"], {"n_rows": 4096, "n_cols": 4096, "BLOCK_SIZE": 4096})
    assert rec.ranked and all(c.constexprs["BLOCK_SIZE"] == 4096 for c in rec.ranked)


def test_cli_writes_store_and_detects_stale(tmp_path: Path) -> None:
    from kernlint.cli import main
    out = tmp_path / "kernlint.lock.json"
    import io
    buf = io.StringIO()
    src = tmp_path / "mm.py"
    src.write_text((ROOT / "examples/matmul.py").read_text())
    assert main(["recommend", str(src), "--target", "h100", "--shape", "M=4096,N=4096,K=512", "-o", str(out)], buf) == 0
    entries = read_store(str(out))
    assert len(entries) == 1 and entries[0].bucket == "K=512,M=4096,N=4096"
    data = json.loads(out.read_text())
    assert data["schema"] == "kernlint.lock/1" and data["entries"][0]["rationale"]
    module, qualname, digest = split_id(entries[0].kernel)
    assert stale_entries(entries, {(module, qualname): digest}) == []
    assert stale_entries(entries, {(module, qualname): "sha256:other"})[0][1].startswith("kernel source changed")


@pytest.mark.parametrize("argv, message", [
    (["--shape", "foo"], "bad --shape item 'foo'"),
    (["--shape", "M=abc"], "--shape M='abc': sizes must be non-negative integers"),
    (["--target", "zz"], "unknown target 'zz'"),
    (["-o", "/nonexistent-dir/x.json"], "cannot write /nonexistent-dir/x.json"),
    # a name no kernel reads: stored as bucket Q=8, which the shim could never match
    (["--shape", "Q=5"], "--shape Q: not a size of any kernel searched; valid names: "),
    (["--shape", "n_elements=1024,n_elements=4096"], "n_elements given twice"),   # the last one silently won
    (["--top-k", "0"], ""),
])
def test_cli_usage_errors_are_one_line_and_exit_two(argv: list[str], message: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # each used to be a Python traceback with exit 1
    import io

    from kernlint.cli import main
    assert main(["recommend", str(ROOT / "examples/vector_add.py"), *argv], io.StringIO()) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_cli_shapes_in_one_bucket_are_searched_once_and_a_tile_must_be_a_power_of_two(tmp_path: Path) -> None:
    import io
    import json

    from kernlint.cli import main
    out, store = io.StringIO(), tmp_path / "s.json"
    vadd = str(ROOT / "examples/vector_add.py")
    assert main(["recommend", vadd, "--shape", "n_elements=1000", "--shape", "n_elements=1024", "-o", str(store)],
                out) == 0
    assert "searched once" in out.getvalue() and "is the bucket n_elements=1024" in out.getvalue()
    assert [e["bucket"] for e in json.loads(store.read_text())["entries"]] == ["n_elements=1024"]  # was two
    out = io.StringIO()
    assert main(["recommend", vadd, "--shape", "BLOCK_SIZE=1000"], out) == 0
    assert "no recommendation: --shape BLOCK_SIZE=1000" in out.getvalue()   # it was ranked and stored


def test_cli_says_which_files_it_could_not_search(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    from kernlint.cli import main
    (tmp_path / "broken.py").write_text("def f(:\n")
    assert main(["recommend", str(tmp_path / "broken.py"), str(ROOT / "examples/vector_add.py")], io.StringIO()) == 1
    assert "broken.py:1: KL001 syntax error" in capsys.readouterr().err


def test_cli_arg_types_refine_the_estimates_and_values_are_left_to_verify(tmp_path: Path) -> None:
    # fp32 operands instead of the default fp16: every pipelined operand buffer doubles, so the store's
    # shared-memory estimate for the same config cannot stay the same; eps=1e-5 is a value, not a type
    import io

    from kernlint.cli import main

    def first_entry(*extra: str) -> dict:  # type: ignore[type-arg]
        out = tmp_path / f"lock{len(extra)}.json"
        assert main(["recommend", str(ROOT / "examples/matmul.py"), "--target", "h100", "--shape",
                     "M=4096,N=4096,K=4096", "-o", str(out), *extra], io.StringIO()) == 0
        return json.loads(out.read_text())["entries"][0]

    fp16 = first_entry()
    fp32 = first_entry("--arg", "*=*fp32", "--arg", "eps=1e-5")
    assert fp16["estimate"] != fp32["estimate"]


def test_arg_values_are_types_for_the_analysis_except_a_unit_stride() -> None:
    # `--arg K=64` is a --verify input size: the analysis must not freeze the K loop to one pass (it would
    # drop the operand pipeline and recommend configs that cannot fit); only 1 is specialised by Triton
    from kernlint.recommend.cli import analysis_arg_types
    got = analysis_arg_types(["K=64", "stride_ak=1", "x_ptr=*fp16:16", "eps=1e-5", "*=*bf16", "FLAG=True"])
    assert got == {"K": "i32", "stride_ak": "1", "x_ptr": "*fp16", "eps": "fp32", "*": "*bf16", "FLAG": "True"}
    with pytest.raises(ValueError, match="x_ptr"):
        analysis_arg_types(["x_ptr=*nope"])


def test_jit_helpers_that_return_values_get_no_entry(tmp_path: Path) -> None:
    # examples/kernel_utils.py's grouped_pid/silu are called by kernels in other files; searched alone, they
    # used to get store entries of their own (grouped_pid at 32 warps). A jit function that returns a value is
    # a device function unless something launches it: not a kernel, so nothing is searched.
    import io

    from kernlint.pipeline.api import Settings, lint_paths
    from kernlint.cli import main
    buf = io.StringIO()
    out = tmp_path / "lock.json"
    assert main(["recommend", str(ROOT / "examples/kernel_utils.py"), "-o", str(out)], buf) == 0
    assert read_store(str(out)) == [] and "grouped_pid" not in buf.getvalue()
    result = lint_paths([str(ROOT / "examples/kernel_utils.py")], Settings(targets=("h100",)))
    assert [k for f in result.files for k in f.kernels] == []


def test_an_internal_error_on_one_kernel_is_reported_and_the_others_are_searched(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # fla's prepare_position_ids_kernel divided by zero in the time model (a loop it thought moved no bytes):
    # the whole run died with a traceback. Now the kernel says so, the next file is searched, and exit is 2.
    import io

    from kernlint.cli import main
    from kernlint.recommend import core
    real = core.recommend

    def flaky(kernel, *a, **kw):  # type: ignore[no-untyped-def]
        if kernel.jit.name == "vector_add_kernel":
            raise ZeroDivisionError("float division by zero")
        return real(kernel, *a, **kw)

    monkeypatch.setattr(core, "recommend", flaky)
    buf = io.StringIO()
    code = main(["recommend", str(ROOT / "examples/vector_add.py"), str(ROOT / "examples/swiglu.py"),
                 "--shape", "n_elements=4096,n_rows=4096,n_cols=4096"], buf)
    assert code == 2
    text = buf.getvalue()
    assert "vector_add_kernel [h100]\n  not searched: internal error ZeroDivisionError" in text
    assert "swiglu_fwd_kernel [h100]" in text and "1. BLOCK_SIZE=" in text
    assert "internal error ZeroDivisionError: float division by zero" in capsys.readouterr().err


def test_a_local_bound_by_tuple_unpacking_is_unknown_not_a_default(tmp_path: Path) -> None:
    from kernlint.frontend.host_facts import read_kernel_source, trip_count
    src = tmp_path / "k.py"
    src.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def pos(y, cu, B: tl.constexpr):\n"
        "    bos, eos = tl.load(cu), tl.load(cu + 1)\n"
        "    T = eos - bos\n"
        "    for i in range(0, tl.cdiv(T, B) * B, B):\n"
        "        tl.store(y + bos + i + tl.arange(0, B), i)\n")
    from kernlint.recommend.core import bucket_env
    ks = read_kernel_source(str(src), "pos")
    res = lint_paths([str(src)], Settings(targets=("h100",)))
    env = bucket_env(res.files[0].kernels[0], ks, {"B": 128})
    # T comes from two loads: its trip count is unknown (the recommender then says "assumed 8"). Before, bos
    # and eos were not seen as locals, both took the default shape, and T = 0 gave a loop of 0 trips.
    assert "bos" not in env and "eos" not in env
    assert trip_count(ks, next(iter(ks.loops)), env) is None
