"""`kernlint server`: a pygls 2.x language server (the only module tree that imports pygls).

Diagnostics on open/change/save, debounced per document and computed off the event loop on two worker
threads, at most one lint per document at a time, so a slow lint (a huge file) holds back neither the
server's answers nor the other documents' diagnostics; a result for a version the user has already typed
past is dropped. Quick fixes (noqa, config literals), hover tables of estimates,
settings reloaded when a pyproject.toml changes. Every handler catches and logs its own exceptions: a bad
request or a crashing rule costs that one answer, never the server; a request with invalid params, or one
after `shutdown`, gets its JSON-RPC error (kernlint/lsp/protocol.py).
"""
from __future__ import annotations

import asyncio
import functools
import logging
import os
import re
import sys
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from kernlint import __version__
from kernlint.pipeline.api import FileResult, Settings, lint_source
from kernlint.core.cancel import LintCancelled, cancellable
from kernlint.core.diagnostic import Confidence, Diagnostic, Severity, Span
from kernlint.pipeline.incremental import KernelMemo, reusing
from kernlint.lsp import actions, hover, positions
from kernlint.lsp.protocol import KernlintProtocol

log = logging.getLogger("kernlint.lsp")

# Where `codeDescription.href` points; docs/rules.md has one `#klNNN` anchor per rule.
DOCS_URL = "https://github.com/kernlint/kernlint/blob/main/docs/rules.md"
MAX_CHARS = 2_000_000   # beyond this the editor path reports instead of parsing (the CLI still lints it)
_LSP_LINES = re.compile(r"\r\n|\r|\n")   # LSP's line breaks; str.splitlines also splits on \f, \u2028, ...
_SEVERITY = {Severity.ERROR: lsp.DiagnosticSeverity.Error, Severity.WARNING: lsp.DiagnosticSeverity.Warning,
             Severity.INFO: lsp.DiagnosticSeverity.Information}
T = TypeVar("T")


def split_lines(text: str) -> list[str]:
    return _LSP_LINES.split(text)


@dataclass
class Linted:
    version: int | None
    lines: list[str]
    text: str
    result: FileResult


def document_name(path: str, root: str) -> tuple[str, str]:
    """(path to lint the document as, directory that path is relative to): root-relative under the project
    root, else the absolute path (its relative imports still resolve: kernlint/pipeline/imports.py)."""
    root = os.path.abspath(root or ".")
    absolute = os.path.abspath(path)
    if absolute.startswith(root.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, root), root
    return absolute, ""


def load_settings(path: str | None) -> Settings:
    """Settings for a document: the nearest pyproject.toml with `[tool.kernlint]` (kernlint.pipeline.settings), as
    `kernlint check` would resolve them for that file. Untitled buffers get the defaults."""
    if path is None:
        return Settings()
    try:
        from kernlint.pipeline.settings import Resolver
    except ImportError:   # a kernlint without [tool.kernlint] support
        return Settings()
    try:
        return Resolver().for_path(path)
    except Exception:     # a malformed pyproject must not kill the editor session: defaults, and say why
        log.exception("cannot load kernlint settings for %s; using defaults", path)
        return Settings()


