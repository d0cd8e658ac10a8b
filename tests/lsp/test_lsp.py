"""`kernlint server` end to end: a real LSP client (pytest-lsp) drives `python -m kernlint server` over stdio."""
from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="pygls is not installed: pip install 'kernlint[lsp]' to test the LSP server")
pytest_lsp = pytest.importorskip("pytest_lsp", reason="pytest-lsp is not installed (it is in the test extra)")
from lsprotocol import types as lsp  # noqa: E402

# The KL301 line carries a non-BMP character so that the UTF-16 columns differ from code points.
KERNEL = '''import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, n):
    offs = tl.program_id(0) * 48 + tl.arange(0, 48)  # 🚀 tile
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def add(x, y, n):
    add_kernel[(triton.cdiv(n, 48),)](x, y, n, num_warps=4)
'''
KL301_LINE = 6  # 0-based
FIXED = KERNEL.replace("48", "64")


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def apply_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    """Apply LSP edits whose columns are UTF-16 code units (an independent implementation on purpose)."""
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        assert e.range.start.line == e.range.end.line
        raw = lines[e.range.start.line].encode("utf-16-le")
        head = raw[: 2 * e.range.start.character].decode("utf-16-le")
        tail = raw[2 * e.range.end.character:].decode("utf-16-le")
        lines[e.range.start.line] = head + e.new_text + tail
    return "\n".join(lines)


last_diagnostics: dict[str, object] = {}


async def until(check: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}; last diagnostics: {last_diagnostics}")
        await asyncio.sleep(0.02)


async def session(tmp_path: Path) -> None:
    client = pytest_lsp.make_test_lsp_client()
    last_diagnostics.clear()
    last_diagnostics["all"] = client.diagnostics
    await client.start_io(sys.executable, "-m", "kernlint", "server", "--debounce-ms", "50")
    try:
        caps = pytest_lsp.client_capabilities("neovim@v0.10.0")
        result = await client.initialize_session(lsp.InitializeParams(capabilities=caps, root_uri=tmp_path.as_uri()))
        assert result.capabilities.hover_provider
        assert result.capabilities.code_action_provider
        encoding = result.capabilities.position_encoding or lsp.PositionEncodingKind.Utf16
        assert encoding == lsp.PositionEncodingKind.Utf16

        path = tmp_path / "add.py"
        uri = path.as_uri()
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=KERNEL)))
        await until(lambda: bool(client.diagnostics.get(uri)), "diagnostics after didOpen")
        (diag,) = [d for d in client.diagnostics[uri] if d.code == "KL301"]
        line_text = KERNEL.split("\n")[KL301_LINE]
        assert diag.source == "kernlint"
        assert diag.severity == lsp.DiagnosticSeverity.Error
        start = line_text.index("tl.arange(")           # the call the finding names, not the whole line
        assert diag.range == lsp.Range(lsp.Position(KL301_LINE, start), lsp.Position(KL301_LINE, start + 10))
        assert utf16_len(line_text) == len(line_text) + 1     # the emoji after it: two UTF-16 units
        assert diag.code_description is not None and diag.code_description.href.endswith("#kl301")
        assert diag.data["kernel"] == "add_kernel"

        actions = await client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri), range=diag.range,
            context=lsp.CodeActionContext(diagnostics=[diag])))
        noqa = [a for a in actions or [] if isinstance(a, lsp.CodeAction) and "noqa" in a.title]
        assert len(noqa) == 1 and noqa[0].edit is not None and noqa[0].edit.changes is not None
        edited = apply_edits(KERNEL, list(noqa[0].edit.changes[uri]))
        assert edited == KERNEL.replace("# 🚀 tile", "# 🚀 tile  # kernlint: noqa[KL301]")

        hover = await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri), lsp.Position(5, 6)))       # on `def add_kernel`
        assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
        assert hover.contents.kind == lsp.MarkupKind.Markdown
        text = hover.contents.value
        assert "add_kernel" in text and "registers" in text and "shared memory" in text
        assert "| num_warps=4, num_stages=3 | h100 |" in text         # the launch's config row
        launch_hover = await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri), lsp.Position(12, 8)))      # on the launch line
        assert launch_hover is not None and "num_warps=4" in launch_hover.contents.value
        assert await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri), lsp.Position(500, 0))) is None   # past the end: no crash

        # Malformed traffic written straight onto the pipe (the typed client refuses to send it): a body
        # that is not JSON, and a hover whose params do not match the schema. The server must keep serving.
        for body in (b"{not json", b'{"jsonrpc": "2.0", "id": 9999, "method": "textDocument/hover", '
                                   b'"params": {"textDocument": 5}}'):
            client.protocol.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        # [tool.kernlint] changes are picked up when the client reports pyproject.toml as changed.
        pyproject = tmp_path / "pyproject.toml"
        pyproject.write_text('[tool.kernlint]\nignore = ["KL301"]\n', encoding="utf-8")
        changed = lsp.DidChangeWatchedFilesParams([lsp.FileEvent(pyproject.as_uri(), lsp.FileChangeType.Created)])
        client.workspace_did_change_watched_files(changed)
        await until(lambda: len(client.diagnostics.get(uri, [None])) == 0, "KL301 ignored via pyproject.toml")
        pyproject.write_text("[tool.kernlint]\nignore = []\n", encoding="utf-8")
        client.workspace_did_change_watched_files(changed)
        await until(lambda: any(d.code == "KL301" for d in client.diagnostics.get(uri, [])), "KL301 back")

        half_typed = KERNEL.replace("    mask = offs < n\n", "    mask = offs <\n")
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [lsp.TextDocumentContentChangeWholeDocument(text=half_typed)]))
        await until(lambda: any(d.code == "KL001" for d in client.diagnostics.get(uri, [])), "KL001 for a syntax error")

        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=3),
            [lsp.TextDocumentContentChangeWholeDocument(text=FIXED)]))
        await until(lambda: len(client.diagnostics.get(uri, [None])) == 0, "diagnostics cleared by the fix")
        hover = await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri), lsp.Position(4, 1)))       # decorator line, after the change
        assert hover is not None and "add_kernel" in hover.contents.value
    finally:
        await client.shutdown_session()
        await client.stop()
    assert client.error is None


