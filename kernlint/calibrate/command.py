"""The `kernlint calibrate` subcommand: options here, the work in session.py, the output in table.py.

Imported by kernlint/cli/commands.py when it builds its parser, so this module imports only argparse at top level.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

EXIT_CLEAN, EXIT_ERROR = 0, 2


def add_parser(sub: Any) -> None:
    p = sub.add_parser("calibrate", help="compile configs with Triton (no GPU) and show estimate vs truth",
                       description="Compile the kernel's configs with Triton's compiler and ptxas (CPU only, no GPU) "
                                   "and print kernlint's estimate next to the truth. The kernel is compiled from a "
                                   "scratch module built from its source (kernel, jit helpers, constexpr globals); "
                                   "the user's module is never imported.")
    p.add_argument("kernel", metavar="FILE::KERNEL", help="FILE, or FILE::KERNEL to pick one kernel")
    p.add_argument("--target", action="append", default=[], metavar="GPU",
                   help="h100 (default), h200, b200, a100, sm_90, ...; repeatable or comma-separated")
    p.add_argument("--config", action="append", default=[], metavar="K=V,...",
                   help="extra config to compile, e.g. 'BLOCK_M=128,BLOCK_N=128,num_warps=8,num_stages=3'")
    p.add_argument("--sweep", action="store_true",
                   help="add a grid: powers of two around the block sizes x num_warps {2,4,8} x num_stages {2,3,4}; "
                        "a block size it cannot vary (not a power of two, fixed with --arg) keeps its value, values "
                        "the tile shapes or static_asserts reject are left out, a constexpr with no value adds "
                        "nothing (one line says which)")
    p.add_argument("--max-configs", type=_positive, default=48, metavar="N", help="cap on sweep configs (%(default)s)")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=SPEC",
                   help="argument spec: a_ptr=*bf16, b_ptr=*fp16:0 (unaligned), M=4096, stride_k=1, eps=fp32, "
                        "HEAD_DIM=64 (constexpr); '*=*bf16' sets the default pointer dtype")
    p.add_argument("-j", "--jobs", type=_positive, default=2, metavar="N", help="compile worker processes (%(default)s)")
    p.add_argument("--python", metavar="PATH", help="interpreter whose Triton compiles (default: this one)")
    p.add_argument("--cache-dir", default=None, metavar="DIR",
                   help="calibrate cache (default .kernlint_cache/calibrate)")
    p.add_argument("--no-cache", action="store_true", help="compile everything again, store nothing")
    p.add_argument("--timeout", type=_positive, default=600, metavar="S", help="seconds per compile (%(default)s)")
    p.add_argument("--json", action="store_true", help="one JSON document instead of the table")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--anchor", action="store_true",
                   help="compile one config per target (the first that compiles without spilling) and correct "
                        "the estimates of the others from it, without compiling them")
    p.add_argument("--anchor-config", metavar="K=V,...", help="the config to anchor on (implies --anchor)")
    p.add_argument("--verify", action="store_true",
                   help="with --anchor (or --anchor-config; an error without them): compile the other configs "
                        "too and report static vs anchored error")
    p.add_argument("--triton-version", metavar="X.Y", type=_version,
                   help="the Triton version the model assumes (default: the compiling one, else the newest known)")


def _positive(text: str) -> int:
    """argparse type: an integer ≥ 1 (`-j 0`, `--max-configs -1` were taken silently)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _version(text: str) -> str:
    """argparse type: a Triton version `X.Y` (or `X.Y.Z`)."""
    parts = text.split(".")
    if not 2 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"expected a version like 3.6, got {text!r}")
    return text


def _pyproject_args(path: Path) -> dict[str, str]:
    """`args` of [tool.kernlint] and then [tool.kernlint.calibrate] from the nearest pyproject.toml; a file
    that is not valid TOML, or an `args` that is not a table, is an error naming the file (as `check` says),
    not a silent fall-back to the default types."""
    import tomllib

    for d in [path.resolve().parent, *path.resolve().parents]:
        f = d / "pyproject.toml"
        if not f.is_file():
            continue
        try:
            tool = tomllib.loads(f.read_text(encoding="utf-8")).get("tool", {}).get("kernlint")
        except (OSError, ValueError) as exc:
            raise ValueError(f"{f}: invalid TOML: {exc}") from None
        if not isinstance(tool, dict):
            continue
        cal = tool.get("calibrate", {})
        if not isinstance(cal, dict):
            raise ValueError(f"{f}: `[tool.kernlint.calibrate]` must be a table")
        merged: dict[str, str] = {}
        for where, table in (("tool.kernlint.args", tool.get("args")), ("tool.kernlint.calibrate.args", cal.get("args"))):
            if table is None:
                continue
            if not isinstance(table, dict):
                raise ValueError(f"{f}: `{where}` must be a table of NAME = \"TYPE\", e.g. a_ptr = \"*bf16\"")
            merged.update({str(k): str(v) for k, v in table.items()})
        return merged
    return {}


LAUNCH_KEYS = ("num_warps", "num_stages", "maxnreg", "num_ctas")