class KernlintServer(LanguageServer):
    def __init__(self, debounce_s: float = 0.15, max_chars: int = MAX_CHARS) -> None:
        # KernlintProtocol answers what pygls leaves hanging: requests after shutdown, requests with bad params
        super().__init__("kernlint", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
                         protocol_cls=KernlintProtocol)
        self.debounce_s = debounce_s
        self.max_chars = max_chars
        self.linted: dict[str, Linted] = {}
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._running: dict[str, asyncio.Future[Linted | None]] = {}   # the lint in flight per document
        # its cancel event and the text it lints: set when a newer text is asked for (kernlint/core/cancel.py)
        self._cancel: dict[str, tuple[threading.Event, tuple[str, int | None]]] = {}
        self._settings: dict[str, Settings] = {}     # per directory of a linted file
        # per document: the kernel analyses of its last lint, reused by the next where their inputs are the
        # same (kernlint/pipeline/incremental.py); dropped when files on disk may have changed (save, watched files)
        self._memos: dict[str, KernelMemo] = {}
        # two lint threads: a long lint (a 720 KB document takes ~10 s) no longer holds back the next document's
        # diagnostics and hovers (measured 10.2 s -> see tests/lsp/test_lsp.py); lint_text is a pure function of
        # the text and settings, and a result for a text the editor has moved past is dropped (_lint_later)
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="kernlint-lint")
        self.shut_down = False   # a `shutdown` request came: `exit` then ends with 0, else with 1 (LSP)

    # ---- linting -----------------------------------------------------------------------------------
    @property
    def encoding(self) -> str:
        try:
            return positions.normalise_encoding(self.workspace.position_encoding)
        except RuntimeError:  # before initialize
            return positions.UTF16

    def settings_for(self, path: str | None) -> Settings:
        key = str(Path(path).parent) if path else ""
        if key not in self._settings:
            self._settings[key] = load_settings(path)
        return self._settings[key]

    def reload_settings(self) -> None:
        self._settings.clear()
        self._memos.clear()

    def memo(self, uri: str) -> KernelMemo:
        memo = self._memos.get(uri)
        if memo is None:
            memo = self._memos[uri] = KernelMemo()
        return memo

    def forget_analyses(self) -> None:
        """Files on disk may have changed (a save, a watched file): the next lints analyse every kernel (and parse
        each document whole once)."""
        self._memos.clear()

    def lint_text(self, uri: str, text: str, version: int | None = None) -> Linted:
        """Lint an in-memory document (thread-safe: pure function of the text and the settings)."""
        path = to_fs_path(uri) if uri.startswith("file:") else None
        lines = split_lines(text)
        if len(text) > self.max_chars:
            d = Diagnostic("KL000", Span.at(path or uri, 1), f"document has {len(text):,} characters; the editor "
                           f"lints up to {self.max_chars:,} — run `kernlint check` on it", Severity.INFO,
                           Confidence.EXACT, "DocumentTooLarge")
            return Linted(version, lines, text, FileResult(path or uri, [d], []))
        settings = self.settings_for(path)
        with reusing(self.memo(uri)):
            if path is None:
                result = lint_source(text, "<untitled>.py", settings).files[0]
            else:
                # under its project root the document is linted by its root-relative path, as `kernlint check`
                # run there would, so its module name matches its imports and imported helpers are followed
                name, base = document_name(path, settings.root)
                result = replace(lint_source(text, name, settings, base=base).files[0], path=path)
        return Linted(version, lines, text, result)

    def _lint_unless_cancelled(self, uri: str, doc: tuple[str, int | None], event: threading.Event) -> Linted | None:
        """lint_text, or None when a newer text of the document cancelled it first."""
        with cancellable(event):
            try:
                return self.lint_text(uri, *doc)
            except LintCancelled:
                return None

    def _document(self, uri: str) -> tuple[str, int | None] | None:
        try:
            docs = self.workspace.text_documents
        except RuntimeError:
            return None
        doc = docs.get(uri)
        return (doc.source, doc.version) if doc is not None else None

    async def current(self, uri: str) -> Linted | None:
        """The lint result for the document's current version (linting now if a change is pending)."""
        doc = self._document(uri)
        if doc is None:
            return None
        cached = self.linted.get(uri)
        if cached is not None and cached.version == doc[1] and cached.text == doc[0]:
            return cached
        for _ in range(3):   # a lint cancelled by a newer text: lint that text
            linted, _ = await self._lint(uri, doc)
            if linted is not None:
                self.linted[uri] = linted
                return linted
            doc = self._document(uri) or doc
        return None

    async def _lint(self, uri: str, doc: tuple[str, int | None]) -> tuple[Linted | None, tuple[str, int | None]]:
        """Lint in a worker thread, at most one lint per document at a time: a lint of an older text still
        running is waited for and then the newest text is linted, so one large document never holds both
        threads (its lints would starve every other document's diagnostics and hovers)."""
        running = self._running.get(uri)
        if running is not None:
            event, running_doc = self._cancel[uri]
            if running_doc != doc:
                event.set()   # its text is outdated: it stops at the next kernel (kernlint/core/cancel.py)
            try:
                done = await asyncio.shield(running)
            except Exception:   # that lint's failure is reported by its own caller
                done = None
            if done is not None and running_doc == doc:
                return done, doc   # it was linting this very text (a hover waiting for diagnostics)
            doc = self._document(uri) or doc
        event = threading.Event()
        self._cancel[uri] = (event, doc)
        fut = asyncio.get_running_loop().run_in_executor(self._pool, self._lint_unless_cancelled, uri, doc, event)
        self._running[uri] = fut
        # forgotten when the thread finishes, not when the waiting task is cancelled (a new keystroke cancels
        # it, but the lint runs on): the next lint of this document waits for it
        fut.add_done_callback(lambda f: self._running.pop(uri, None) if self._running.get(uri) is f else None)
        return await asyncio.shield(fut), doc

    def schedule(self, uri: str, delay: float | None = None) -> None:
        old = self._pending.pop(uri, None)
        if old is not None:
            old.cancel()
        task = asyncio.get_running_loop().create_task(self._lint_later(uri, self.debounce_s if delay is None else delay))
        self._pending[uri] = task

    async def _lint_later(self, uri: str, delay: float) -> None:
        try:
            await asyncio.sleep(delay)
            doc = self._document(uri)
            if doc is None:
                return
            linted, doc = await self._lint(uri, doc)
            if linted is None or self._document(uri) != doc:
                return            # typed past while we linted (or it was cancelled): the newer change has its task
            self.linted[uri] = linted
            self.publish(uri, linted)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("linting %s failed", uri)
        finally:
            if self._pending.get(uri) is asyncio.current_task():
                del self._pending[uri]

    def publish(self, uri: str, linted: Linted) -> None:
        enc = self.encoding
        diags = [to_lsp_diagnostic(d, linted.lines, enc) for d in linted.result.diagnostics]
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, diags, linted.version))

    def forget(self, uri: str) -> None:
        task = self._pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self.linted.pop(uri, None)
        self._memos.pop(uri, None)
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, []))


