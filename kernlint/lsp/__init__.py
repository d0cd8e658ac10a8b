"""The language server (`kernlint server`). Only this package imports pygls; importing `kernlint.lsp`
itself does not, so `kernlint check` and the pure helpers (positions, hover, actions) never pay for it."""
from __future__ import annotations


def serve(debounce_ms: int = 150, log_file: str | None = None) -> None:
    from kernlint.lsp.server import main

    main(debounce_ms, log_file)
