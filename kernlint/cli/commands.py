"""Command line: argument parsing only; the work happens in kernlint.pipeline.api and the reporters."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from kernlint import __version__
from kernlint.core.text_lines import source_lines

if TYPE_CHECKING:
    from kernlint.pipeline.results import LintResult
    from kernlint.pipeline.settings import Settings

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    pass


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", action="append", default=[], metavar="GPU",
                   help="h100 (default), h200, b200, a100, l40s, rtx4090, rtx5090, sm_90, ...; repeatable or comma-separated")
    p.add_argument("--config", action="append", default=[], metavar="K=V,...",
                   help="extra config to analyse, e.g. 'BLOCK_M=128,BLOCK_N=128,num_warps=8,num_stages=3'")
    p.add_argument("--triton-version", default=None, metavar="X.Y",
                   help="Triton release the API rules (KL310-KL313) judge, e.g. 3.4 (default: the newest known)")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=TYPE",
                   help="argument type, e.g. a_ptr=*bf16, stride_ak=1, eps=fp32; '*=*fp32' sets the default pointer dtype")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kernlint", description="Static linter for Triton GPU kernels.")
    parser.add_argument("--version", action="version", version=f"kernlint {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="lint files and directories")
    check.add_argument("paths", nargs="*", default=[])
    _common(check)
    check.add_argument("--select", default="", help="comma-separated code prefixes to enable (e.g. KL1,KL201)")
    check.add_argument("--ignore", default="", help="comma-separated code prefixes to disable")
    check.add_argument("--extend-select", default="", help="code prefixes to enable on top of `select`")
    check.add_argument("--exclude", default=None, help="comma-separated globs to skip (replaces the configured list)")
    check.add_argument("--extend-exclude", default=None, help="comma-separated globs to skip on top of `exclude`")
    check.add_argument("--output-format", choices=_formats(), default=None,
                       help="report format (default: `output-format` from pyproject.toml, else full)")
    check.add_argument("--output-file", "-o", metavar="PATH", help="write the report to PATH instead of stdout")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--statistics", action="store_true", help="count findings per rule")
    check.add_argument("--no-color", action="store_true")
    check.add_argument("--force-exclude", action="store_true",
                       help="apply exclude to files passed explicitly too (pre-commit passes every changed file)")
    check.add_argument("--stdin-filename", metavar="PATH", help="the name (and settings) for source read from `-`")
    check.add_argument("-j", "--jobs", type=int, default=0, metavar="N", help="worker processes (default: cores)")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write .kernlint_cache")
    check.add_argument("--max-file-size", type=_file_size, default=None, metavar="BYTES",
                       help="files larger than this get KL001 and are not linted (default 2MB; e.g. 4MB, 512KB)")
    check.add_argument("--cache-dir", default=None, metavar="DIR", help="cache directory (default .kernlint_cache)")
    check.add_argument("--watch", action="store_true", help="re-lint whenever a file changes")
    check.add_argument("--add-noqa", action="store_true", help="suppress every current finding with a noqa comment")
    check.add_argument("--show-settings", action="store_true", help="print the resolved settings for the paths")
    check.add_argument("--fix", action="store_true",
                       help="apply fixes (all current fixes are unsafe: they need --unsafe-fixes too)")
    check.add_argument("--unsafe-fixes", action="store_true",
                       help="with --fix: drop infeasible autotune configs, lower launch num_stages to what fits")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff, change nothing "
                       "(exit 1 when there is something to fix)")
    explain = sub.add_parser("explain", help="per-config × per-target resource table of a kernel")
    explain.add_argument("kernel", metavar="FILE::KERNEL", help="FILE, or FILE::KERNEL to pick one kernel")
    _common(explain)
    rule = sub.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("code", nargs="?")
    rule.add_argument("--all", action="store_true")
    rule.add_argument("--format", choices=("text", "markdown"), default="text",
                      help="markdown: the docs/rules.md page (`kernlint rule --all --format markdown > docs/rules.md`)")
    debug = sub.add_parser("debug", help="dump internals")
    debug.add_argument("--ir", metavar="FILE::KERNEL", required=True)
    _common(debug)
    clean = sub.add_parser("clean", help="remove the cache directory (.kernlint_cache)")
    clean.add_argument("--cache-dir", default=None, metavar="DIR")
    server = sub.add_parser("server", help="language server (LSP over stdio) for editors; needs kernlint[lsp]")
    server.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default and only transport)")
    server.add_argument("--debounce-ms", type=int, default=150, help="wait this long after a keystroke before re-linting")
    server.add_argument("--log-file", metavar="PATH", help="write the server log here instead of stderr")
    from kernlint.recommend.cli import add_parser as add_recommend  # argparse only; the engine loads lazily

    add_recommend(sub)
    from kernlint.calibrate.command import add_parser as add_calibrate  # argparse only; Triton loads lazily

    add_calibrate(sub)
    return parser


def _settings(args: argparse.Namespace, path: str):  # type: ignore[no-untyped-def]
    """The settings `check` would use for `path` (its project's `[tool.kernlint]`: targets, args, configs),
    with `--target`, `--config` and `--arg` overriding them as they do for `check`."""
    from kernlint.analysis.configs import parse_config_option
    from kernlint.hardware.specs import UnknownTarget, resolve_targets
    from kernlint.pipeline.settings import Overrides, Resolver, SettingsError

    targets = tuple(args.target)
    try:
        resolve_targets(targets)
    except UnknownTarget as exc:
        raise UsageError(str(exc)) from None
    from kernlint.cli.check import check_config_values, parse_arg_options

    check_config_values(args.config)   # CheckError, reported like a UsageError by main()
    try:
        configs = tuple(parse_config_option(c) for c in args.config)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    arg_types = parse_arg_options(args.arg)   # CheckError, reported like a UsageError by main()
    try:
        resolver = Resolver(Overrides(targets=targets or None, cli_configs=configs or None, arg_types=arg_types,
                                      triton_version=getattr(args, "triton_version", None)))
        resolver.check_overrides()
        return resolver.for_path(path)
    except SettingsError as exc:
        raise UsageError(str(exc)) from None


def _kernels_named(result: Any, path: str, name: str | None) -> list[tuple[str, Any]]:
    """(file, kernel analysis) of the kernels `FILE::NAME` selects; a usage error saying why when there is none
    (the file did not parse, or it has no such kernel)."""
    kernels = [(f.path, k) for f in result.files for k in f.kernels
               if name is None or name in (k.jit.name, k.jit.qualname)]
    if not kernels:
        broken = [f"{f.path}:{d.span.start.line}:{d.span.start.col + 1}: {d.code} {d.message}"
                  for f in result.files for d in f.diagnostics if d.code in ("KL000", "KL001")]
        if broken:   # the file did not parse: say why, not that it has no kernel
            raise UsageError("; ".join(broken))
        if not name:
            raise UsageError(f"no Triton kernel in {path}")
        found = [k.jit.qualname for f in result.files for k in f.kernels]
        raise UsageError(f"no Triton kernel {name!r} in {path}; "
                         + (f"kernels found: {', '.join(found)}" if found else "it has no kernels"))
    return kernels


def _split_kernel(spec: str) -> tuple[str, str | None]:
    path, _, name = spec.partition("::")
    return path, name or None


def _file_size(text: str) -> int:
    from kernlint.pipeline.settings import SettingsError, file_size_arg

    try:
        return file_size_arg(text)
    except SettingsError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _formats() -> tuple[str, ...]:
    from kernlint.report import FORMATS

    return FORMATS


def cmd_check(args: argparse.Namespace, out: TextIO) -> int:
    # settings, cache, -j, stdin, --watch, --add-noqa and --show-settings live in kernlint.cli.check
    from kernlint.cli import check

    if args.show_settings:
        return check.show_settings(args, out)
    if args.add_noqa:
        return check.add_noqa(args, out)
    if args.fix or args.diff:
        return check.fix(args, out, lambda *r: _report(args, out, *r))
    if args.watch:
        return check.watch(args, lambda *r: _report(args, out, *r), out)
    return _report(args, out, *check.lint(args))


def _report(args: argparse.Namespace, out: TextIO, result: LintResult, settings: Settings,
            stdin_lines: dict[str, list[str]]) -> int:
    from kernlint.hardware.specs import resolve_targets
    from kernlint.report import ReportContext, render

    args.output_format = args.output_format or settings.output_format
    ctx = ReportContext(targets=tuple(t.key for t in resolve_targets(settings.targets)),
                        color=False if args.no_color or args.output_file else None)
    ctx._lines.update(stdin_lines)  # source read from stdin is not on disk
    try:
        sink = open(args.output_file, "w", encoding="utf-8", newline="") if args.output_file else out
    except OSError as exc:
        raise UsageError(f"cannot write {args.output_file}: {exc.strerror}") from None
    try:
        if args.statistics and args.output_format == "json":   # as ruff: the counts as JSON
            import json
            from collections import Counter

            counts = Counter((d.code, d.rule) for d in result.diagnostics)
            json.dump([{"code": c, "name": r, "count": n} for (c, r), n in
                       sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))], sink, indent=2)
            sink.write("\n")
        elif args.statistics:
            from kernlint.report import terminal

            terminal.render_statistics(result, terminal.console_for(sink, ctx.color))
        else:
            render(args.output_format, result, sink, ctx)
    finally:
        if sink is not out:
            sink.close()
    return result.exit_code(args.exit_zero)


def cmd_explain(args: argparse.Namespace, out: TextIO) -> int:
    from kernlint.pipeline.api import lint_paths
    from kernlint.report import terminal

    path, name = _split_kernel(args.kernel)
    result = lint_paths([path], _settings(args, path))
    console = terminal.console_for(out, width=terminal.explain_width(out))
    kernels = _kernels_named(result, path, name)
    from kernlint.cli.check import check_config_keys

    check_config_keys(args.config, [k for _, k in kernels])
    for p, k in kernels:
        terminal.render_explain(k, p, console)
    return EXIT_CLEAN


def cmd_rule(args: argparse.Namespace, out: TextIO) -> int:
    from kernlint.pipeline.registry import all_rules, rule_by_code

    if args.code and args.all:   # ruff refuses the pair too: which one was meant?
        raise UsageError("give a rule code or --all, not both")
    rules = list(all_rules()) if args.all or not args.code else []
    if args.code and not args.all:
        rule = rule_by_code(args.code)
        if rule is None and args.code.upper() == "KL000":
            from kernlint.report.rule_docs import INTERNAL_ERROR_DOC

            out.write(INTERNAL_ERROR_DOC)   # the engine's own code, not a rule: it appears in output, so it is explained
            return EXIT_CLEAN
        if rule is None:
            raise UsageError(f"unknown rule {args.code!r}")
        rules = [rule]
    if args.format == "markdown":
        from kernlint.report.rule_docs import rule_markdown, rules_markdown

        out.write(rules_markdown(rules) if args.all or not args.code else rule_markdown(rules[0], level=1))
        return EXIT_CLEAN
    for rule in rules:
        import inspect

        out.write(f"# {rule.name()} ({rule.CODE})\n\n{inspect.cleandoc(rule.__doc__ or '')}\n\n")
    return EXIT_CLEAN


def cmd_debug(args: argparse.Namespace, out: TextIO) -> int:
    from kernlint.pipeline.api import lint_paths
    from kernlint.ir.render import render_ir

    path, name = _split_kernel(args.ir)
    result = lint_paths([path], _settings(args, path))
    for _, k in _kernels_named(result, path, name):
        out.write(render_ir(k.ir) + "\n")
    return EXIT_CLEAN


def _codes(text: str) -> tuple[str, ...]:
    from kernlint.pipeline.settings import rule_prefix
    return tuple(rule_prefix(c) for c in text.split(",") if c.strip())


def _read_lines(path: str) -> list[str]:
    from kernlint.core.source_files import read_source

    data = read_source(path, 64 * 1024 * 1024)   # never a FIFO or a device (they would block or never end)
    return source_lines(data.decode("utf-8", errors="replace")) if isinstance(data, bytes) else []


def cmd_server(args: argparse.Namespace, out: TextIO) -> int:
    # Imported here so that `kernlint check` never pays for (or needs) pygls.
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError:
        raise UsageError("`kernlint server` needs pygls and lsprotocol: pip install 'kernlint[lsp]'") from None
    from kernlint.lsp import serve

    serve(args.debounce_ms, args.log_file)
    return EXIT_CLEAN


def cmd_clean(args: argparse.Namespace, out: TextIO) -> int:
    """Remove the cache (`--cache-dir`), or, as `ruff clean` does, the project's cache and every kernlint cache
    below the current directory: each `[tool.kernlint]` project keeps its own, and `check .` creates them."""
    import os

    from kernlint.pipeline.cache import clean
    from kernlint.pipeline.settings import Resolver

    if args.cache_dir:
        found = [Path(args.cache_dir)]
    else:
        found = [Path(Resolver().for_path(".").cache_dir)]
        for here, dirs, _ in os.walk("."):
            if ".kernlint_cache" in dirs:
                found.append(Path(here) / ".kernlint_cache")
            dirs[:] = [d for d in dirs if not d.startswith(".")]   # no caches inside .git, .venv, or a cache
    removed: list[Path] = []
    for directory in dict.fromkeys(p.absolute() for p in found):
        try:
            if clean(directory):
                removed.append(directory)
        except OSError as exc:
            raise UsageError(str(exc)) from None
    for directory in removed:
        out.write(f"Removed {os.path.relpath(directory)}\n")
    if not removed:
        out.write(f"No cache at {found[0]}\n")
    return EXIT_CLEAN


def cmd_calibrate(args: argparse.Namespace, out: TextIO) -> int:
    from kernlint.calibrate.command import run

    return run(args, out)


COMMANDS = {"clean": cmd_clean, "check": cmd_check, "explain": cmd_explain, "rule": cmd_rule, "debug": cmd_debug, "server": cmd_server, "calibrate": cmd_calibrate}

COMMANDS["recommend"] = lambda args, out: __import__("kernlint.recommend.cli", fromlist=["run"]).run(args, out)


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    # CPython's parser warns about the linted code itself (`1if x else 2`, and on 3.12+ every "\d" escape in a
    # plain string) when kernlint parses it; those lines went to stderr as "<unknown>:3: SyntaxWarning: ...",
    # about code kernlint only reads. Once, here: warning filters are process-wide and the server is threaded.
    import warnings
    warnings.filterwarnings("ignore", category=SyntaxWarning)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, which matches our tool-error code
        return int(exc.code or 0)
    from kernlint.pipeline.results import PathError
    from kernlint.cli.check import CheckError
    from kernlint.pipeline.settings import SettingsError

    try:
        return COMMANDS[args.command](args, out)
    except (UsageError, PathError, CheckError, SettingsError) as exc:
        sys.stderr.write(f"kernlint: error: {exc}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:   # Ctrl-C: one line, no traceback; the shell's convention for SIGINT
        sys.stderr.write("kernlint: interrupted\n")
        return 130
    except BrokenPipeError:   # `kernlint rule --all | head`: any command stops quietly, as check's formats do
        from kernlint.report import on_broken_pipe

        on_broken_pipe(out)
