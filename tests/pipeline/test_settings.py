"""[tool.kernlint] in pyproject.toml: nearest file wins, CLI overrides, validation, --show-settings."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from kernlint.cli import main
from kernlint.pipeline.settings import Overrides, Resolver, Settings

BAD_BLOCK = '''import triton
import triton.language as tl


@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def launch(x, y, n):
    add[(n // 1000,)](x, y, n, BLOCK=1000)
'''


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out), out.getvalue()


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_nearest_pyproject_with_a_kernlint_table_wins(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\nignore = ["KL3"]\ntargets = ["b200"]\n')
    sub = tmp_path / "pkg" / "inner"
    sub.mkdir(parents=True)
    (tmp_path / "pkg" / "pyproject.toml").write_text('[project]\nname = "x"\n')   # no table: skipped
    (sub / "pyproject.toml").write_text('[tool.kernlint]\nselect = ["KL2"]\n')
    r = Resolver()
    top, inner, middle = r.for_path(tmp_path / "a.py"), r.for_path(sub / "b.py"), r.for_path(tmp_path / "pkg" / "c.py")
    assert top.ignore == ("KL3",) and top.targets == ("b200",) and top.source == str(tmp_path / "pyproject.toml")
    assert middle == top
    assert inner.select == ("KL2",) and inner.ignore == () and inner.targets == ("h100",)   # no merging with the parent
    (tmp_path / "a.py").write_text(BAD_BLOCK)
    (sub / "b.py").write_text(BAD_BLOCK)
    code, out = run("check", ".", "--output-format", "concise", "--no-cache")
    assert "a.py" not in out                              # KL301 ignored at the top
    assert code == 0 and "KL301" not in out               # inner selects KL2 only


def test_cli_overrides_config(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\nselect = ["KL2"]\nignore = ["KL202"]\n'
                                             'args = {x_ptr = "*bf16", y_ptr = "*fp32"}\n')
    r = Resolver(Overrides(select=("KL3",), ignore=("KL201",), extend_select=("KL101",), arg_types={"x_ptr": "*fp8e4nv"}))
    s = r.for_path(tmp_path / "k.py")
    assert s.select == ("KL3",) and s.ignore == ("KL202", "KL201")
    assert s.arg_types == {"x_ptr": "*fp8e4nv", "y_ptr": "*fp32"}
    assert s.rule_filter() == (("KL3", "KL101"), ("KL202", "KL201"))
    assert Settings(extend_select=("KL1",)).rule_filter() == ((), ())   # nothing to extend: all rules stay on


def test_extend_select_and_per_file_ignores(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\nselect = ["KL2"]\nextend-select = ["KL301"]\n'
                                             '[tool.kernlint.per-file-ignores]\n"legacy/*.py" = ["KL301"]\n')
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "old.py").write_text(BAD_BLOCK)
    (tmp_path / "new.py").write_text(BAD_BLOCK)
    code, out = run("check", ".", "--output-format", "concise", "--no-cache")
    assert code == 1 and "new.py:13" in out and "old.py" not in out


@pytest.mark.parametrize("toml,key", [
    ('select = "KL1"', "select"),
    ('targets = ["h9000"]', "targets"),
    ('frobnicate = 1', "frobnicate"),
    ('per-file-ignores = ["x"]', "per-file-ignores"),
    ('args = {a_ptr = 3.5}', "args"),
    ('output-format = "xml"', "output-format"),
    ('configs = [{BLOCK = 64, num_warps = -1}]', "num_warps=-1 is not a power of two"),
    ('configs = [{BLOCK = 64, num_warps = "8"}]', "must be integers"),
    ('calibrate = 3', "calibrate"),
])
def test_malformed_config_exits_two_naming_key_and_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         toml: str, key: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.kernlint]\n{toml}\n")
    (tmp_path / "k.py").write_text(BAD_BLOCK)
    assert run("check", "k.py")[0] == 2
    err = capsys.readouterr().err
    assert key in err and "pyproject.toml" in err


def test_the_calibrate_table_is_a_known_key(tmp_path: Path) -> None:
    # README: override calibrate's argument types with `args` in [tool.kernlint.calibrate]; `check` must accept it
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\n[tool.kernlint.calibrate]\nargs = { "*" = "*bf16" }\n')
    (tmp_path / "k.py").write_text(BAD_BLOCK)
    assert run("check", "k.py")[0] == 1


def test_invalid_toml_exits_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.kernlint\nselect = [\n")
    (tmp_path / "k.py").write_text(BAD_BLOCK)
    assert run("check", "k.py")[0] == 2
    assert "pyproject.toml" in capsys.readouterr().err


def test_unknown_codes_warn_but_do_not_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\nignore = ["KL9"]\n')
    (tmp_path / "k.py").write_text(BAD_BLOCK.replace("BLOCK=1000)", "BLOCK=1000)  # kernlint: noqa[KL301, KL777]"))
    code, _ = run("check", "k.py", "--select", "KL3,XY1", "--no-cache")
    err = capsys.readouterr().err
    assert code == 0
    assert "'KL9'" in err and "'XY1'" in err and "KL777" in err and "warning" in err


def test_show_settings(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\ntargets = ["h100", "b200"]\nconfigs = [{BLOCK = 256, num_warps = 8}]\n'
                                             '[tool.kernlint.per-file-ignores]\n"k.py" = ["KL301"]\n')
    (tmp_path / "k.py").write_text(BAD_BLOCK)
    code, out = run("check", "--show-settings", "k.py", "--ignore", "KL201")
    assert code == 0
    assert 'targets = ["h100", "b200"]' in out and str(tmp_path / "pyproject.toml") in out
    assert 'ignore = ["KL201", "KL301"]' in out                      # CLI ignore + per-file-ignores
    assert '"BLOCK": 256' in out


def test_configured_args_and_configs_reach_the_estimates(tmp_path: Path) -> None:
    import json

    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\nargs = {"*" = "*fp32"}\nconfigs = [{BLOCK = 256, num_warps = 2}]\n'
                                             'output-format = "json"\n')
    (tmp_path / "k.py").write_text(BAD_BLOCK)
    code, out = run("check", "k.py")
    doc = json.loads(out)   # output-format came from the config
    estimates = doc["kernels"][0]["estimates"]
    assert any(e["config"]["origin"] == "cli" and e["config"]["num_warps"] == 2 for e in estimates)
    assumptions = [a for e in estimates for a in e["assumptions"] if "x_ptr" in a]
    assert assumptions and all("*fp32" in a for a in assumptions)


def test_exclude_and_force_exclude(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\nextend-exclude = ["gen", "skip_*.py"]\n')
    for rel in ("gen/a.py", "skip_b.py", "keep.py"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text(BAD_BLOCK)
    _, out = run("check", ".", "--output-format", "concise", "--no-cache")
    assert "keep.py" in out and "a.py" not in out and "skip_b.py" not in out
    _, out = run("check", "skip_b.py", "--output-format", "concise", "--no-cache")
    assert "skip_b.py:13" in out                     # explicitly passed: linted (ruff's rule)
    code, out = run("check", "skip_b.py", "gen/a.py", "--force-exclude", "--no-cache")
    assert code == 0 and "0 file(s)" in out          # pre-commit passes files: exclude still applies


def test_an_excluded_directory_passed_explicitly_is_walked(tmp_path: Path) -> None:
    """`kernlint check .vendor/pkg` lints the package (the '.*' default pattern matches the directory itself);
    below it the patterns still apply, and --force-exclude skips it as for files."""
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\nextend-exclude = ["skip_*.py"]\n')
    for rel in (".vendor/pkg/k.py", ".vendor/pkg/skip_k.py", ".vendor/pkg/.hidden/k.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(BAD_BLOCK)
    _, out = run("check", ".vendor/pkg", "--output-format", "concise", "--no-cache")
    assert ".vendor/pkg/k.py:13" in out and "skip_k.py" not in out and ".hidden" not in out
    _, out = run("check", ".", "--output-format", "concise", "--no-cache")
    assert ".vendor" not in out                      # not passed explicitly: pruned while walking
    code, out = run("check", ".vendor/pkg", "--force-exclude", "--no-cache")
    assert code == 0 and "0 file(s)" in out
