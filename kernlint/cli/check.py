"""The work behind `kernlint check` between argument parsing and reporting: settings, cache, `-j`,
stdin, `--show-settings`, `--add-noqa`, `--watch`. Imported on the cold path: no engine imports here."""
from __future__ import annotations

import argparse
import errno
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from kernlint.pipeline.results import LintResult
from kernlint.frontend.arg_values import ArgValueError, parse_arg_items
from kernlint.pipeline.settings import Overrides, Resolver, Settings, SettingsError, rule_prefix, unknown_codes
from kernlint.core.text_lines import source_lines

# Formats that only need diagnostics and counts, which the cache keeps. Any other format (json, junit,
# markdown, and formats added later) gets the kernels' estimates: linted in-process, cache bypassed.
DIAGNOSTICS_ONLY = {"full", "concise", "github", "json-lines", "gitlab", "rdjson", "sarif"}


class CheckError(Exception):
    """Bad usage or configuration (exit code 2)."""


def _codes(text: str | None) -> tuple[str, ...]:
    return tuple(rule_prefix(c) for c in (text or "").split(",") if c.strip())


def parse_arg_options(items: list[str]) -> dict[str, str]:
    """`--arg NAME=VALUE` options (check, explain, debug) → {name: value text}; CheckError on a malformed one.
    Read by the parser calibrate and recommend use too (types, example values, None, dtypes)."""
    try:
        return {name: value.lint_text() for name, value in parse_arg_items(items).items()}
    except ArgValueError as exc:
        raise CheckError(str(exc)) from None


def check_config_values(options: list[str]) -> None:
    """`--config BLOCK_SIZE=abc` used to become a nonsense estimate: a value must be an integer (or
    True/False, a dtype, or a float for a scalar constexpr)."""
    for option in options:
        for part in option.split(","):
            name, eq, raw = (s.strip() for s in part.partition("="))
            if not eq or not name:
                continue   # parse_config_option says "expected NAME=VALUE"
            if raw in ("True", "False") or raw.startswith(("tl.", "triton.language.")):
                continue   # flags and dtypes (ACC_DTYPE=tl.float32) are constexpr values too
            try:
                int(raw, 0)
            except ValueError:
                try:
                    float(raw)
                except ValueError:
                    raise CheckError(f"--config {name}={raw}: not an integer") from None


def check_config_keys(options: list[str], kernels: list[Any]) -> None:
    """A `--config` key that is a constexpr of none of the kernels (a typo: BLOK_SIZE) used to pass silently:
    the config vanished or was estimated without it. Name it and the constexprs the kernels do have."""
    from kernlint.analysis.configs import parse_config_option

    launch = {"num_warps", "num_stages", "maxnreg", "num_ctas"}
    names = {n for k in kernels for n in k.jit.constexpr_names} | launch
    for option in options:
        try:
            unknown = [key for key in parse_config_option(option) if key not in names]
        except ValueError as exc:
            raise CheckError(str(exc)) from None
        if not unknown or not kernels:
            continue
        has = "; ".join(f"kernel {k.jit.qualname} has {', '.join(sorted(k.jit.constexpr_names)) or 'no constexprs'}"
                        for k in kernels[:5]) + ("; ..." if len(kernels) > 5 else "")
        raise CheckError(f"--config {option!r}: unknown constexpr {', '.join(unknown)}; {has}")


def overrides(args: argparse.Namespace) -> Overrides:
    configs = None
    if getattr(args, "config", None):
        from kernlint.analysis.configs import parse_config_option  # only when --config is given

        check_config_values(args.config)
        try:
            configs = tuple(parse_config_option(c) for c in args.config)
        except ValueError as exc:
            raise CheckError(str(exc)) from None
    arg_types = parse_arg_options(getattr(args, "arg", []) or [])
    targets = tuple(t.strip() for spec in getattr(args, "target", []) or [] for t in spec.split(",") if t.strip())
    return Overrides(
        select=_codes(args.select) if getattr(args, "select", "") else None,
        ignore=_codes(getattr(args, "ignore", "")), extend_select=_codes(getattr(args, "extend_select", "")),
        targets=targets or None, cli_configs=configs, arg_types=arg_types,
        exclude=_codes_raw(getattr(args, "exclude", None)), extend_exclude=_codes_raw(getattr(args, "extend_exclude", None)) or (),
        output_format=getattr(args, "output_format", None), cache_dir=getattr(args, "cache_dir", None),
        triton_version=getattr(args, "triton_version", None), max_file_size=getattr(args, "max_file_size", None))


def _codes_raw(text: str | None) -> tuple[str, ...] | None:
    return tuple(p.strip() for p in text.split(",") if p.strip()) if text else None


def resolver(args: argparse.Namespace) -> Resolver:
    try:
        r = Resolver(overrides(args), getattr(args, "config_file", None), getattr(args, "isolated", False))
        r.check_overrides()
    except SettingsError as exc:
        raise CheckError(str(exc)) from None
    return r


