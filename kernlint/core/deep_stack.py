"""Run the engine on a thread with a deep stack, so that code nested as deep as CPython accepts is linted.

CPython 3.11 at its default recursion limit accepts syntax trees about 3,000 levels deep (a 2,986-term sum,
a 2,984-branch `elif` chain). libcst's parser and visitors, and kernlint's recursive lowering, spend a few
Python frames per level, so such a file needs a recursion limit of ~20,000 and a C stack larger than the
8 MB of a main thread (libcst's native parser recursed past it). A thread gets both; the few touched pages
of its stack are all the memory it costs. Measured: a 2,986-term sum in a kernel lints in 11 s, 57 MB.
"""
from __future__ import annotations

import contextvars
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from kernlint.core import cancel

T = TypeVar("T")

STACK_BYTES = 256 * 1024 * 1024   # virtual; ast.parse of a 59,000-deep chain ran in it at RECURSION_LIMIT
RECURSION_LIMIT = 20_000          # the lowest of the measured limits at which every ~3,000-deep input linted
_LOCK = threading.Lock()          # threading.stack_size is process-wide: set, start, restore under a lock


def run_deep(fn: Callable[..., T], *args: object) -> T:
    """`fn(*args)` on a deep-stack thread (or directly when already on one); exceptions propagate."""
    if getattr(_local, "deep", False):
        return fn(*args)
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        # raised only, never lowered: another thread may be deep in a lint at this moment
        sys.setrecursionlimit(RECURSION_LIMIT)
    event = cancel.current_event()
    # the caller's context variables (kernlint.pipeline.incremental's memo) hold on the deep thread too
    context = contextvars.copy_context()
    box: dict[str, object] = {}

    def body() -> None:
        _local.deep = True
        try:
            if event is not None:
                with cancel.cancellable(event):
                    box["result"] = context.run(fn, *args)
            else:
                box["result"] = context.run(fn, *args)
        except BaseException as exc:  # re-raised on the caller's thread (LintCancelled included)
            box["error"] = exc

    with _LOCK:
        previous = threading.stack_size(STACK_BYTES)
        try:
            thread = threading.Thread(target=body, name="kernlint-deep", daemon=True)
            thread.start()
        finally:
            threading.stack_size(previous)
    thread.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["result"]  # type: ignore[return-value]


_local = threading.local()
