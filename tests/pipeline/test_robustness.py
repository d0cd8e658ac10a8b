"""Hostile inputs end in bounded time with a clear result: the static evaluator refuses values it would take
minutes or gigabytes to compute (it reports them as unknown instead)."""
from __future__ import annotations

import time

import libcst as cst
import pytest

from kernlint.frontend.kernels import collect_module_facts
from kernlint.ir.symbolic import MAX_INT_BITS, MAX_SEQUENCE, Unknown

HOSTILE = [
    "9 ** 9 ** 9",
    "2 ** 2 ** 40",
    "1 << 10 ** 10",
    "(1 << 4000) * (1 << 4000)",
    '"a" * 10 ** 12',
    "[0] * 10 ** 12",
    "10 ** 12 * [0]",
    "list(range(10 ** 12))",
    "[(a, b) for a in range(60000) for b in range(60000)]",
    "[x for a in range(4096) for b in range(4096) for x in range(4096) if False]",
    '"%0999999999d" % 1',
    "0x" + "f" * 200_000,
]


def _constants(source: str) -> dict[str, object]:
    facts, _ = collect_module_facts("m.py", cst.parse_module(source), text=source)
    return dict(facts.constants)


@pytest.mark.parametrize("expr", HOSTILE)
def test_hostile_constant_is_unknown_and_fast(expr: str) -> None:
    start = time.perf_counter()
    constants = _constants(f"B = {expr}\nC = 3\n")
    elapsed = time.perf_counter() - start
    assert elapsed < 5, f"{expr[:40]}: {elapsed:.1f} s"
    assert "B" not in constants or isinstance(constants["B"], Unknown)
    assert constants["C"] == 3   # the rest of the file is still evaluated


@pytest.mark.parametrize(("expr", "value"), [
    ("2 ** 64 - 1", 2 ** 64 - 1),                 # 64-bit masks are kept
    ("1 << 62", 1 << 62),
    ('"ab" * 3', "ababab"),
    ("[16, 32] * 2", [16, 32, 16, 32]),
    ("len(list(range(1000)))", 1000),
    (f"2 ** {MAX_INT_BITS - 1}", 2 ** (MAX_INT_BITS - 1)),   # just under the bound: still computed
])
def test_ordinary_constants_still_evaluate(expr: str, value: object) -> None:
    assert _constants(f"B = {expr}\n")["B"] == value


def test_sequence_bound_is_exact() -> None:
    assert _constants(f"B = [0] * {MAX_SEQUENCE}\n")["B"] == [0] * MAX_SEQUENCE
    assert "B" not in _constants(f"B = [0] * {MAX_SEQUENCE + 1}\n") or isinstance(
        _constants(f"B = [0] * {MAX_SEQUENCE + 1}\n")["B"], Unknown)


# -- issue 30: `match` statements and code nested as deep as CPython accepts ------------------------

KERNEL = """import triton
import triton.language as tl


@triton.jit
def k(X, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    y = {expr}
    tl.store(X + tl.arange(0, N), y)


def launch(x):
    k[(1,)](x, N=128)
"""


def _lint(src: str):  # type: ignore[no-untyped-def]
    from kernlint.pipeline.api import lint_source

    result = lint_source(src, "m.py")
    assert not result.internal_errors, result.internal_errors
    assert "KL000" not in {d.code for d in result.diagnostics}
    return result


def test_match_in_host_code_is_linted() -> None:
    src = KERNEL.format(expr="x") + "\n\ndef host(v):\n    match v:\n        case 1:\n            return 2\n" \
                                    "        case _:\n            return 3\n"
    result = _lint(src)
    assert result.kernel_count == 1 and not result.diagnostics


def test_match_in_a_kernel_is_kl002_at_its_line() -> None:
    src = KERNEL.format(expr="x").replace("    y = x\n", "    match N:\n        case 1:\n            y = x\n"
                                          "        case _:\n            y = x * 2\n")
    result = _lint(src)
    found = [d for d in result.diagnostics if d.code == "KL002"]
    assert result.kernel_count == 1 and len(found) == 1
    assert found[0].span.start.line == 8 and "`match` statement" in found[0].message


def test_elif_chain_of_120_branches_in_host_code() -> None:
    branches = "".join(f"    elif v == {i}:\n        return {i}\n" for i in range(1, 120))
    src = KERNEL.format(expr="x") + "\n\ndef host(v):\n    if v == 0:\n        return 0\n" + branches
    assert _lint(src).kernel_count == 1


def test_sum_of_110_terms_in_host_code_and_kernel() -> None:
    src = KERNEL.format(expr=" + ".join(["x"] * 110)) + "\n\ndef f(a):\n    return " + "+".join(["a"] * 110) + "\n"
    result = _lint(src)
    assert result.kernel_count == 1 and "KL001" not in {d.code for d in result.diagnostics}


def test_150_nested_abs_calls_in_a_kernel() -> None:
    result = _lint(KERNEL.format(expr="tl.abs(" * 150 + "x" + ")" * 150))
    assert result.kernel_count == 1 and "KL001" not in {d.code for d in result.diagnostics}


def test_elif_chain_in_a_kernel_as_deep_as_cpython_accepts() -> None:
    import ast

    body = "".join(f"    elif N == {i}:\n        y = x + {i}\n" for i in range(1, 2984))
    src = KERNEL.format(expr="x").replace("    y = x\n", "    if N == 0:\n        y = x\n" + body + "    else:\n        y = x\n")
    ast.parse(src)
    result = _lint(src)
    assert result.kernel_count == 1 and "KL001" not in {d.code for d in result.diagnostics}