def known_codes(settings: Settings, use_cache: bool) -> set[str]:
    """Every rule code; remembered in the cache so a warm run never imports the rules (and libcst)."""
    from kernlint.pipeline.cache import Cache, model_hash

    cache = Cache(settings.cache_dir) if use_cache else None
    got = cache.get("meta", "codes-" + model_hash()) if cache else None
    if got is None:
        from kernlint.pipeline.registry import all_rules

        got = sorted(r.CODE for r in all_rules())
        if cache:
            cache.put("meta", "codes-" + model_hash(), got)
    return {*got, "KL000"}   # the engine's internal-error code: naming it in ignore is not a typo


def _warn_unknown(settings: Settings, use_cache: bool, err: TextIO) -> None:
    requested = {*settings.select, *settings.ignore, *settings.extend_select,
                 *(c for _, codes in settings.per_file_ignores for c in codes)}
    if not requested:
        return
    for code in unknown_codes(tuple(sorted(requested)), known_codes(settings, use_cache)):
        err.write(f"kernlint: warning: unknown rule code or prefix {code!r} in select/ignore "
                  f"({settings.source or 'command line'}); it selects nothing\n")


def lint(args: argparse.Namespace, err: TextIO | None = None,
         stats: object | None = None) -> tuple[LintResult, Settings, dict[str, list[str]]]:
    """Lint what `args` names; returns the result, the settings for the report, and stdin's lines."""
    from kernlint.pipeline.runner import Options, RunStats, run

    err = err or sys.stderr
    res = resolver(args)
    # `--stdin-filename` alone reads stdin, as ruff does (it used to lint the current directory instead)
    paths = list(args.paths) or (["-"] if args.stdin_filename else ["."])
    stdin: tuple[str, bytes | OSError] | None = None
    lines: dict[str, list[str]] = {}
    if "-" in paths:
        name = args.stdin_filename or "<stdin>"
        limit = res.for_path(name).max_file_size
        # at most one byte over the limit is read: an endless stream is refused, not buffered
        data = sys.stdin.buffer.read(limit + 1) if hasattr(sys.stdin, "buffer") else sys.stdin.read(limit + 1).encode()
        if args.force_exclude and args.stdin_filename and res.for_path(name).is_excluded(name):
            data = None   # pre-commit/editor integrations: an excluded name is skipped from stdin too
        elif len(data) > limit:
            from kernlint.core.source_files import SourceRefused, too_large

            stdin = (name, SourceRefused(errno.EFBIG, too_large(len(data), limit).replace(
                f"{len(data):,} bytes", f"more than {limit:,} bytes"), name))
        else:
            stdin = (name, data)
            lines[name] = source_lines(data.decode("utf-8", errors="replace"))
        if data is None and paths == ["-"]:
            return LintResult([]), res.for_path(name), lines
    first = paths[0] if paths[0] != "-" else (args.stdin_filename or ".")
    try:
        report_settings = res.for_path(first)
    except SettingsError as exc:
        raise CheckError(str(exc)) from None
    fmt = args.output_format or report_settings.output_format
    options = Options(jobs=args.jobs or os.cpu_count() or 1, cache=not args.no_cache,
                      force_exclude=args.force_exclude, stdin=stdin,
                      # --fix/--diff re-run estimates, which the cache does not keep
                      # --config's keys are checked against the kernels' constexprs, which the cache does not keep
                      need_estimates=fmt not in DIAGNOSTICS_ONLY or bool(getattr(args, "fix", False) or getattr(args, "diff", False)
                                                                        or getattr(args, "config", None)))
    try:
        _warn_unknown(report_settings, options.cache, err)
        result = run(paths, res, options, stats if stats is not None else RunStats())  # type: ignore[arg-type]
    except SettingsError as exc:
        raise CheckError(str(exc)) from None
    if getattr(args, "config", None):
        check_config_keys(args.config, [k for f in result.files for k in f.kernels])
    for warning in result.warnings:
        err.write(f"kernlint: warning: {warning}\n")
    for problem in result.path_errors:   # the other paths were linted and are reported; the exit code is 2
        err.write(f"kernlint: error: {problem}\n")
    return result, report_settings, lines


def show_settings(args: argparse.Namespace, out: TextIO) -> int:
    res = resolver(args)
    targets = [p for p in args.paths if p != "-"] or ["."]
    try:
        for path in targets:
            settings = res.for_path(path)
            out.write(f"# {path}\n" + settings.for_file(path).describe())
    except SettingsError as exc:
        raise CheckError(str(exc)) from None
    return 0


def add_noqa(args: argparse.Namespace, out: TextIO) -> int:
    from kernlint.cli.add_noqa import add_noqa as insert

    args.no_cache = True  # the edit must see current findings, and the edited files change anyway
    result, _, _ = lint(args)
    failed: list[str] = []
    changed = insert(result, failed)
    for problem in failed:
        sys.stderr.write(f"kernlint: error: {problem}\n")
    total = sum(changed.values())
    out.write(f"Added {total} noqa directive{'' if total == 1 else 's'} in {len(changed)} file(s).\n")
    return 2 if result.internal_errors or result.path_errors or failed else 0


