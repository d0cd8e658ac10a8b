"""`calibrate --sweep` adds only configs that can compile, and says in one line what it held or left out.

Found by a review: a block size kernlint has no value for (softmax's host-computed BLOCK_SIZE), one that is not
a power-of-two tile (`tl.arange(0, ROW // 3)`), one a `tl.static_assert` bounds, or one fixed with --arg was
swept anyway, filling the table with failed (or duplicate) rows. All but the last test need no Triton:
`prepare` builds the rows and their compile requests without compiling.
"""
from __future__ import annotations

import importlib.util
import io
import textwrap
from pathlib import Path

import pytest

from kernlint.calibrate.session import prepare

ROOT = Path(__file__).resolve().parents[2]

# ROW is a row of three channels: its tile is ROW // 3 wide (64 at ROW=192), so ROW is not a power-of-two
# tile and no power of two near it gives a legal `tl.arange`; BLOCK is a plain tile bounded by an assert.
TILES = textwrap.dedent("""
    import triton
    import triton.language as tl


    @triton.jit
    def tiles_kernel(x_ptr, n, ROW: tl.constexpr, BLOCK: tl.constexpr):
        tl.static_assert(BLOCK <= 512, "BLOCK <= 512")
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        cols = tl.arange(0, ROW // 3)
        ptrs = x_ptr + rows[:, None] * (ROW // 3) + cols[None, :]
        x = tl.load(ptrs, mask=rows[:, None] < n)
        tl.store(ptrs, x * 2, mask=rows[:, None] < n)


    def launch(x):
        tiles_kernel[(1,)](x, x.shape[0], ROW=192, BLOCK=256)
""")


@pytest.fixture(autouse=True)
def _in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def _sweep_rows(work: list) -> list:  # type: ignore[type-arg]
    return [(row, task) for row, task in work if row.origin == "sweep"]


def test_an_unknown_block_size_adds_no_rows_and_says_which_value_is_missing() -> None:
    # softmax's BLOCK_SIZE is next_power_of_2(n_cols) at the launch: every swept config lacked it, so each
    # was a "not compiled: BLOCK_SIZE: no value" row
    cal, work = prepare("examples/softmax.py", sweep=True)
    assert _sweep_rows(work) == []
    assert len(work) == 1 and work[0][1] is None          # the author's row still says why it is not compiled
    (note,) = cal.notes
    assert "\n" not in note and note.startswith("--sweep added no configs") and "--config BLOCK_SIZE=" in note


def test_a_value_given_with_config_is_swept_around() -> None:
    cal, work = prepare("examples/softmax.py", configs=({"BLOCK_SIZE": 1024},), sweep=True)
    swept = _sweep_rows(work)
    assert swept and all(task is not None for _, task in swept)
    assert {row.point.constexprs["BLOCK_SIZE"] for row, _ in swept} == {256, 512, 1024, 2048, 4096}
    assert cal.notes == []


def test_a_tile_that_is_not_a_power_of_two_is_held_and_an_assert_bound_is_kept(tmp_path: Path) -> None:
    (tmp_path / "tiles.py").write_text(TILES)
    cal, work = prepare(str(tmp_path / "tiles.py"), sweep=True)
    swept = _sweep_rows(work)
    assert swept and all(task is not None for _, task in swept)
    assert {row.point.constexprs["ROW"] for row, _ in swept} == {192}
    assert {row.point.constexprs["BLOCK"] for row, _ in swept} == {64, 128, 256, 512}   # not 1024
    assert {row.point.num_warps for row, _ in swept} == {2, 4, 8}
    (note,) = cal.notes
    assert "held ROW (192 is not a power of two)" in note
    assert "left out BLOCK=1024 (static_assert(BLOCK <= 512))" in note


def test_a_tile_whose_shape_breaks_at_other_values_is_held(tmp_path: Path) -> None:
    # BLOCK=64 is a power of two, but the tile is BLOCK - 32: 16, 0, 96 and 224 are not tiles Triton accepts
    (tmp_path / "off.py").write_text(TILES.replace("ROW // 3", "BLOCK - 32").replace("ROW=192, BLOCK=256",
                                                                                      "ROW=3, BLOCK=64"))
    cal, work = prepare(str(tmp_path / "off.py"), sweep=True)
    swept = _sweep_rows(work)
    assert swept and {row.point.constexprs["BLOCK"] for row, _ in swept} == {64}
    assert "held BLOCK (tile (BLOCK - 32) would be" in cal.notes[0]


def test_a_block_size_fixed_with_arg_is_held_not_swept_into_duplicates() -> None:
    cal, work = prepare("examples/vector_add.py", sweep=True, args={"BLOCK_SIZE": "1024"})
    labels = [row.config_label for row, _ in work]
    assert len(labels) == len(set(labels)) == 3           # the launch config and num_warps 2 and 8
    assert cal.notes == ["--sweep held BLOCK_SIZE (fixed with --arg)"]


def test_a_kernel_the_sweep_understands_is_swept_as_before() -> None:
    cal, work = prepare("examples/vector_add.py", sweep=True)
    assert {row.point.constexprs["BLOCK_SIZE"] for row, _ in _sweep_rows(work)} == {256, 512, 1024, 2048, 4096}
    assert len(_sweep_rows(work)) == 14 and cal.notes == []


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs Triton (live compiles)")
def test_every_swept_row_compiles_and_the_table_says_what_was_held(tmp_path: Path) -> None:
    from kernlint.cli import main

    (tmp_path / "tiles.py").write_text(TILES)
    out = io.StringIO()
    assert main(["calibrate", str(tmp_path / "tiles.py"), "--sweep", "--no-progress", "-j", "4",
                 "--cache-dir", str(tmp_path / "cache")], out) == 0
    text = out.getvalue()
    assert "failed" not in text and "12/12 compiled" in text      # the launch config and 11 swept ones
    assert "--sweep held ROW (192 is not a power of two); left out BLOCK=1024" in text
