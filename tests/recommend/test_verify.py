"""`recommend --verify` and the author's-space marking (issue 4 item 1).

Marking tests are pure (no Triton). The interpreter tests need an interpreter with triton and torch: this one,
or the one named by KERNLINT_VERIFY_PYTHON (e.g. a CPU torch + triton venv); they are skipped otherwise.
"""
from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest

from kernlint.pipeline.api import Settings, lint_paths
from kernlint.hardware.specs import SPECS
from kernlint.recommend.core import recommend
from kernlint.core.config_store import Entry, read_store, write_store

ROOT = Path(__file__).resolve().parents[2]

# Deliberately broken: the copy of each row's first 256 values is one BLOCK_SIZE-wide masked store, so it
# is complete only when BLOCK_SIZE >= 256. The author launches BLOCK_SIZE = max(256, ...) and never sees it;
# the looped row sum accepts any block, so the search offers 128 (outside the author's space).
BROKEN = '''
import torch
import triton
import triton.language as tl


@triton.jit
def rowsum_head_kernel(x_ptr, sum_ptr, head_ptr, row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * row_stride
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(sum_ptr + row, tl.sum(acc, axis=0))
    head = tl.arange(0, BLOCK_SIZE)
    tl.store(head_ptr + row * 256 + head, tl.load(x_row + head), mask=head < 256)


def rowsum_head(x):
    n_rows, n_cols = x.shape
    sums = torch.empty(n_rows, dtype=x.dtype, device=x.device)
    head = torch.empty((n_rows, 256), dtype=x.dtype, device=x.device)
    BLOCK_SIZE = max(256, min(4096, triton.next_power_of_2(n_cols)))
    rowsum_head_kernel[(n_rows,)](x, sums, head, x.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE)
    return sums, head
'''


def _kernel(path: Path, name: str):
    res = lint_paths([str(path)], Settings(targets=("h100",)))
    return next(k for f in res.files for k in f.kernels if k.jit.name == name)


# ---------------------------------------------------------------------------------------------- marking

def test_looped_launch_block_is_outside_except_the_launch_value() -> None:
    # rmsnorm launches BLOCK_SIZE = min(4096, next_power_of_2(n_cols)): at n_cols=4096 the author runs 4096;
    # the looped reduction lets the search try 128..4096, all but 4096 outside the author's space
    k = _kernel(ROOT / "examples/rmsnorm.py", "rmsnorm_fwd_kernel")
    rec = recommend(k, SPECS["h100"], {"n_cols": 4096}, top_k=500)
    blocks = {c.constexprs["BLOCK_SIZE"]: c.in_author_space for c in rec.ranked}
    assert blocks[4096] is True
    assert {b for b, inside in blocks.items() if not inside} == set(blocks) - {4096} != set()
    c = next(c for c in rec.ranked if not c.in_author_space)
    assert c.outside == {"BLOCK_SIZE": "4096"}
    assert c.space_note().startswith(f"outside the author's space: BLOCK_SIZE={c.constexprs['BLOCK_SIZE']} "
                                     "(author: 4096); not verified")


def test_autotuned_tile_values_the_author_never_uses_are_outside() -> None:
    # matmul's autotune configs use BLOCK_M ∈ {64, 128, 256}, BLOCK_N ∈ {32, 64, 128, 256}, BLOCK_K ∈ {32, 64}
    # (examples/matmul.py); warps and stages never change results, so they never make a config outside
    k = _kernel(ROOT / "examples/matmul.py", "matmul_kernel")
    text = (ROOT / "examples/matmul.py").read_text()
    rec = recommend(k, SPECS["h100"], {"M": 4096, "N": 4096, "K": 4096}, top_k=2000)
    import re
    used = {name: {int(v) for v in re.findall(rf'"{name}": (\d+)', text)} for name in ("BLOCK_M", "BLOCK_N", "BLOCK_K")}
    for c in rec.ranked:
        expected = all(c.constexprs[n] in used[n] for n in used)
        assert c.in_author_space is expected, c.label()
    assert any(c.in_author_space for c in rec.ranked)


def test_swiglu_stays_inside_the_author_values() -> None:
    k = _kernel(ROOT / "examples/swiglu.py", "swiglu_fwd_kernel")
    rec = recommend(k, SPECS["h100"], {"n_cols": 4096}, top_k=500)
    assert rec.ranked and all(c.in_author_space for c in rec.ranked)   # 1024/2048/4096 are all the author's


