"""Stopping a lint that nobody waits for any more (the editor sent a newer text of the document).

The language server lints in worker threads; a lint of a 700 KB document takes tens of seconds, and the
text it lints is often outdated a keystroke later. The server runs each lint inside `cancellable(event)`
and sets the event when a newer text arrives; the engine calls `check()` between kernels (api._lint_one),
which raises `LintCancelled` there. Per thread (threading.local), so one document's lint never stops
another's. `LintCancelled` is a BaseException: the engine's per-file `except Exception` (a crash becomes a
KL000 finding) must not turn a cancellation into a finding.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class LintCancelled(BaseException):
    """The lint's result is no longer wanted."""


_current = threading.local()


@contextmanager
def cancellable(event: threading.Event) -> Iterator[None]:
    """Let `check()` in this thread raise LintCancelled once `event` is set."""
    previous = getattr(_current, "event", None)
    _current.event = event
    try:
        yield
    finally:
        _current.event = previous


def current_event() -> threading.Event | None:
    """This thread's cancellation event, to hand to a thread that lints on its behalf (deep_stack)."""
    return getattr(_current, "event", None)


def check() -> None:
    """Raise LintCancelled if this thread's lint was cancelled; free otherwise (one attribute read)."""
    event = getattr(_current, "event", None)
    if event is not None and event.is_set():
        raise LintCancelled
