"""Kernel analyses reused between lints of one document: the language server's re-lint after an edit.

A kernel's analysis (`api.analyse_kernel`: its graph, config points and estimates) is a function of the
kernel's own text, what that text reads from its module (helpers, constants, config lists, imports), its
launch sites, the other files linted with it, the settings and the targets. A `KernelMemo` keeps each
kernel's analysis under a digest of those inputs; the next lint of the document analyses only the kernels
whose digest changed and takes the others from the memo.

The digest is conservative, read from CPython's tree of the document:
- the top-level statement holding the kernel, and every top-level statement that defines a name the digested
  statements mention (any identifier of their text, strings and attributes included, so a name reached only
  through `mod.helper` or a string annotation still counts), to a fixed point; star imports always. Each
  statement enters with its text and its first and last line, so a statement that moved is a new input;
- the kernel's launch sites as the facts give them (`LaunchSite` values: callee, keywords, line, host
  dtypes), wherever they are;
- the path and content digest of every other file of the lint (context files followed through imports);
- the file's resolved settings and the targets.
Comments and blank lines between top-level statements are in no statement: editing them reuses every kernel.
What the digest does not see is a module the name resolver reads on disk to follow a re-export; the server
clears its memos when a document is saved or a watched file changes (kernlint/lsp/server.py).

Diagnostics are identical to a fresh lint (tests/pipeline/test_incremental.py edits files several ways and compares).
The memo is handed to the engine through a context variable (`reusing`), which `deep_stack.run_deep` carries
to its thread.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kernlint.frontend.cst_reuse import StatementCache
    from kernlint.pipeline.rule import KernelAnalysis

_IDENT = re.compile(r"[A-Za-z_]\w*")
_CURRENT: ContextVar[KernelMemo | None] = ContextVar("kernlint_kernel_memo", default=None)
# analyses kept per document: every kernel of the last lint (a document has tens of kernels, not thousands)
MAX_ENTRIES = 4096


class KernelMemo:
    """Analyses by input digest, for one document; the entries of the last lint survive the next one."""

    def __init__(self) -> None:
        self._entries: dict[str, Any] = {}    # KernelAnalysis, or a `reuse` value
        self._used: dict[str, Any] = {}
        self._files: dict[str, bytes] = {}   # path -> content digest of every file of the lint (`begin`)
        self.inputs: dict[str, ModuleInputs | None] = {}   # path -> its statements, this lint (api._lint_one)
        self.per_lint: dict[Any, Any] = {}   # results several rules of this lint share (`file_misuses`)
        self._statements: dict[str, StatementCache] = {}   # path -> libcst statements of its last text
        self.hits = 0
        self.misses = 0

    def begin(self, files: list[tuple[str, bytes]]) -> None:
        """A lint starts: `files` are the (path, bytes) of every file in it, linted or context."""
        self._files = {path: hashlib.sha256(data).digest() for path, data in files}
        self._used = {}
        self.inputs = {}
        self.per_lint = {}

    def statements(self, path: str) -> StatementCache:
        """The libcst statements of `path`'s previous text (kernlint.frontend.cst_reuse): its parse re-uses them."""
        from kernlint.frontend.cst_reuse import StatementCache

        found = self._statements.get(path)
        if found is None:
            if len(self._statements) >= 64:   # the document and the files it imports, not a whole project
                self._statements.clear()
            found = self._statements[path] = StatementCache()
        return found

    def context(self, path: str) -> str:
        """Digest of the files of this lint other than `path`: helpers, launches and constants they hold."""
        h = hashlib.sha256()
        for other, digest in sorted(self._files.items()):
            if other != path:
                h.update(other.encode("utf-8", "surrogatepass") + b"\0" + digest)
        return h.hexdigest()

    def end(self) -> None:
        """The lint finished: only the analyses it used (or made) are kept for the next one."""
        self._entries = self._used if len(self._used) <= MAX_ENTRIES else {}
        self._used = {}
        self.inputs = {}
        self.per_lint = {}

    def analyse(self, key: str | None, jit: Any, compute: Callable[[], KernelAnalysis]) -> KernelAnalysis:
        """The analysis under `key` (with this lint's `jit`, whose syntax nodes belong to this lint's tree),
        else `compute()`'s, kept under `key`."""
        if key is None:
            self.misses += 1
            return compute()
        found = self._entries.get(key) or self._used.get(key)
        if found is not None:
            self.hits += 1
            found = replace(found, jit=jit)
        else:
            self.misses += 1
            found = compute()
        self._used[key] = found
        return found

    def reuse(self, key: str | None, compute: Callable[[], Any]) -> Any:
        """A value without syntax nodes (API-scan findings) under `key`, else `compute()`'s, kept under `key`."""
        if key is None:
            return compute()
        if key in self._entries or key in self._used:
            found = self._entries[key] if key in self._entries else self._used[key]
        else:
            found = compute()
        self._used[key] = found
        return found


def current() -> KernelMemo | None:
    """The memo of the lint running in this context, if any."""
    return _CURRENT.get()


@contextmanager
def reusing(memo: KernelMemo) -> Iterator[None]:
    """Lints run inside reuse and fill `memo`."""
    token = _CURRENT.set(memo)
    try:
        yield
    finally:
        _CURRENT.reset(token)