def test_store_keeps_the_space_field_and_reads_old_entries(tmp_path: Path) -> None:
    path = tmp_path / "lock.json"
    new = Entry("m:k@sha256:0", "h100", "n=1", {"kwargs": {"B": 8}, "num_warps": 4, "num_stages": 1}, {}, "r",
                {"in_author_space": False, "outside": {"B": "16"}, "verified": "verified: same results"})
    old = Entry("m:j@sha256:0", "h100", "n=1", {"kwargs": {}, "num_warps": 4, "num_stages": 1}, {}, "r")
    write_store(str(path), [new, old], "test")
    data = json.loads(path.read_text())
    assert "space" not in data["entries"][0] and data["entries"][1]["space"]["in_author_space"] is False
    back = {e.kernel: e for e in read_store(str(path))}
    assert back["m:k@sha256:0"].space == new.space and back["m:j@sha256:0"].space is None


# ---------------------------------------------------------------------------------------------- interpreter

def _verifying_python() -> str | None:
    import subprocess
    for py in (os.environ.get("KERNLINT_VERIFY_PYTHON"), sys.executable):
        if py and subprocess.run([py, "-c", "import triton, torch"], capture_output=True).returncode == 0:
            return py
    return None


PY = _verifying_python()
needs_interpreter = pytest.mark.skipif(PY is None, reason="no interpreter with triton and torch "
                                                          "(set KERNLINT_VERIFY_PYTHON)")


def _only(rec, blocks: set[int]):
    """Keep one candidate per BLOCK_SIZE of `blocks` (warps/stages do not change what is computed)."""
    seen: dict[int, object] = {}
    for c in rec.ranked:
        seen.setdefault(c.constexprs["BLOCK_SIZE"], c)
    rec.ranked = [seen[b] for b in sorted(blocks)]
    return rec


@needs_interpreter
def test_correct_outside_config_passes_on_rmsnorm() -> None:
    from kernlint.recommend.verify import Verifier
    k = _kernel(ROOT / "examples/rmsnorm.py", "rmsnorm_fwd_kernel")
    rec = _only(recommend(k, SPECS["h100"], {"n_cols": 4096}, top_k=500), {128, 512, 4096})
    Verifier(PY, {}).check(k, rec, top_k=5)
    assert [c.constexprs["BLOCK_SIZE"] for c in rec.ranked] == [128, 512, 4096]
    assert rec.ranked[0].verified and rec.ranked[1].verified and rec.ranked[2].verified is None  # 4096: inside
    note = rec.notes[0]
    assert "author's config (BLOCK_SIZE=4096)" in note and "n_cols=4097" in note, note   # 4096 + 1: above every block, off 16


@needs_interpreter
def test_broken_outside_config_is_dropped(tmp_path: Path) -> None:
    from kernlint.recommend.verify import Verifier
    src = tmp_path / "rowsum_head.py"
    src.write_text(BROKEN)
    k = _kernel(src, "rowsum_head_kernel")
    rec = recommend(k, SPECS["h100"], {"n_cols": 4096}, top_k=500)
    assert {c.constexprs["BLOCK_SIZE"] for c in rec.ranked if not c.in_author_space} >= {128, 256}
    rec = _only(rec, {128, 256, 4096})
    Verifier(PY, {}).check(k, rec, top_k=5)
    assert [c.constexprs["BLOCK_SIZE"] for c in rec.ranked] == [256, 4096]   # 128 copies half the head
    dropped = [n for n in rec.notes if n.startswith("dropped")]
    assert len(dropped) == 1 and "BLOCK_SIZE=128" in dropped[0] and "head_ptr" in dropped[0], rec.notes
    assert sum(v for r, v in rec.rejected.items() if r.startswith("--verify")) == 1


