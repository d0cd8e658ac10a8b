"""`kernlint check --diff` / `--fix [--unsafe-fixes]`: before/after sources in tests/fix/cases/.

The launch case's after-file has `{STAGES}` where the fix writes the model's value: the test checks that
value by the model's own verdicts (fits, and one more stage does not), never by a number written here.
"""
from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

from kernlint.pipeline.api import Settings, lint_paths
from kernlint.cli import main
from kernlint.core.diagnostic import Severity
from kernlint.fix import codemod

CASES = Path(__file__).parent / "cases"


def _copy(tmp_path: Path, name: str) -> Path:
    dst = tmp_path / f"{name}.py"
    shutil.copyfile(CASES / f"{name}_before.py", dst)
    return dst


def _check(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["check", "--no-cache", *argv], out), out.getvalue()


def _codes(path: Path, targets: tuple[str, ...] = ("h100",)) -> list[tuple[int, str]]:
    result = lint_paths([str(path)], Settings(targets=targets))
    return [(d.span.start.line, d.code) for d in result.diagnostics]


@pytest.mark.parametrize("name", ["decorator_list", "module_list", "helion_list"])
def test_drops_infeasible_autotune_configs(tmp_path: Path, name: str) -> None:
    path = _copy(tmp_path, name)
    assert any(c == "KL401" for _, c in _codes(path))
    code, _ = _check(str(path), "--fix", "--unsafe-fixes", "--select", "KL401")
    after = path.read_bytes()
    assert after == (CASES / f"{name}_after.py").read_bytes()     # comments and layout kept byte for byte
    # every infeasible candidate here has feasible siblings, so its KL401 is info (the autotuner drops it):
    # --fix --unsafe-fixes still removes the listed ones, and what is left does not fail the run
    assert code == 0
    left = [d for d in lint_paths([str(path)], Settings(targets=("h100",), select=("KL401",))).diagnostics]
    if name == "module_list":
        # the comprehension-generated configs of module_list are not edited and keep their (info) finding
        assert [(d.span.start.line, d.severity) for d in left] == [(32, Severity.INFO)]
    else:
        assert left == []
    # idempotent: a second run changes nothing and does not even rewrite the file
    mtime = path.stat().st_mtime_ns
    _check(str(path), "--fix", "--unsafe-fixes", "--select", "KL401")
    assert path.read_bytes() == after and path.stat().st_mtime_ns == mtime


def test_lowers_launch_num_stages_to_largest_that_fits(tmp_path: Path) -> None:
    path = _copy(tmp_path, "launch_stages")
    assert (29, "KL101") in _codes(path)    # the launch call starts there; the literal is 2 lines down
    assert _check(str(path), "--fix", "--unsafe-fixes")[0] in (0, 1)
    text = path.read_text()
    template = (CASES / "launch_stages_after.py").read_text()
    prefix, suffix = template.split("{STAGES}")
    assert text.startswith(prefix) and text.endswith(suffix)
    stages = int(text[len(prefix):len(text) - len(suffix)])
    assert 1 <= stages < 6
    assert not any(c == "KL101" for _, c in _codes(path))              # fits now
    path.write_text(prefix + str(stages + 1) + suffix)                  # and is the largest that fits
    assert any(c == "KL101" for _, c in _codes(path))


def test_diff_shows_and_changes_nothing(tmp_path: Path) -> None:
    path = _copy(tmp_path, "decorator_list")
    before = path.read_bytes()
    code, out = _check(str(path), "--diff")
    assert code == 1 and path.read_bytes() == before
    assert out.startswith(f"--- {path}\n+++ {path}\n")
    assert sum(ln.startswith("-        triton.Config") for ln in out.splitlines()) == 2
    assert "+" not in "".join(ln[0] for ln in out.splitlines()[2:] if ln)   # only removals


def test_fix_without_unsafe_applies_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _copy(tmp_path, "launch_stages")
    before = path.read_bytes()
    code, out = _check(str(path), "--fix")
    assert code == 1 and path.read_bytes() == before and "KL101" in out
    assert "unsafe" in capsys.readouterr().err


def test_clean_file_is_left_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / "clean.py"
    # CRLF and a trailing space: a rewrite through any normalising printer would show
    path.write_bytes((CASES / "decorator_list_after.py").read_bytes().replace(b"\n", b"\r\n") + b"x = 1 \r\n")
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns
    assert _check(str(path), "--diff") == (0, "")
    assert _check(str(path), "--fix", "--unsafe-fixes")[0] == 0
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime


def test_crlf_file_keeps_its_newlines(tmp_path: Path) -> None:
    path = _copy(tmp_path, "decorator_list")
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    _check(str(path), "--fix", "--unsafe-fixes")
    assert path.read_bytes() == (CASES / "decorator_list_after.py").read_bytes().replace(b"\n", b"\r\n")


def test_refuses_to_write_what_does_not_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = _copy(tmp_path, "decorator_list")
    before = path.read_bytes()

    real = codemod.reparse

    def broken(new: bytes, where: str, old: bytes | None = None) -> None:
        real(new + b"\n)(\n", where, old)     # as if the edit had left an unbalanced bracket behind

    monkeypatch.setattr(codemod, "reparse", broken)
    _check(str(path), "--fix", "--unsafe-fixes")
    assert path.read_bytes() == before
    assert "does not parse" in capsys.readouterr().err


def test_keeps_configs_that_fit_another_target_and_never_empties(tmp_path: Path) -> None:
    path = _copy(tmp_path, "decorator_list")
    original = path.read_text()
    # a config infeasible on only one of two targets stays (it still runs on the other GPU); the model
    # picks the num_stages at which the first config fits H100 but not A100 (fewer bytes per CTA)
    for stages in range(4, 9):
        path.write_text(original.replace("'BLOCK_N': 128, 'BLOCK_K': 64}, num_warps=8, num_stages=4)",
                                         f"'BLOCK_N': 128, 'BLOCK_K': 64}}, num_warps=8, num_stages={stages})"))
        on = {t: {ln for ln, c in _codes(path, (t,)) if c == "KL401"} for t in ("h100", "a100")}
        if on["a100"] - on["h100"]:
            break
    else:
        pytest.skip("the model has no config here that fits H100 but not A100")
    _check(str(path), "--fix", "--unsafe-fixes", "--target", "h100,a100")
    assert not {ln for ln, c in _codes(path, ("h100",)) if c == "KL401"}
    assert any(c == "KL401" for _, c in _codes(path, ("a100",)))       # the A100-only one was kept
    # a list whose every config is infeasible is not emptied
    lone = tmp_path / "lone.py"
    text = (CASES / "decorator_list_before.py").read_text()
    start, end = text.index("        triton.Config({'BLOCK_M': 128"), text.index("        triton.Config({'BLOCK_M': 256")
    lone.write_text(text[:start] + text[end:].replace(
        "        # skinny shapes\n        triton.Config({'BLOCK_M': 64,  'BLOCK_N': 64, 'BLOCK_K': 32},  num_warps=4, num_stages=3),\n", ""))
    before = lone.read_bytes()
    assert sum(c == "KL401" for _, c in _codes(lone)) == 2
    assert _check(str(lone), "--diff") == (0, "")
    assert lone.read_bytes() == before


def test_write_is_atomic_and_keeps_mode(tmp_path: Path) -> None:
    from kernlint.fix import write_atomic

    path = tmp_path / "k.py"
    path.write_text("x = 1\n")
    os.chmod(path, 0o754)
    write_atomic(str(path), b"x = 2\n")
    assert path.read_bytes() == b"x = 2\n" and (path.stat().st_mode & 0o777) == 0o754
    assert [p.name for p in tmp_path.iterdir()] == ["k.py"]               # no temp file left behind


def test_a_symlink_is_fixed_through_and_stays_a_link(tmp_path: Path) -> None:
    # os.replace on the link's own path turned it into a regular file and left the real file unfixed
    real = _copy(tmp_path, "decorator_list")
    link = tmp_path / "link.py"
    link.symlink_to(real.name)
    _check(str(link), "--fix", "--unsafe-fixes")
    assert link.is_symlink() and real.read_bytes() == (CASES / "decorator_list_after.py").read_bytes()


