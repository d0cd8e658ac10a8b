"""The CLI's edges: explain within the terminal's width, NO_COLOR/FORCE_COLOR, `--config` typos and
non-integers, unknown estimates never reported as a pass, a wrong kernel name, recommend's progress line."""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from kernlint.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ANSI_COLOR = re.compile(r"\x1b\[[0-9;]*3[0-7]m")   # a foreground color, not just bold

VECTOR_ADD = (EXAMPLES / "vector_add.py").read_text()

# BLOCK is whatever next_power_of_2 returns at run time: no estimate can be made, and none is guessed
UNKNOWN_BLOCK = '''import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def scale(x, n):
    block = triton.next_power_of_2(n)
    scale_kernel[(1,)](x, n, BLOCK=block)
'''


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main(argv, out)
    return code, out.getvalue(), capsys.readouterr().err


@pytest.mark.parametrize("columns", [100, 80])
def test_explain_fits_the_terminal_width(columns: int, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = _run(["explain", str(EXAMPLES / "matmul.py"), "--target", "h100,b200"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= columns, [line for line in lines if len(line) > columns]
    # configs are numbered above the table, whole; rows refer to them and no cell is cut short with "…"
    assert any(line.startswith("[1] BLOCK_M=128, BLOCK_N=256, BLOCK_K=64") for line in lines)
    assert "…" not in out
    assert sum(1 for line in lines if re.match(r"\s*\[1\]\s+(h100|b200)\s", line)) == 2


def test_explain_in_a_pipe_keeps_one_row_per_line(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    code, out, _ = _run(["explain", str(EXAMPLES / "vector_add.py")], capsys)
    assert code == 0
    rows = [line for line in out.splitlines() if "BLOCK_SIZE=1024" in line]
    assert len(rows) == 1 and "h100" in rows[0] and "18 / 255" in rows[0]


def test_force_color_and_no_color(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "vector_add.py").write_text(VECTOR_ADD)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    code, out, _ = _run(["check", "--no-cache", "vector_add.py"], capsys)
    assert code == 0 and ANSI_COLOR.search(out), repr(out)
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, _ = _run(["check", "--no-cache", "vector_add.py"], capsys)
    assert code == 0 and not ANSI_COLOR.search(out) and "All checks passed" in out, repr(out)


def test_check_config_typo_lists_the_constexprs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "vector_add.py").write_text(VECTOR_ADD)
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(["check", "vector_add.py", "--config", "BLOK_SIZE=128"], capsys)
    assert code == 2 and "All checks passed" not in out
    assert "unknown constexpr BLOK_SIZE; kernel vector_add_kernel has BLOCK_SIZE" in err
    # the right name is accepted and estimated (the launch config and the --config one)
    code, out, err = _run(["check", "vector_add.py", "--config", "BLOCK_SIZE=128"], capsys)
    assert code == 0 and "2 estimate(s)" in out, out + err


@pytest.mark.parametrize("command", ["check", "explain"])
def test_config_value_that_is_not_an_integer(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "vector_add.py").write_text(VECTOR_ADD)
    monkeypatch.chdir(tmp_path)
    code, _, err = _run([command, "vector_add.py", "--config", "BLOCK_SIZE=abc"], capsys)
    assert code == 2 and "--config BLOCK_SIZE=abc: not an integer" in err


def test_unknown_estimates_are_not_a_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "scale.py").write_text(UNKNOWN_BLOCK)
    monkeypatch.chdir(tmp_path)
    # first run fills the cache, the second reads it, -j 2 sends counts across processes: the same summary
    for argv in (["check", "scale.py"], ["check", "scale.py"], ["check", "-j", "2", "--no-cache", "scale.py"],
                 ["check", "--output-format", "concise", "scale.py"]):
        code, out, _ = _run(argv, capsys)
        assert code == 0
        assert "All checks passed" not in out, (argv, out)
        assert "1 of 1 estimate(s) unknown: scale_kernel: BLOCK unknown" in out, (argv, out)


def test_wrong_kernel_name_lists_the_kernels_found(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["explain", f"{EXAMPLES / 'batched_matmul.py'}::nope"], capsys)
    assert code == 2
    assert "no Triton kernel 'nope'" in err and "kernels found: bmm_kernel, bmm_fixed_kernel" in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("tty", [True, False])
def test_recommend_progress_only_on_a_terminal(tty: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.py").write_text(VECTOR_ADD)
    (tmp_path / "b.py").write_text(VECTOR_ADD.replace("vector_add_kernel", "vector_add_b_kernel"))
    err = _Terminal() if tty else io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    out = io.StringIO()
    assert main(["recommend", str(tmp_path), "--target", "h100,b200", "--top-k", "1"], out) == 0
    progress = re.findall(r"\[(\d+)/(\d+)\] (\S+) \[(\w+)\]", err.getvalue())
    if not tty:
        assert progress == [] and err.getvalue() == ""
        return
    # one step per kernel × target, counted up to the total, then the line is cleared
    assert [(int(n), int(total)) for n, total, _, _ in progress] == [(i, 4) for i in range(1, 5)]
    assert {(Path(p.split("::")[0]).name, t) for _, _, p, t in progress} == {
        ("a.py", "h100"), ("a.py", "b200"), ("b.py", "h100"), ("b.py", "b200")}
    assert err.getvalue().endswith("\r\x1b[K")
    assert "\x1b" not in out.getvalue()