def _kernel_params(spec: str) -> set[str] | None:
    """The parameter names of the kernel `spec` names (None when it cannot be found: prepare says why)."""
    from kernlint.calibrate.scratch import ScratchError, find_kernel, source_tree_for

    path, _, name = spec.partition("::")
    try:
        _, pm = source_tree_for(path)
        return {p.name for p in find_kernel(pm, name or None).params}
    except (ScratchError, OSError):
        return None


def run(args: argparse.Namespace, out: TextIO) -> int:
    from kernlint.analysis.configs import parse_config_option
    from kernlint.calibrate import session
    from kernlint.calibrate.scratch import ScratchError
    from kernlint.calibrate.signature import SpecError
    from kernlint.hardware.specs import UnknownTarget, resolve_targets

    def fail(msg: str) -> int:
        sys.stderr.write(f"kernlint: error: {msg}\n")
        return EXIT_ERROR

    if args.verify and not (args.anchor or args.anchor_config):
        # --verify compiles the configs --anchor left uncompiled; without an anchor all are compiled anyway, and
        # taking it silently hid a forgotten --anchor (the user believed they saw static vs anchored errors)
        return fail("--verify needs --anchor (or --anchor-config): without an anchor every config is compiled")
    targets = tuple(args.target) or ("h100",)
    try:
        resolve_targets(targets)
        configs = tuple(parse_config_option(c) for c in args.config)
    except (UnknownTarget, ValueError) as exc:
        return fail(str(exc))
    try:
        arg_specs = _pyproject_args(Path(args.kernel.partition("::")[0]))
    except ValueError as exc:
        return fail(str(exc))
    params = _kernel_params(args.kernel) if arg_specs or configs or args.anchor_config else None
    if params is not None:   # project-wide types name other kernels' arguments too: only this kernel's apply
        arg_specs = {k: v for k, v in arg_specs.items() if k == "*" or k in params}
        # one kernel is calibrated: a --config key it does not have is a typo to name, not to drop
        for text in [*args.config, *([args.anchor_config] if args.anchor_config else [])]:
            try:
                keys = parse_config_option(text)
            except ValueError as exc:
                return fail(str(exc).replace("--config", "--anchor-config"))
            unknown = [k for k in keys if k not in params and k not in LAUNCH_KEYS]
            if unknown:
                return fail(f"--config {text!r}: the kernel has no argument {unknown[0]!r} "
                            f"(its arguments: {', '.join(sorted(params))})")
    for item in args.arg:
        if "=" not in item:
            return fail(f"bad --arg {item!r}: expected NAME=SPEC, e.g. a_ptr=*bf16")
        name, value = item.split("=", 1)
        arg_specs[name.strip()] = value.strip()
    cache = None if args.no_cache else Path(args.cache_dir) if args.cache_dir else session.DEFAULT_CACHE_DIR
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    err_console = Console(stderr=True)
    bar = Progress(TextColumn("compiling"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=err_console, transient=True, disable=args.no_progress or args.json)
    task = bar.add_task("compile", total=None)

    def progress(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    if args.anchor or args.anchor_config:
        return _run_anchored(args, targets, configs, arg_specs, cache, bar, progress, out, fail)
    try:
        with bar:
            cal = session.run(args.kernel, targets, configs, args.sweep, arg_specs, args.jobs, args.python, cache,
                              args.max_configs, args.timeout, progress)
    except (session.CalibrateError, ScratchError, SpecError) as exc:
        return fail(str(exc))
    from kernlint.calibrate import table

    from kernlint.calibrate import versions

    _, assumed = versions.assumed(args.triton_version, cal.env.get("triton_version"))
    if args.json:
        table.render_json(cal, out)
    else:
        console = Console(file=out, width=max(140, Console(file=out).width), highlight=False, soft_wrap=False)
        table.render(cal, console)
        console.print(f"[dim]{assumed}[/dim]")
    return EXIT_CLEAN


def _run_anchored(args: argparse.Namespace, targets: tuple[str, ...], configs: tuple[dict[str, Any], ...],
                  arg_specs: dict[str, str], cache: Path | None, bar: Any, progress: Any, out: TextIO,
                  fail: Any) -> int:
    from rich.console import Console

    from kernlint.analysis.configs import parse_config_option
    from kernlint.calibrate import anchor_cli, session, versions
    from kernlint.calibrate.scratch import ScratchError
    from kernlint.calibrate.signature import SpecError

    try:
        anchor_config = parse_config_option(args.anchor_config) if args.anchor_config else None
        with bar:
            cal, anchors = anchor_cli.run(args.kernel, targets, configs, args.sweep, arg_specs, args.jobs,
                                          args.python, cache, args.max_configs, args.timeout, anchor_config,
                                          args.verify, progress)
    except ValueError as exc:
        return fail(str(exc))
    except (session.CalibrateError, ScratchError, SpecError) as exc:
        return fail(str(exc))
    _, assumed = versions.assumed(args.triton_version, cal.env.get("triton_version"))
    if args.json:
        doc = anchor_cli.to_json(cal, anchors)
        doc["model_triton_version"] = assumed
        import json

        json.dump(doc, out, indent=1, default=repr)
        out.write("\n")
    else:
        console = Console(file=out, width=max(140, Console(file=out).width), highlight=False, soft_wrap=False)
        anchor_cli.render(cal, anchors, console)
        console.print(f"[dim]{assumed}[/dim]")
    return EXIT_CLEAN
