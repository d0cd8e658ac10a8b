"""The `kernlint` command: `commands` parses arguments and dispatches (`kernlint check`, `rule`, `explain`,
`server`, ...); `check` is the work behind `kernlint check` (settings, cache, `-j`, `--watch`, `--fix`);
`add_noqa` writes `--add-noqa` suppressions. The engine and the reporters load lazily, per command.

`main` is the console script's entry point (`kernlint = "kernlint.cli:main"`) and `python -m kernlint`'s.
"""
from __future__ import annotations

from kernlint.cli.commands import main

__all__ = ["main"]