# -- issue 29 item 4: only regular files are read, up to a size limit --------------------------------

def _special_files(tmp_path):  # type: ignore[no-untyped-def]
    import os
    import socket

    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock.py"))
    (tmp_path / "ok.py").write_text(KERNEL.format(expr="x"))
    return sock


WORDING = {"fifo.py": "not a regular file (FIFO)", "zero.py": "not a regular file (character device)",
           "sock.py": "not a regular file (socket)"}


@pytest.mark.parametrize("explicit", [False, True])
def test_special_files_are_kl001_and_never_read(tmp_path, explicit: bool) -> None:  # type: ignore[no-untyped-def]
    import io
    import json

    from kernlint.cli import main

    sock = _special_files(tmp_path)
    try:
        args = [str(tmp_path / n) for n in (*WORDING, "ok.py")] if explicit else [str(tmp_path)]
        out = io.StringIO()
        start = time.perf_counter()
        code = main(["check", "--no-cache", "--output-format", "json", *args], out)
        assert time.perf_counter() - start < 60
    finally:
        sock.close()
    assert code == 1
    found = {d["filename"].rsplit("/", 1)[-1]: d["message"] for d in json.loads(out.getvalue())["diagnostics"] if d["code"] == "KL001"}
    assert set(found) == set(WORDING)
    for name, wording in WORDING.items():
        assert wording in found[name] and "no such file" not in found[name]


def test_size_limit_default_setting_and_flag(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import io

    from kernlint.cli import main
    from kernlint.core.source_files import DEFAULT_MAX_FILE_BYTES

    big = tmp_path / "big.py"
    big.write_text("x = 1\n" * (DEFAULT_MAX_FILE_BYTES // 6 + 1))   # one line over 2 MiB
    out = io.StringIO()
    assert main(["check", "--no-cache", str(big)], out) == 1
    assert "KL001 file too large" in out.getvalue()
    assert main(["check", "--no-cache", "--max-file-size", "3MB", str(big)], io.StringIO()) == 0
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\nmax-file-size = "3MB"\n')
    assert main(["check", "--no-cache", str(big)], io.StringIO()) == 0
    (tmp_path / "pyproject.toml").write_text("[tool.kernlint]\nmax-file-size = 100\n")
    out = io.StringIO()
    assert main(["check", "--no-cache", str(big)], out) == 1 and "over the 100-byte limit" in out.getvalue()
    (tmp_path / "pyproject.toml").write_text("[tool.kernlint]\nmax-file-size = -1\n")
    assert main(["check", "--no-cache", str(big)], io.StringIO()) == 2


def test_read_source_never_reads_past_the_limit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from kernlint.core.source_files import SourceRefused, read_source

    (tmp_path / "a.py").write_bytes(b"x" * 100)
    assert read_source(str(tmp_path / "a.py"), 100) == b"x" * 100
    refused = read_source(str(tmp_path / "a.py"), 99)
    assert isinstance(refused, SourceRefused) and "file too large" in refused.strerror
    missing = read_source(str(tmp_path / "nope.py"))
    assert isinstance(missing, FileNotFoundError)


def test_lint_source_applies_the_size_limit() -> None:
    from kernlint.pipeline.api import lint_source
    from kernlint.pipeline.settings import Settings

    result = lint_source(KERNEL.format(expr="x"), "m.py", Settings(max_file_size=50))
    assert [d.code for d in result.diagnostics] == ["KL001"] and "file too large" in result.diagnostics[0].message
    # nothing is wrong with the code: the refusal is a warning (unsloth ships a 2.1 MB web-route file), while
    # a syntax error stays an error
    from kernlint.core.diagnostic import Severity
    assert result.diagnostics[0].severity is Severity.WARNING
    broken = lint_source("def f(:\n", "b.py", Settings())
    assert [(d.code, d.severity) for d in broken.diagnostics] == [("KL001", Severity.ERROR)]


# -- issue 29 item 6: a corrupt store is KL406 for `kernlint check`, never exit 2 ---------------------

@pytest.mark.parametrize("config_json", [
    '{"num_warps": ' + "9" * 5000 + "}",                  # ValueError out of json (int-from-str limit)
    '{"kwargs": {"N": [128, 256]}, "num_warps": 4}',       # TypeError at the launch, in the shim
])
def test_corrupt_store_is_kl406_not_a_tool_error(tmp_path, config_json: str) -> None:  # type: ignore[no-untyped-def]
    import io

    from kernlint.cli import main
    from kernlint.core.config_store import SCHEMA

    (tmp_path / "k.py").write_text(KERNEL.format(expr="x"))
    (tmp_path / "kernlint.lock.json").write_text(
        f'{{"schema": "{SCHEMA}", "entries": [{{"kernel": "k:k@sha256:0", "target": "h100", "bucket": "*", '
        f'"config": {config_json}}}]}}')
    (tmp_path / "pyproject.toml").write_text("[tool.kernlint]\n")
    out = io.StringIO()
    code = main(["check", "--no-cache", "--output-format", "concise", str(tmp_path / "k.py")], out)
    assert code == 1, out.getvalue()
    assert "KL406" in out.getvalue() and "internal error" not in out.getvalue()