def test_lsp_session_over_stdio(tmp_path: Path) -> None:
    asyncio.run(asyncio.wait_for(session(tmp_path), timeout=180))


def test_lsp_speed_benchmark_runs_on_a_small_file() -> None:
    # A smoke test of benchmarks/lsp_speed.py (the 1,000-line measurement is a benchmark, not a timed test).
    import subprocess

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, str(root / "benchmarks" / "lsp_speed.py"), "--lines", "80", "--runs", "2"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "re-lint median" in done.stdout and " kernels, " in done.stdout


def test_huge_and_broken_documents_give_a_diagnostic_not_a_crash() -> None:
    from kernlint.lsp.server import KernlintServer, to_lsp_diagnostic

    server = KernlintServer(max_chars=1_000)
    huge = server.lint_text("file:///tmp/huge.py", KERNEL * 10, 1)
    (d,) = huge.result.diagnostics
    assert d.code == "KL000" and "kernlint check" in d.message and huge.result.kernels == []
    broken = server.lint_text("untitled:Untitled-1", "@triton.jit\ndef k(x:\n", 1)
    assert [x.code for x in broken.result.diagnostics] == ["KL001"]
    rng = to_lsp_diagnostic(broken.result.diagnostics[0], broken.lines, "utf-16").range
    assert rng.start.line < len(broken.lines)


def _rpc(method: str, params: object, msg_id: int | None = None) -> bytes:
    import json

    body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params,
                       **({"id": msg_id} if msg_id is not None else {})}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.parametrize("shutdown, code", [(True, 0), (False, 1)])
def test_exit_code_follows_the_protocol(shutdown: bool, code: int) -> None:
    # LSP: `exit` after a `shutdown` request ends the process with 0, an `exit` without one with 1
    import subprocess

    init = _rpc("initialize", {"processId": None, "rootUri": None, "capabilities": {}}, 1)
    msgs = init + _rpc("initialized", {}) + (_rpc("shutdown", None, 2) if shutdown else b"") + _rpc("exit", None)
    done = subprocess.run([sys.executable, "-m", "kernlint", "server"], input=msgs, capture_output=True, timeout=120)
    assert done.returncode == code, done.stderr[-2000:]
    assert b'"id": 1' in done.stdout.replace(b'"id":1', b'"id": 1')   # initialize was answered