@needs_interpreter
def test_nan_from_a_small_block_is_dropped(tmp_path: Path) -> None:
    from kernlint.recommend.verify import Verifier
    src = tmp_path / "rowsum_head.py"
    # the mean of columns 128..255 divides by the count of those columns inside the block: 0/0 = NaN when
    # BLOCK_SIZE = 128 holds none of them
    src.write_text(BROKEN.replace(
        "    tl.store(head_ptr + row * 256 + head, tl.load(x_row + head), mask=head < 256)",
        "    sel = (head >= 128) & (head < 256)\n"
        "    part = tl.load(x_row + head, mask=sel, other=0.0).to(tl.float32)\n"
        "    tl.store(head_ptr + row, tl.sum(part, axis=0) / tl.sum(sel.to(tl.float32), axis=0))"))
    k = _kernel(src, "rowsum_head_kernel")
    rec = _only(recommend(k, SPECS["h100"], {"n_cols": 4096}, top_k=500), {128, 256, 4096})
    Verifier(PY, {}).check(k, rec, top_k=5)
    assert [c.constexprs["BLOCK_SIZE"] for c in rec.ranked] == [256, 4096]
    assert any(n.startswith("dropped BLOCK_SIZE=128") and ": NaN: 3 elements of head_ptr" in n
               for n in rec.notes), rec.notes     # one mean per row, 3 rows


@needs_interpreter
def test_unverifiable_kernel_keeps_only_inside_configs(tmp_path: Path) -> None:
    from kernlint.recommend.verify import Verifier
    src = tmp_path / "rowsum_head.py"
    # the launch grid is a host variable kernlint cannot evaluate: no inputs, so no outside configs
    src.write_text(BROKEN.replace("[(n_rows,)]", "[grid_of(x)]"))
    k = _kernel(src, "rowsum_head_kernel")
    rec = _only(recommend(k, SPECS["h100"], {"n_cols": 4096}, top_k=500), {128, 256, 4096})
    Verifier(PY, {}).check(k, rec, top_k=5)
    assert [c.constexprs["BLOCK_SIZE"] for c in rec.ranked] == [4096]
    assert rec.notes[0].startswith("not verified: the launch grid does not evaluate"), rec.notes


@needs_interpreter
def test_cli_verify_writes_verified_entry(tmp_path: Path) -> None:
    from kernlint.cli import main
    src = tmp_path / "rowsum_head.py"
    src.write_text(BROKEN)
    out = tmp_path / "lock.json"
    buf = io.StringIO()
    assert main(["recommend", str(src), "--shape", "n_cols=4096", "--top-k", "2", "--verify",
                 "--verify-python", PY, "-o", str(out)], buf) == 0
    text = buf.getvalue()
    assert "verified under TRITON_INTERPRET=1" in text, text
    for line in text.splitlines():          # every offered outside config says it was verified
        if "outside the author's space" in line:
            assert "; verified: same results" in line, line
    entry = read_store(str(out))[0]
    assert entry.space is None or entry.space["verified"].startswith("verified")


def test_verify_without_triton_is_one_line(tmp_path: Path) -> None:
    from kernlint.cli import main
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexec " + sys.executable + " -S -c 'import json,sys; sys.stdin.read(); "
                    "print(json.dumps({\"error\": \"No module named triton\"}))'\n")
    fake.chmod(0o755)
    err = io.StringIO()
    old, sys.stderr = sys.stderr, err
    try:
        code = main(["recommend", str(ROOT / "examples/rmsnorm.py"), "--verify", "--verify-python", str(fake)],
                    io.StringIO())
    finally:
        sys.stderr = old
    assert code == 2
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and "--verify needs triton and torch" in lines[0] and "No module named" in lines[0]


def test_launch_site_assert_bounds_the_search(tmp_path: Path) -> None:
    # the launching function asserts the block it passes (`BLOCK_SIZE=block`) is at least 256: candidates
    # below 256 are rejected statically, under the host name's constraint, before any --verify
    src = tmp_path / "rowsum_head.py"
    src.write_text(BROKEN.replace(
        "    BLOCK_SIZE = max(256, min(4096, triton.next_power_of_2(n_cols)))\n",
        "    block = max(256, min(4096, triton.next_power_of_2(n_cols)))\n    assert block >= 256\n").replace(
        "BLOCK_SIZE=BLOCK_SIZE)", "BLOCK_SIZE=block)"))
    k = _kernel(src, "rowsum_head_kernel")
    rec = recommend(k, SPECS["h100"], {"n_cols": 4096}, top_k=500)
    assert rec.ranked and min(c.constexprs["BLOCK_SIZE"] for c in rec.ranked) == 256
    assert rec.rejected["launch-site assert block >= 256"] == 1     # BLOCK_SIZE=128, the only one below
    assert {c.constexprs["BLOCK_SIZE"] for c in rec.ranked if c.in_author_space} == {4096}   # launch value
