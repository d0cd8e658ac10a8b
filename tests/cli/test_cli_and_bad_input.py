"""CLI behaviour, exit codes, output formats, bad input, and the never-execute guarantee."""
from __future__ import annotations

import io
import json
from pathlib import Path
import pytest

from conftest import ROOT
from kernlint.cli import main

KERNEL = '''import triton
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
    code = main(list(argv), out)
    return code, out.getvalue()


def test_clean_file_exits_zero(tmp_path: Path) -> None:
    f = tmp_path / "ok.py"
    f.write_text(KERNEL.replace("BLOCK=1000", "BLOCK=1024"))
    code, out = run("check", str(f), "--no-color")
    assert code == 0 and "All checks passed" in out


def test_findings_exit_one_and_name_config_and_target(tmp_path: Path) -> None:
    f = tmp_path / "bad.py"
    f.write_text(KERNEL)
    code, out = run("check", str(f), "--output-format", "concise")
    assert code == 1
    assert "KL301" in out and "length 1000" in out and ":13:" in out
    assert run("check", str(f), "--exit-zero")[0] == 0
    assert run("check", str(f), "--ignore", "KL3")[0] == 0


def test_json_contains_every_estimate(tmp_path: Path) -> None:
    f = tmp_path / "k.py"
    f.write_text(KERNEL)
    code, out = run("check", str(f), "--output-format", "json", "--target", "h100,b200", "--config", "BLOCK=256,num_warps=2")
    doc = json.loads(out)
    assert doc["schema"] == 1 and doc["targets"] == ["h100", "b200"]
    estimates = doc["kernels"][0]["estimates"]
    # launch-site config and --config, each on two targets
    assert len(estimates) == 4
    cli = next(e for e in estimates if e["config"]["origin"] == "cli" and e["target"] == "b200")
    assert cli["config"]["num_warps"] == 2 and cli["registers"]["budget"] == 255
    assert cli["occupancy"]["limiter"] in ("registers", "shared memory", "warps", "blocks")
    assert any("default pointer dtype" in a for a in cli["assumptions"])


def test_missing_path_and_bad_options_exit_two(tmp_path: Path) -> None:
    assert run("check", str(tmp_path / "nope.py"))[0] == 2
    assert run("check", str(tmp_path), "--target", "h9000")[0] == 2
    assert run("check", str(tmp_path), "--config", "BLOCK")[0] == 2


def test_bad_files_get_a_diagnostic_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / "syntax.py").write_text("def f(:\n")
    (tmp_path / "latin1.py").write_bytes(b"x = '\xe9'\n")
    (tmp_path / "binary.py").write_bytes(b"\x00\x01\x02")
    (tmp_path / "empty.py").write_text("")
    (tmp_path / "deep.py").write_text("x = " + "(" * 3000 + "1" + ")" * 3000 + "\n")
    (tmp_path / "good.py").write_text(KERNEL)
    code, out = run("check", str(tmp_path), "--output-format", "concise")
    assert code == 1
    for name in ("syntax.py", "latin1.py", "binary.py"):
        assert f"{name}:" in out and "KL001" in out
    assert "good.py:13" in out  # the real finding is still reported
    assert "internal error" not in out


def test_a_syntax_error_is_reported_where_python_reports_it(tmp_path: Path) -> None:
    # libcst's parser gives up a line or two past the mistake; the position and message are CPython's
    # (1-based columns in the CLI: CPython's offset)
    lines = KERNEL.splitlines()
    cases = {"colon.py": (5, "def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr)", 46, "expected ':'"),
             "unclosed.py": (8, "    mask = (offs < n", 12, "'(' was never closed"),
             "dangling.py": (7, "    offs = ", 12, "invalid syntax")}
    for name, (line, text, col, message) in cases.items():
        (tmp_path / name).write_text("\n".join(lines[:line - 1] + [text] + lines[line:]) + "\n")
        try:
            compile((tmp_path / name).read_text(), name, "exec")
        except SyntaxError as exc:
            assert (exc.lineno, exc.offset, exc.msg) == (line, col, message)   # the hand-written truth is CPython's
    code, out = run("check", str(tmp_path), "--output-format", "concise", "--no-cache")
    assert code == 1
    for name, (line, _, col, message) in cases.items():
        assert f"{name}:{line}:{col}: KL001 syntax error: {message}" in out, out


def test_source_excerpts_cannot_drive_the_terminal(tmp_path: Path) -> None:
    # the full format prints the offending line: an escape sequence in it is shown as U+FFFD, a binary file
    # gets no excerpt at all, and a minified 5,000-character line is cut
    (tmp_path / "esc.py").write_text('x = "\x1b[31mred\x1b[0m" + (\n')
    (tmp_path / "binary.py").write_bytes(b"\x00\x1b[2J\x07")
    (tmp_path / "long.py").write_text("y = [" + "1, " * 1700 + "\n")
    code, out = run("check", str(tmp_path), "--output-format", "full", "--no-cache")
    assert code == 1 and out.count("KL001") == 3
    assert "\x1b" not in out and "\x07" not in out and "\ufffd[31mred" in out
    binary = out.split("binary.py:1:1: KL001")[1].split("\n\n")[0]
    assert " >1 |" not in binary
    assert "…" in out.split("long.py:")[1]             # the 5,000-character line is cut


def test_linted_code_is_never_executed(tmp_path: Path) -> None:
    sentinel = tmp_path / "sentinel"
    f = tmp_path / "evil.py"
    f.write_text(f"open({str(sentinel)!r}, 'w').write('ran')\nimport os\nos.system('touch {sentinel}')\n" + KERNEL)
    run("check", str(f))
    run("explain", str(f))
    run("debug", "--ir", f"{f}::add")
    assert not sentinel.exists()


def test_explain_rule_and_debug(tmp_path: Path) -> None:
    code, out = run("explain", str(ROOT / "examples/matmul.py") + "::matmul_kernel", "--target", "h100,b200")
    assert code == 0 and "does not fit" in out and "b200" in out
    code, out = run("rule", "KL101")
    assert code == 0 and "## Why is this bad?" in out
    assert run("rule", "KL999")[0] == 2
    code, out = run("debug", "--ir", str(ROOT / "examples/matmul.py") + "::matmul_kernel")
    assert code == 0 and "dot(" in out and "carried acc" in out


def test_launch_options_triton_rejects_are_findings_or_usage_errors(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    # num_warps=-1 in a kernel file used to size layouts without bound (the process was killed for memory)
    # and num_warps=0 divided by zero; Triton asserts "num_warps must be a power of 2"
    (tmp_path / "neg.py").write_text(KERNEL.replace("BLOCK=1000)", "BLOCK=1024, num_warps=-1)"))
    (tmp_path / "good.py").write_text(KERNEL)
    code, out = run("check", str(tmp_path), "--output-format", "concise", "--no-cache")
    assert code == 1 and "neg.py:13:" in out and "num_warps=-1 is not a power of two" in out
    assert "good.py:13:" in out and "internal error" not in out        # the other file is still linted
    for bad, message in (("BLOCK=64,num_warps=0", "num_warps=0 is not a power of two"),
                         ("BLOCK=64,num_warps=4.5", "expected an integer")):
        assert run("check", str(tmp_path / "good.py"), "--config", bad)[0] == 2
        assert message in capsys.readouterr().err


def test_a_finding_inside_a_helper_from_another_file_is_placed_at_the_call(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # the helper's own line (37) was reported in the kernel's 9-line file, where no excerpt or noqa reaches it
    (tmp_path / "helper.py").write_text("import triton\n" + "\n" * 32 + "import triton.language as tl\n\n\n"
                                        "@triton.jit\ndef make_offs():\n    return tl.arange(0, 48)\n")
    assert (tmp_path / "helper.py").read_text().splitlines()[38].strip() == "return tl.arange(0, 48)"  # line 39
    kernel = ("import triton\nimport triton.language as tl\nfrom helper import make_offs\n\n\n@triton.jit\n"
              "def k(x_ptr):\n    offs = make_offs(){noqa}\n    tl.store(x_ptr + offs, tl.load(x_ptr + offs))\n")
    (tmp_path / "k.py").write_text(kernel.format(noqa=""))
    monkeypatch.chdir(tmp_path)    # `from helper import ...` resolves from where kernlint runs
    code, out = run("check", "k.py", "--output-format", "concise", "--no-cache")
    assert code == 1 and "k.py:8:1: KL301" in out and ":39:" not in out
    (tmp_path / "k.py").write_text(kernel.format(noqa="  # kernlint: noqa[KL301]"))
    assert run("check", "k.py", "--no-cache")[0] == 0


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "json-lines", "github", "gitlab", "junit", "rdjson",
                                 "markdown", "sarif"])
def test_a_file_name_that_is_not_utf8_is_linted_in_every_format(tmp_path: Path, fmt: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A name such as b'm\\xfe.py' reaches Python as a lone surrogate (PEP 383): the cache key and GitLab's
    fingerprint encoded it strictly and every format crashed with UnicodeEncodeError, even with --no-cache.
    (examples/rope.py: its KL301 is an error whatever the autotuner keeps, so the exit code is 1)"""
    import os

    bad = os.fsdecode(b"m\xfe.py")
    (tmp_path / bad).write_text((ROOT / "examples" / "rope.py").read_text())
    for cache in (["--no-cache"], ["--cache-dir", str(tmp_path / "cache")]):
        assert main(["check", str(tmp_path), *cache, "--output-format", fmt], io.StringIO()) == 1
        assert "Traceback" not in capsys.readouterr().err


def test_a_huge_operator_chain_with_a_syntax_error_is_refused_not_a_crash(tmp_path: Path) -> None:
    """CPython rejects the file (a syntax error after it), so its depth check could not run and libcst's native
    parser met the 50,000-term chain first: a segmentation fault killed the whole run (benchmarks/fuzz.py seed
    23, mutations long_line + swap_tokens). Run in a subprocess: a crash must not take pytest with it."""
    import subprocess
    import sys

    (tmp_path / "chain.py").write_text("def f():\n    x = " + " + ".join(["1"] * 50_000) + "\n    y = (\n")
    (tmp_path / "good.py").write_text(KERNEL)
    proc = subprocess.run([sys.executable, "-m", "kernlint", "check", str(tmp_path), "--no-cache",
                           "--output-format", "concise"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    assert "chain.py:3:" in proc.stdout and "KL001 syntax error: '(' was never closed" in proc.stdout
    assert "good.py:13" in proc.stdout


def test_a_nul_byte_deep_in_a_file_is_kl001_not_an_internal_error(tmp_path: Path) -> None:
    """Only the first 8 KB were checked for NUL bytes; one at line 3,020 of a string literal reached libcst,
    which parsed it, and the frontend's literal_eval of the string then raised: KL000 (fuzz seed 31)."""
    src = (ROOT / "examples" / "vector_add.py").read_text() + "\n" + "x = 1\n" * 3000 + 's = "a\x00b"\n'
    (tmp_path / "nul.py").write_text(src)
    code, out = run("check", str(tmp_path), "--output-format", "concise")
    line = src[:src.index("\x00")].count("\n") + 1
    assert f"nul.py:{line}:1: KL001 NUL byte at line {line}" in out and "KL000" not in out and code == 1


def test_python_syntax_warnings_about_the_linted_code_are_not_printed(tmp_path: Path) -> None:
    # `1if x else 2` is valid, but CPython's parser warns when kernlint parses it: "<unknown>:1: SyntaxWarning"
    import subprocess
    import sys

    (tmp_path / "w.py").write_text("x = 1if True else 2\n")
    proc = subprocess.run([sys.executable, "-m", "kernlint", "check", str(tmp_path / "w.py"), "--no-cache"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "SyntaxWarning" not in proc.stderr, proc.stderr
