"""The lint pipeline: what runs the engine over files and what a run produces.

`api` (lint_paths, lint_source: files → facts → graph → estimates → rules), `helion` (the same for
`@helion.kernel`), `runner` (many files: discovery, per-file settings, the cache, `-j` workers), `cache`,
`incremental` (kernel analyses the language server reuses between edits), `imports` (helpers defined in files
outside the run), `settings` (`[tool.kernlint]` and command-line overrides), `results` (the types reporters
read), `suppression` (`# kernlint: noqa`), `autotune_candidates`, and the rule API: `rule` (the base class
every rule subclasses), `rule_messages`, `registry` (rule discovery).

Empty on purpose: the command line's cold path imports `settings` and `results` without the engine.
"""