def to_lsp_range(span: Span, lines: list[str], encoding: str) -> lsp.Range:
    start, end = positions.span_to_range(span, lines, encoding)
    return lsp.Range(lsp.Position(start.line, start.character), lsp.Position(end.line, end.character))


def to_lsp_diagnostic(d: Diagnostic, lines: list[str], encoding: str) -> lsp.Diagnostic:
    # `data` round-trips through the client into codeAction: everything a fix needs to find its estimate.
    data = {"code": d.code, "rule": d.rule, "kernel": d.kernel, "target": d.target, "config": d.config,
            "line": d.span.start.line, "confidence": d.confidence.value}
    message = d.message + "".join(f"\n{n}" for n in d.notes)
    return lsp.Diagnostic(range=to_lsp_range(d.span, lines, encoding), message=message,
                          severity=_SEVERITY[d.severity], code=d.code, source="kernlint",
                          code_description=lsp.CodeDescription(href=f"{DOCS_URL}#{d.code.lower()}"), data=data)


def to_lsp_edit(edit: actions.TextEdit, lines: list[str], encoding: str) -> lsp.TextEdit:
    text = lines[edit.line - 1] if 0 < edit.line <= len(lines) else ""
    start = lsp.Position(edit.line - 1, positions.col_to_units(text, edit.start_col, encoding))
    end = lsp.Position(edit.line - 1, positions.col_to_units(text, edit.end_col, encoding))
    return lsp.TextEdit(lsp.Range(start, end), edit.new_text)