# (statement's lines, its first and last column) -> (identifiers it mentions, names it defines): a statement's
# names follow from its source, and a re-lint meets the same statements again (walking each one's tree was
# a sixth of a re-lint once the parse re-used its statements)
_NAMES: dict[tuple[str, int, int | None], tuple[frozenset[str], frozenset[str]]] = {}


class ModuleInputs:
    """The top-level statements of one file's text, with the names each defines and mentions."""

    def __init__(self, text: str, tree: ast.Module) -> None:
        lines = text.splitlines(keepends=True)
        self.spans: list[tuple[int, int]] = []
        self.texts: list[str] = []
        self.mentions: list[frozenset[str]] = []
        self.defines: dict[str, list[int]] = {}
        self.always: list[int] = []    # star imports: they may define any name
        for i, stmt in enumerate(tree.body):
            first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])
            last = stmt.end_lineno or stmt.lineno
            body = "".join(lines[first - 1:last])
            self.spans.append((first, last))
            self.texts.append(body)
            key = (body, stmt.col_offset, stmt.end_col_offset)   # `a = 1; b = 2`: two statements, one text
            names = _NAMES.get(key)
            if names is None:
                if len(_NAMES) >= MAX_ENTRIES:
                    _NAMES.clear()
                names = _NAMES[key] = (frozenset(_IDENT.findall(body)), frozenset(_defined(stmt)))
            self.mentions.append(names[0])
            for name in names[1]:
                if name == "*":
                    self.always.append(i)
                else:
                    self.defines.setdefault(name, []).append(i)

    def statement_at(self, line: int) -> int | None:
        for i, (first, last) in enumerate(self.spans):
            if first <= line <= last:
                return i
        return None

    def closure(self, start: int) -> list[int]:
        """`start` and every statement defining a name the statements reached mention, in file order."""
        seen = {start, *self.always}
        todo = list(seen)
        while todo:
            for name in self.mentions[todo.pop()]:
                for j in self.defines.get(name, ()):
                    if j not in seen:
                        seen.add(j)
                        todo.append(j)
        return sorted(seen)

    def digest(self, line: int, extra: str) -> str | None:
        """The input digest of the kernel whose `def` is at `line`; None when no statement holds it."""
        start = self.statement_at(line)
        if start is None:
            return None
        h = hashlib.sha256(extra.encode("utf-8", "surrogatepass"))
        for i in self.closure(start):
            first, last = self.spans[i]
            h.update(f"\0{first}:{last}\0".encode())
            h.update(self.texts[i].encode("utf-8", "surrogatepass"))
        return h.hexdigest()


def _defined(stmt: ast.stmt) -> set[str]:
    """Module-level names a top-level statement binds: its own def/class name, or every name bound anywhere
    in it (under `if`/`try`/`with`/`for` too), imports by their bound name, `*` for a star import; a function
    or class also binds the names its functions declare `global`."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name} | {n for node in ast.walk(stmt) if isinstance(node, ast.Global) for n in node.names}
    out: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Import):
            out |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            out |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Global):
            out |= set(node.names)
    return out


def kernel_key(inputs: ModuleInputs | None, memo: KernelMemo, jit: Any, sites: list[Any], path: str,
               settings: Any, targets: tuple[Any, ...]) -> str | None:
    """The digest `KernelMemo.analyse` keys `jit`'s analysis by (None: not reusable)."""
    if inputs is None:
        return None
    # an autotune list read from the package's data files (frontend.data_configs) changes with the file, not
    # with the kernel's text
    data = jit.autotune.data if jit.autotune is not None else None
    extra = "\0".join([memo.context(path), path, jit.module, jit.qualname, repr(settings),
                       ",".join(t.key for t in targets), repr(sites), repr(data)])
    return inputs.digest(jit.line, extra)


def module_inputs(text: str | None) -> ModuleInputs | None:
    """`ModuleInputs` of a file's text (None when CPython does not parse it: nothing is reused)."""
    if text is None:
        return None
    from kernlint.frontend.parse import parse_ast
    try:
        return ModuleInputs(text, parse_ast(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def file_misuses(ctx: Any, release: str | None) -> list[Any] | None:
    """`api_usage.file_misuses` inside a re-lint: each jit function's findings reused while its inputs (the
    digest kernels use, with the release scope) are the same. None outside a memo, or where the file's
    statements are unknown: the caller scans as always."""
    memo = current()
    inputs = memo.inputs.get(ctx.path) if memo is not None else None
    if memo is None or inputs is None:
        return None
    from kernlint.frontend.api_usage import api_misuses, misuse_order
    from kernlint.frontend.triton_api import load, release_scope

    scope = release_scope(release)
    shared = ("api misuses", ctx.path, scope)
    if shared in memo.per_lint:   # four rules read the scan of one file
        return memo.per_lint[shared]  # type: ignore[no-any-return]
    api, context = load(), memo.context(ctx.path)
    found: list[Any] = []
    for jit in ctx.jit_functions:
        key = inputs.digest(jit.line, "\0".join(["api misuses", repr(scope), context, jit.module, jit.qualname]))
        found += memo.reuse(key, functools.partial(api_misuses, [jit], ctx.names, api, scope))
    memo.per_lint[shared] = out = sorted(set(found), key=misuse_order)
    return out
