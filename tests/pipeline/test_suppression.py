"""noqa placements (line, kernel decorator, file level), KL003 unused suppressions, --add-noqa."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from kernlint.pipeline.api import Settings, lint_source
from kernlint.cli import main
from kernlint.pipeline.suppression import comment_lines

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    pad = tl.arange(0, 48)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def launch(x, y, n):
    add[(n // 1000,)](x, y, n, BLOCK=1000)  # keep this comment
'''
SETTINGS = Settings(select=("KL301", "KL003"))


def codes(text: str) -> list[tuple[int, str]]:
    return sorted((d.span.start.line, d.code) for d in lint_source(text, "k.py", SETTINGS).diagnostics)


def test_findings_without_suppression() -> None:
    assert codes(KERNEL) == [(8, "KL301"), (14, "KL301")]


def test_line_suppression_with_codes_and_prefixes() -> None:
    text = KERNEL.replace("tl.arange(0, 48)", "tl.arange(0, 48)  # kernlint: noqa[KL3]")
    assert codes(text) == [(14, "KL301")]
    text = KERNEL.replace("tl.arange(0, 48)", "tl.arange(0, 48)  # kernlint: NOQA[kl201]")
    assert codes(text) == [(8, "KL003"), (8, "KL301"), (14, "KL301")]   # wrong code: not suppressed, and stale


def test_ruff_style_colon_codes_name_codes_not_everything() -> None:
    # `# kernlint: noqa: KL201` used to read as a bare noqa and hide the KL301 on its line
    text = KERNEL.replace("tl.arange(0, 48)", "tl.arange(0, 48)  # kernlint: noqa: KL201")
    assert codes(text) == [(8, "KL003"), (8, "KL301"), (14, "KL301")]
    text = KERNEL.replace("tl.arange(0, 48)", "tl.arange(0, 48)  # kernlint: noqa: KL201, KL301")
    assert codes(text) == [(8, "KL003"), (14, "KL301")]    # KL301 used, KL201 stale


def test_only_comments_suppress() -> None:
    # a noqa inside a string or a docstring is text, not a directive
    in_string = KERNEL.replace("    pad = tl.arange(0, 48)", '    pad = tl.arange(0, 48); msg = "# kernlint: noqa"')
    assert codes(in_string) == [(8, "KL301"), (14, "KL301")]
    in_docstring = '"""Notes.\n\n    # kernlint: noqa[KL301]\n"""\n' + KERNEL
    assert codes(in_docstring) == [(12, "KL301"), (18, "KL301")]


def test_a_form_feed_does_not_move_line_numbers() -> None:
    # str.splitlines() breaks at \f and U+2028 too; the parser does not, so every later noqa missed its line
    text = KERNEL.replace("import triton.language as tl\n", "import triton.language as tl\n\x0c\n")
    text = text.replace("tl.arange(0, 48)", "tl.arange(0, 48)  # kernlint: noqa[KL301]")
    assert codes(text) == [(15, "KL301")]
    text = text.replace("# keep this comment", "# keep\u2028this comment")
    assert codes(text) == [(15, "KL301")]


def test_decorator_suppression_covers_the_kernel() -> None:
    text = KERNEL.replace("@triton.jit", "@triton.jit  # kernlint: noqa[KL301]")
    assert codes(text) == []   # body line 7 and the launch site about `add`


def test_file_level_suppression() -> None:
    assert codes("# kernlint: noqa\n" + KERNEL) == []
    assert codes("# kernlint: noqa[KL301]\n" + KERNEL) == []
    assert codes("# kernlint: noqa[KL201]\n" + KERNEL) == [(1, "KL003"), (9, "KL301"), (15, "KL301")]


def test_unused_suppression_is_reported_and_can_be_kept() -> None:
    clean = KERNEL.replace("1000", "1024").replace("48", "64")
    text = clean.replace("# keep this comment", "# kernlint: noqa[KL301]")
    [d] = lint_source(text, "k.py", SETTINGS).diagnostics
    assert d.code == "KL003" and "KL301 matched no finding" in d.message and d.span.start.col > 0
    assert codes(clean.replace("# keep this comment", "# kernlint: noqa[KL301, KL003]")) == []
    # KL003 alone selected: the named rules still run to judge the comment
    only = Settings(select=("KL003",))
    used = KERNEL.replace("# keep this comment", "# kernlint: noqa[KL301]")
    assert [d.code for d in lint_source(used, "k.py", only).diagnostics] == []


def test_multiline_string_lines_map_to_the_string_end() -> None:
    text = 'x = """a\nb\nc"""\ny = 1\n'
    assert comment_lines(text) == {1: 3, 2: 3}


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out), out.getvalue()


def test_add_noqa_is_idempotent_and_preserves_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "k.py"
    f.write_bytes(KERNEL.replace("\n", "\r\n").encode())
    f.chmod(0o640)
    code, out = run("check", "k.py", "--select", "KL301", "--add-noqa")
    assert code == 0 and "Added 2 noqa directives in 1 file(s)" in out
    text = f.read_bytes().decode()
    assert "tl.arange(0, 48)  # kernlint: noqa[KL301]\r\n" in text
    assert "BLOCK=1000)  # keep this comment  # kernlint: noqa[KL301]\r\n" in text
    assert f.stat().st_mode & 0o777 == 0o640
    assert run("check", "k.py", "--select", "KL301", "--no-cache")[0] == 0
    before = f.read_bytes()
    assert "Added 0 noqa directives" in run("check", "k.py", "--select", "KL301", "--add-noqa")[1]
    assert f.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".k.py")]   # no temp files left


def test_add_noqa_merges_into_an_existing_directive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "k.py"
    f.write_text(KERNEL.replace("tl.arange(0, 48)", "tl.arange(0, 48)  # kernlint: noqa[KL201]"))
    run("check", "k.py", "--select", "KL301", "--add-noqa")
    assert "tl.arange(0, 48)  # kernlint: noqa[KL201, KL301]\n" in f.read_text()


def test_add_noqa_leaves_a_noqa_inside_a_string_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the string's text used to be rewritten into `noqa[KL301, KL999]`, changing the program
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "k.py"
    f.write_text(KERNEL.replace("    pad = tl.arange(0, 48)", '    pad = tl.arange(0, 48); s = "# kernlint: noqa[KL999]"'))
    run("check", "k.py", "--select", "KL301", "--add-noqa")
    assert 's = "# kernlint: noqa[KL999]"  # kernlint: noqa[KL301]\n' in f.read_text()
    assert codes(f.read_text()) == []          # both findings (lines 8 and 14) now suppressed