def _guarded(default: T) -> Callable[[Callable[..., Awaitable[T]]], Callable[..., Awaitable[T]]]:
    def wrap(fn: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
        @functools.wraps(fn)
        async def run(params: Any) -> T:
            try:
                return await fn(params)
            except Exception:
                log.exception("%s failed", fn.__name__)
                return default
        return run
    return wrap


def code_actions(ls: KernlintServer, uri: str, linted: Linted, diagnostics: list[lsp.Diagnostic]) -> list[lsp.CodeAction]:
    enc = ls.encoding
    out: list[lsp.CodeAction] = []
    for diag in diagnostics:
        if diag.source != "kernlint" or not isinstance(diag.code, str):
            continue
        data = diag.data if isinstance(diag.data, dict) else {}
        line = data.get("line") if isinstance(data.get("line"), int) else diag.range.start.line + 1
        fixes = actions.config_fixes(linted.text, linted.result.kernels, diag.code, {**data, "line": line})
        noqa = actions.noqa_fix(linted.lines, line, diag.code)
        fixes += [noqa] if noqa else []
        for fix in fixes:
            edit = lsp.WorkspaceEdit(changes={uri: [to_lsp_edit(fix.edit, linted.lines, enc)]})
            out.append(lsp.CodeAction(fix.title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[diag],
                                      edit=edit, is_preferred=fix.preferred or None))
    return out


def create_server(debounce_s: float = 0.15, max_chars: int = MAX_CHARS) -> KernlintServer:
    ls = KernlintServer(debounce_s, max_chars)

    @ls.feature(lsp.INITIALIZED)
    @_guarded(None)
    async def initialized(params: lsp.InitializedParams) -> None:
        caps = ls.client_capabilities.workspace
        watched = caps.did_change_watched_files if caps else None
        if watched and watched.dynamic_registration:
            watcher = lsp.FileSystemWatcher(glob_pattern="**/pyproject.toml")
            options = lsp.DidChangeWatchedFilesRegistrationOptions(watchers=[watcher])
            await ls.client_register_capability_async(lsp.RegistrationParams(registrations=[
                lsp.Registration("kernlint-pyproject", lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, options)]))

    @ls.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    @_guarded(None)
    async def did_open(params: lsp.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, delay=0)

    @ls.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    @_guarded(None)
    async def did_change(params: lsp.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @ls.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    @_guarded(None)
    async def did_save(params: lsp.DidSaveTextDocumentParams) -> None:
        ls.forget_analyses()   # other documents may import what was saved
        ls.schedule(params.text_document.uri, delay=0)

    @ls.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    @_guarded(None)
    async def did_close(params: lsp.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    @ls.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @_guarded(None)
    async def watched_files(params: lsp.DidChangeWatchedFilesParams) -> None:
        ls.forget_analyses()
        if any(c.uri.endswith("pyproject.toml") for c in params.changes):
            log.info("pyproject.toml changed: reloading settings")
            ls.reload_settings()
            for uri in list(ls.linted):
                ls.schedule(uri, delay=0)

    @ls.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
    @_guarded([])
    async def code_action(params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        linted = await ls.current(params.text_document.uri)
        if linted is None:
            return []
        return code_actions(ls, params.text_document.uri, linted, list(params.context.diagnostics))

    @ls.feature(lsp.TEXT_DOCUMENT_HOVER)
    @_guarded(None)
    async def on_hover(params: lsp.HoverParams) -> lsp.Hover | None:
        linted = await ls.current(params.text_document.uri)
        if linted is None:
            return None
        found = hover.kernel_at_line(linted.result.kernels, params.position.line + 1)
        if found is None:
            return None
        text = hover.hover_markdown(*found)
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))

    @ls.feature(lsp.SHUTDOWN)
    @_guarded(None)
    async def shutdown(params: Any) -> None:
        ls.shut_down = True
        for task in ls._pending.values():
            task.cancel()
        ls._pool.shutdown(wait=False, cancel_futures=True)

    return ls


def main(debounce_ms: int = 150, log_file: str | None = None) -> None:
    logging.basicConfig(filename=log_file, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("pygls").setLevel(logging.WARNING)   # pygls logs every message at INFO
    server = create_server(debounce_ms / 1000)
    server.start_io()
    # LSP: `exit` ends the process with 0 after a `shutdown` request, else 1 (also when the client just closed
    # stdin). Exit now: a lint still running in the worker thread would otherwise hold the interpreter until it
    # finishes (16.8 s on a 720 KB document, measured), and its result has no one to go to.
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # pygls closes stdout on exit
            pass
    os._exit(0 if server.shut_down else 1)