def test_read_only_files_are_not_rewritten_and_the_exit_code_says_so(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = _copy(tmp_path, "decorator_list")
    before = path.read_bytes()
    os.chmod(path, 0o444)
    code, _ = _check(str(path), "--fix", "--unsafe-fixes")
    assert code == 2 and path.read_bytes() == before and "read-only; not fixed" in capsys.readouterr().err


def test_the_diff_applies_with_patch_even_without_a_final_newline_or_with_a_form_feed(tmp_path: Path) -> None:
    import subprocess

    launch = (CASES / "launch_stages_before.py").read_text()          # the last line is the edited launch
    listed = (CASES / "decorator_list_before.py").read_text()
    for name, text in (("noeol", launch.rstrip("\n")),
                       ("ff", listed.replace("# too big", "# too\x0cbig\u2028here"))):
        path = tmp_path / f"{name}.py"
        path.write_text(text, newline="")
        cwd = os.getcwd()
        os.chdir(tmp_path)
        try:
            code, diff = _check(f"{name}.py", "--diff")
        finally:
            os.chdir(cwd)
        assert code == 1 and diff
        (tmp_path / f"{name}.diff").write_text(diff, newline="")
        done = subprocess.run(["patch", "-p0", "--dry-run", "-i", f"{name}.diff"], cwd=tmp_path,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr


def test_a_config_another_kernel_may_run_is_kept(tmp_path: Path) -> None:
    # the module-level list is shared with a kernel whose block size is unknown (launched with a computed
    # BLOCK_X): nothing says the config cannot run there, so it is not dropped
    src = (CASES / "module_list_before.py").read_text()
    extra = '''

@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def row_kernel(x_ptr, n, BLOCK_X: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr):
    offs = tl.arange(0, BLOCK_X)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
'''
    assert "CONFIGS = [" in src
    path = tmp_path / "shared.py"
    path.write_text(src + extra)
    assert _check(str(path), "--diff")[0] == 0


def test_dropping_the_last_config_keeps_the_comment_of_the_one_before(tmp_path: Path) -> None:
    src = (CASES / "decorator_list_before.py").read_text()
    kept = "triton.Config({'BLOCK_M': 64,  'BLOCK_N': 64, 'BLOCK_K': 32},  num_warps=4, num_stages=3),"
    assert kept in src
    path = tmp_path / "k.py"
    path.write_text(src.replace(kept, kept + "  # keep: the skinny-shape tile"))
    _check(str(path), "--fix", "--unsafe-fixes")
    fixed = path.read_text()
    assert "# keep: the skinny-shape tile" in fixed and "# last" not in fixed


def test_a_finding_no_fix_applies_to_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # "No fixes available." alone, next to a remaining KL101, explained nothing
    src = (CASES / "launch_stages_before.py").read_text()
    path = tmp_path / "k.py"
    path.write_text(src.replace("BLOCK_M=256, BLOCK_N=128, BLOCK_K=64", "BLOCK_M=256, BLOCK_N=256, BLOCK_K=256"))
    assert _check(str(path), "--diff")[0] == 0
    assert "KL101 not fixed: no smaller num_stages fits" in capsys.readouterr().err


def test_diff_goes_to_the_output_file(tmp_path: Path) -> None:
    path = _copy(tmp_path, "decorator_list")
    target = tmp_path / "fix.diff"
    code, out = _check(str(path), "--diff", "-o", str(target))
    assert code == 1 and out == "" and target.read_text().startswith("--- ")


def test_a_file_changed_between_lint_and_fix_is_not_edited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Edits name lines and columns of the linted text: a line inserted above after the lint shifted them, and
    --fix deleted the feasible triton.Config, kept the infeasible one and printed "Fixed 1 finding"."""
    import kernlint.cli.check as check_cmd

    path = _copy(tmp_path, "decorator_list")
    before = path.read_bytes()
    real_lint = check_cmd.lint
    calls = []

    def lint_then_edit(args):  # type: ignore[no-untyped-def]
        got = real_lint(args)
        if not calls:   # the editor saves a new line above, after the lint and before the fix
            path.write_bytes(b"# a new first line\n" + before)
        calls.append(1)
        return got

    monkeypatch.setattr(check_cmd, "lint", lint_then_edit)
    code, _ = _check(str(path), "--fix", "--unsafe-fixes", "--select", "KL401")
    err = capsys.readouterr().err
    assert path.read_bytes() == b"# a new first line\n" + before      # nothing was edited
    assert "changed since it was linted; not fixed" in err and "Fixed" not in err
    # linted again as it now is, the fix removes the right config
    monkeypatch.setattr(check_cmd, "lint", real_lint)
    _check(str(path), "--fix", "--unsafe-fixes", "--select", "KL401")
    assert path.read_bytes() == b"# a new first line\n" + (CASES / "decorator_list_after.py").read_bytes()


def test_add_noqa_refuses_a_file_changed_since_the_lint(tmp_path: Path) -> None:
    from kernlint.cli.add_noqa import add_noqa

    path = _copy(tmp_path, "decorator_list")
    result = lint_paths([str(path)], Settings())
    assert result.diagnostics
    path.write_bytes(b"# a new first line\n" + path.read_bytes())
    failed: list[str] = []
    assert add_noqa(result, failed) == {} and "changed since it was linted" in failed[0]
    assert b"noqa" not in path.read_bytes()