def test_one_lint_per_document_at_a_time_and_other_documents_are_not_held_back() -> None:
    # A 720 KB document held the one lint thread for 10 s: another document's diagnostics and hovers
    # waited behind it. Two threads, at most one lint per document: a keystroke that cancels the task
    # waiting for a lint does not let a second lint of that document start beside the first.
    import threading
    import time

    from kernlint.pipeline.api import FileResult
    from kernlint.lsp.server import KernlintServer, Linted

    server = KernlintServer()
    lock, active, overlap = threading.Lock(), {}, []

    def slow(uri: str, text: str, version: int | None = None) -> Linted:
        with lock:
            active[uri] = active.get(uri, 0) + 1
            if active[uri] > 1:
                overlap.append(uri)
        time.sleep(0.4 if uri == "big" else 0.0)
        with lock:
            active[uri] -= 1
        return Linted(version, [], text, FileResult(uri, [], []))

    server.lint_text = slow  # type: ignore[method-assign]

    async def scenario() -> float:
        first = asyncio.ensure_future(server._lint("big", ("a", 1)))
        await asyncio.sleep(0.05)
        first.cancel()                                   # the next keystroke cancels the waiting task
        second = asyncio.ensure_future(server._lint("big", ("b", 2)))
        await asyncio.sleep(0.05)
        start = time.monotonic()
        await server._lint("small", ("c", 1))
        small = time.monotonic() - start
        await second
        return small

    small_s = asyncio.run(scenario())
    assert overlap == []             # the second lint of "big" waited for the first
    assert small_s < 0.3             # "small" did not wait for either (each takes 0.4 s)


def test_a_lint_of_an_outdated_text_is_cancelled_between_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine stops at the next kernel once the lint's cancel event is set (kernlint/core/cancel.py): the set
    is made from inside the third kernel's analysis, so exactly three kernels are analysed."""
    import threading

    from kernlint.pipeline import api
    from kernlint.core.cancel import LintCancelled, cancellable

    root = Path(__file__).resolve().parents[2]
    text = "\n\n".join((root / "examples" / "vector_add.py").read_text().replace("vector_add_kernel", f"k{i}")
                       for i in range(8))
    event, calls = threading.Event(), []
    real = api.analyse_kernel

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 3:
            event.set()
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(api, "analyse_kernel", counting)
    with cancellable(event), pytest.raises(LintCancelled):
        api.lint_source(text, "many.py")
    assert len(calls) == 3
    assert len(api.lint_source(text, "many.py").files[0].kernels) == 8    # not cancelled: every kernel


def test_the_server_cancels_the_lint_of_a_text_the_editor_moved_past() -> None:
    """A keystroke in a document whose lint is running: that lint stops at its next check instead of running
    to the end before the new text is linted (a 700 KB document: tens of seconds each)."""
    import time

    from kernlint.pipeline.api import FileResult
    from kernlint.core.cancel import check
    from kernlint.lsp.server import KernlintServer, Linted

    server = KernlintServer()
    steps: dict[str, int] = {}

    def slow(uri: str, text: str, version: int | None = None) -> Linted:
        for _ in range(100):          # 1 s of "kernels", checking for cancellation between them
            check()
            time.sleep(0.01)
            steps[text] = steps.get(text, 0) + 1
        return Linted(version, [], text, FileResult(uri, [], []))

    server.lint_text = slow  # type: ignore[method-assign]

    async def scenario() -> tuple[object, object]:
        first = asyncio.ensure_future(server._lint("big", ("v1", 1)))
        await asyncio.sleep(0.1)
        second = await server._lint("big", ("v2", 2))
        return await first, second

    (first, _), (second, _) = asyncio.run(scenario())
    assert first is None and steps["v1"] < 50        # stopped early, not run to its 100 steps
    assert second is not None and second.text == "v2" and steps["v2"] == 100
