"""ruff-like CLI behaviour: stdin, --extend-select, -j, --watch, and the cold path's imports."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernlint.cli import check as check_cmd
from kernlint.cli import main
from kernlint.cli.commands import build_parser

KERNEL = (Path(__file__).resolve().parents[1] / "pipeline" / "test_settings.py").read_text().split("BAD_BLOCK = '''")[1].split("'''")[0]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_stdin_with_filename_uses_that_files_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\ntargets = ["b200"]\n')
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(KERNEL.encode())))
    out = io.StringIO()
    code = main(["check", "-", "--stdin-filename", "pkg/k.py", "--output-format", "json-lines"], out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert code == 1 and rows and all(r["filename"].endswith("k.py") for r in rows)
    assert any(r["code"] == "KL301" and r["location"]["row"] == 13 for r in rows)
    assert not (tmp_path / "pkg").exists()


def test_stdin_filename_alone_reads_stdin_and_force_exclude_applies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # ruff reads stdin when --stdin-filename is given; kernlint used to lint the current directory instead
    (tmp_path / "other.py").write_text(KERNEL)
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\nextend-exclude = ["gen"]\n')
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(KERNEL.encode())))
    out = io.StringIO()
    assert main(["check", "--stdin-filename", "k.py", "--output-format", "concise"], out) == 1
    assert "k.py:13:" in out.getvalue() and "other.py" not in out.getvalue()
    # an excluded name read from stdin is skipped with --force-exclude, as the same file by path is
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(KERNEL.encode())))
    out = io.StringIO()
    assert main(["check", "-", "--stdin-filename", "gen/g.py", "--force-exclude", "--output-format", "concise"],
                out) == 0
    assert "KL301" not in out.getvalue()


def test_a_missing_path_is_an_error_and_the_others_are_still_linted(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "k.py").write_text(KERNEL)
    out = io.StringIO()
    assert main(["check", "k.py", "nonexist.py", "--output-format", "concise"], out) == 2
    assert "k.py:13:" in out.getvalue()
    assert "nonexist.py: no such file or directory" in capsys.readouterr().err


def test_select_all_and_cli_select_over_configured_ignore(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(KERNEL)
    out = io.StringIO()
    assert main(["check", "k.py", "--select", "ALL", "--output-format", "concise"], out) == 1   # ruff's ALL
    assert "KL301" in out.getvalue()
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\nignore = ["KL3"]\n')
    out = io.StringIO()
    assert main(["check", "k.py", "--output-format", "concise"], out) == 0
    out = io.StringIO()
    assert main(["check", "k.py", "--select", "KL301", "--output-format", "concise"], out) == 1   # more specific
    assert "KL301" in out.getvalue()


def test_unknown_argument_types_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "k.py").write_text(KERNEL)
    assert main(["check", "k.py", "--arg", "*=*bfloat17"], io.StringIO()) == 2
    assert "unknown type '*bfloat17'" in capsys.readouterr().err
    assert main(["check", "k.py", "--arg", "*=*bf16:16", "--arg", "n=1", "--arg", "x_ptr=*fp8e4nv"],
                io.StringIO()) == 1


def test_explain_on_a_file_that_does_not_parse_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.py").write_text("def f(:\n")
    assert main(["explain", "bad.py"], io.StringIO()) == 2
    assert "bad.py:1:" in capsys.readouterr().err


def test_full_format_shows_stdin_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(KERNEL.encode())))
    out = io.StringIO()
    main(["check", "-", "--no-color"], out)
    assert "<stdin>:13:" in out.getvalue() and "BLOCK=1000" in out.getvalue()


def test_watch_relints_changed_files(tmp_path: Path) -> None:
    f = tmp_path / "k.py"
    f.write_text(KERNEL)
    args = build_parser().parse_args(["check", ".", "--output-format", "concise", "--watch"])
    out = io.StringIO()
    codes: list[int] = []

    def report(result, settings, lines) -> int:  # type: ignore[no-untyped-def]
        codes.append(result.exit_code())
        return codes[-1]

    def fix_file(_: float) -> None:
        if len(codes) == 1:
            f.write_text(KERNEL.replace("BLOCK=1000", "BLOCK=1024"))

    assert check_cmd.watch(args, report, out, interval=0, iterations=2, sleep=fix_file) == 0
    assert codes == [1, 0] and "1 file(s) changed: k.py" in out.getvalue()


def test_cold_path_never_imports_gpu_or_editor_stacks(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(KERNEL)
    probe = ("import sys, io\nfrom kernlint.cli import main\n"
             "for _ in range(2): main(['check', 'k.py', '--exit-zero'], io.StringIO())\n"
             "print(sorted(m for m in ('triton', 'torch', 'pygls', 'lsprotocol', 'libcst') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    # the second (warm-cache) run must not even need libcst, but the first one parsed the file
    assert out.strip() == "['libcst']"
    warm = ("import sys, io\nfrom kernlint.cli import main\nmain(['check', 'k.py', '--exit-zero'], io.StringIO())\n"
            "print(sorted(m for m in ('triton', 'torch', 'pygls', 'lsprotocol', 'libcst') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", warm], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_benchmark_smoke() -> None:
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, str(root / "benchmarks" / "cli_speed.py"), "--files", "20", "--repeat", "1"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "cold start" in out.stdout and "warm cache, 20 files" in out.stdout


def test_config_labels_show_string_and_float_constexprs() -> None:
    # `--config BLOCK_SIZE=abc` used to vanish from the label, so a typo looked like the default config
    from kernlint.analysis.configs import ConfigPoint
    p = ConfigPoint({"BLOCK": 64, "ACT": "gelu", "eps": 1e-5, "HAS_BIAS": True}, 4, 3, "cli", 1)
    assert p.label() == "BLOCK=64, ACT='gelu', eps=1e-05, num_warps=4, num_stages=3"


def test_statistics_follow_the_json_output_format(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(KERNEL)
    out = io.StringIO()
    assert main(["check", "k.py", "--statistics", "--output-format", "json"], out) == 1
    rows = json.loads(out.getvalue())
    assert {"code": "KL301", "name": "NonPowerOfTwoBlock", "count": 1} in rows


def test_the_internal_error_code_is_explained_and_known(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    assert main(["rule", "KL000"], out) == 0 and "InternalError (KL000)" in out.getvalue()
    (tmp_path / "k.py").write_text(KERNEL)
    main(["check", "k.py", "--ignore", "KL000"], io.StringIO())
    assert "unknown rule code" not in capsys.readouterr().err


VECTOR_ADD = (Path(__file__).resolve().parents[2] / "examples" / "vector_add.py").read_text()


def test_explain_and_debug_use_the_projects_settings_like_check(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """`[tool.kernlint]` targets, args and configs apply to explain and debug as they do to check (both
    ignored it: h100, fp16 pointers, no configured config); command-line options still override them."""
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\ntargets = ["b200"]\nargs = { "*" = "*fp32" }\n'
                                             'configs = [{ BLOCK_SIZE = 2048, num_warps = 2 }]\n')
    (tmp_path / "vector_add.py").write_text(VECTOR_ADD)
    out = io.StringIO()
    assert main(["explain", "vector_add.py"], out) == 0
    table = out.getvalue()
    assert "x_ptr: *fp32" in table and "b200" in table and "h100" not in table
    assert "BLOCK_SIZE=2048, num_warps=2" in table
    out = io.StringIO()
    assert main(["explain", "vector_add.py", "--target", "a100", "--arg", "*=*bf16"], out) == 0
    assert "a100" in out.getvalue() and "b200" not in out.getvalue() and "x_ptr: *bf16" in out.getvalue()
    out = io.StringIO()
    assert main(["debug", "--ir", "vector_add.py"], out) == 0
    assert "x_ptr: *fp32" in out.getvalue()


def test_debug_says_why_it_found_no_kernel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "plain.py").write_text("x = 1\n")
    (tmp_path / "bad.py").write_text("def f(:\n")
    assert main(["debug", "--ir", "plain.py"], io.StringIO()) == 2
    assert "no Triton kernel in plain.py" in capsys.readouterr().err      # it said "kernel None"
    assert main(["debug", "--ir", "bad.py"], io.StringIO()) == 2
    assert "bad.py:1:" in capsys.readouterr().err


def test_an_empty_target_list_is_an_error_not_a_silent_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `targets = []` turned every estimate-based rule off: "All checks passed", exit 0
    (tmp_path / "pyproject.toml").write_text("[tool.kernlint]\ntargets = []\n")
    (tmp_path / "k.py").write_text(KERNEL)
    assert main(["check", "k.py", "--no-cache"], io.StringIO()) == 2
    assert "`targets`: empty" in capsys.readouterr().err


def test_explain_names_a_config_key_the_kernel_lacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `--config BLOCKSIZE=4096` (typo) dropped the config from the table without a word
    (tmp_path / "vector_add.py").write_text(VECTOR_ADD)
    assert main(["explain", "vector_add.py", "--config", "BLOCKSIZE=4096"], io.StringIO()) == 2
    assert "unknown constexpr BLOCKSIZE; kernel vector_add_kernel has BLOCK_SIZE" in capsys.readouterr().err
    out = io.StringIO()
    assert main(["explain", "vector_add.py", "--config", "BLOCK_SIZE=4096,num_warps=8"], out) == 0
    assert "BLOCK_SIZE=4096, num_warps=8" in out.getvalue()


def test_api_takes_one_path_and_normalises_codes_like_the_cli(tmp_path: Path) -> None:
    # lint_paths("k.py") linted the characters of the string; select=("ALL",) / ("kl3",) selected nothing
    from kernlint.pipeline.api import Settings, lint_paths

    (tmp_path / "k.py").write_text(KERNEL)
    base = [(d.code, d.span.start.line) for d in lint_paths([str(tmp_path / "k.py")]).diagnostics]
    assert base and [(d.code, d.span.start.line) for d in lint_paths(str(tmp_path / "k.py")).diagnostics] == base
    assert [(d.code, d.span.start.line) for d in lint_paths(tmp_path / "k.py", Settings(select=("ALL",))).diagnostics] \
        == base
    kl3 = lint_paths(str(tmp_path / "k.py"), Settings(select=("kl3",))).diagnostics
    assert kl3 and all(d.code.startswith("KL3") for d in kl3)


def test_rule_with_a_code_and_all_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rule", "KL101", "--all"], io.StringIO()) == 2    # --all used to win silently
    assert "not both" in capsys.readouterr().err