def fix(args: argparse.Namespace, out: TextIO,
        report: Callable[[LintResult, Settings, dict[str, list[str]]], int]) -> int:
    """`--diff`: print the unified diff, exit 1 when there is something to fix. `--fix --unsafe-fixes`:
    apply, then report what is left. `--fix` alone applies nothing: every fix here is unsafe."""
    from kernlint.fix import fix_result, unified_diff, write_atomic

    if "-" in args.paths:
        raise CheckError("--fix/--diff rewrite files; they cannot read the source from stdin")
    result, settings, lines = lint(args)
    fixes = fix_result(result)
    for f in fixes:
        if f.error:
            sys.stderr.write(f"kernlint: warning: {f.error}\n")
        for edit, why in f.skipped:
            sys.stderr.write(f"kernlint: {f.path}:{edit.line}: {edit.code} not fixed: {why}\n")
    changed = [f for f in fixes if f.changed]
    count = sum(len(f.applied) for f in changed)
    if args.diff:
        sink = out
        if getattr(args, "output_file", None):   # `-o FILE` takes the diff too (it went to stdout)
            try:
                sink = open(args.output_file, "w", encoding="utf-8", newline="")
            except OSError as exc:
                raise CheckError(f"cannot write {args.output_file}: {exc.strerror}") from None
        try:
            for f in changed:
                sink.write(unified_diff(f))
        finally:
            if sink is not out:
                sink.close()
        sys.stderr.write(f"Would fix {count} finding{'s' if count != 1 else ''} in {len(changed)} file(s) "
                         "(unsafe fixes: they change which configs run).\n" if count else "No fixes available.\n")
        return 2 if result.internal_errors or result.path_errors else (1 if changed else 0)
    if not args.unsafe_fixes:
        if count:
            sys.stderr.write(f"kernlint: {count} fix{'es' if count != 1 else ''} available, all unsafe (they change "
                             "which configs run); see them with --diff, apply them with --fix --unsafe-fixes\n")
        return report(result, settings, lines)
    written = []
    for f in changed:
        if _read_only(f.path):
            # a file its owner made read-only is not rewritten behind their back (ruff: permission denied)
            sys.stderr.write(f"kernlint: error: {f.path}: read-only; not fixed\n")
            continue
        try:
            with open(f.path, "rb") as fh:   # the content the edits were planned on, just before the write
                unchanged = fh.read() == f.old
            if not unchanged:
                sys.stderr.write(f"kernlint: error: {f.path}: changed while it was being fixed; not fixed\n")
                continue
            write_atomic(f.path, f.new)
            written.append(f)
        except OSError as exc:   # e.g. a directory the temporary file cannot be created in
            sys.stderr.write(f"kernlint: error: {f.path}: cannot write: {exc.strerror or exc}; not fixed\n")
    count = sum(len(f.applied) for f in written)
    if count:
        sys.stderr.write(f"Fixed {count} finding{'s' if count != 1 else ''} in {len(written)} file(s).\n")
    code = report(*lint(args)) if written else report(result, settings, lines)
    return 2 if len(written) < len(changed) else code


def _read_only(path: str) -> bool:
    """No write permission for us, or (as root, who may write anyway) no write bit for anyone."""
    real = os.path.realpath(path)
    try:
        return not os.access(real, os.W_OK) or not os.stat(real).st_mode & 0o222
    except OSError:
        return False


def _mtimes(args: argparse.Namespace) -> dict[str, float]:
    from kernlint.pipeline.runner import discover

    found: dict[str, float] = {}
    try:
        for f in discover([p for p in args.paths if p != "-"] or ["."], resolver(args), args.force_exclude):
            try:
                found[f] = os.stat(f).st_mtime_ns
            except OSError:
                found[f] = -1
    except Exception:  # a path vanished between polls: report it on the next lint
        pass
    for name in ("pyproject.toml",):  # settings changes re-lint too
        p = Path(name)
        if p.is_file():
            found[str(p)] = p.stat().st_mtime_ns
    return found


def watch(args: argparse.Namespace, report: Callable[[LintResult, Settings, dict[str, list[str]]], int],
          out: TextIO, interval: float = 0.5, iterations: int | None = None,
          sleep: Callable[[float], None] = time.sleep) -> int:
    """Lint, then re-lint whenever a file's mtime changes (the cache keeps unchanged files cheap).
    `iterations` bounds the number of polls (tests); Ctrl-C ends the loop with exit code 0."""
    code = 0
    try:
        seen = _mtimes(args)
        code = report(*lint(args))
        out.write("[kernlint] watching for changes (Ctrl-C to stop)\n")
        polls = 0
        while iterations is None or polls < iterations:
            sleep(interval)
            polls += 1
            now = _mtimes(args)
            if now != seen:
                changed = sorted(p for p in now.keys() | seen.keys() if now.get(p) != seen.get(p))
                seen = now
                out.write(f"[kernlint] {len(changed)} file(s) changed: {', '.join(changed[:5])}\n")
                try:
                    code = report(*lint(args))
                except CheckError as exc:  # e.g. a half-edited pyproject.toml: say so, keep watching
                    sys.stderr.write(f"kernlint: error: {exc}\n")
                    code = 2
    except KeyboardInterrupt:
        return 0
    return code
