"""lint_paths / lint_source: the one entry point used by the CLI (and later the LSP and pre-commit)."""
from __future__ import annotations

import os
import re
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernlint.analysis.configs import config_points
from kernlint.analysis.estimate import KernelEstimate, estimate
from kernlint.diagnostic import Confidence, Diagnostic, Severity, Span
from kernlint.frontend.facts import JitFunction, LaunchSite, ModuleFacts
from kernlint.frontend.kernels import collect_module_facts
from kernlint.frontend.parse import ParseFailure, parse_bytes
from kernlint.frontend.static_eval import StaticEvaluator
from kernlint.hardware.specs import GpuSpec, resolve_targets
from kernlint.ir.lower import HelperIndex, Lowerer, ModuleRef
from kernlint.registry import select_rules
from kernlint.rule import FileContext, KernelAnalysis

SKIP_DIRS = {".git", ".hg", ".venv", "venv", "__pycache__", "node_modules", "build", "dist", ".tox",
             ".mypy_cache", ".pytest_cache", ".kernlint_cache", ".eggs"}
NOQA = re.compile(r"#\s*kernlint:\s*noqa(?:\[(?P<codes>[A-Za-z0-9_,\s]+)\])?", re.IGNORECASE)


class PathError(Exception):
    """A path given on the command line does not exist (exit code 2)."""


@dataclass(frozen=True)
class Settings:
    targets: tuple[str, ...] = ("h100",)
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    cli_configs: tuple[dict[str, Any], ...] = ()
    arg_types: dict[str, str] = field(default_factory=dict)   # param name (or "*") → "*fp16", "i32", "1"
    default_pointee: str = "fp16"


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic]
    kernels: list[KernelAnalysis]
    internal_error: str | None = None


@dataclass
class LintResult:
    files: list[FileResult]

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for f in self.files for d in f.diagnostics]

    @property
    def internal_errors(self) -> list[str]:
        return [f"{f.path}: {f.internal_error}" for f in self.files if f.internal_error]

    def exit_code(self, exit_zero: bool = False) -> int:
        if self.internal_errors:
            return 2
        if exit_zero:
            return 0
        return 1 if any(d.severity is not Severity.INFO for d in self.diagnostics) else 0


@dataclass
class _Parsed:
    path: str
    data: bytes
    text: str | None
    failure: ParseFailure | None
    facts: ModuleFacts | None
    module: ModuleRef | None


def discover(paths: Iterable[str]) -> list[str]:
    found: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.is_file():
            found.append(str(p))
        elif p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
                found.extend(str(Path(root) / f) for f in sorted(files) if f.endswith((".py", ".pyi")))
        else:
            raise PathError(f"{raw}: no such file or directory")
    return sorted(dict.fromkeys(found))


def _parse(path: str, data: bytes) -> _Parsed:
    parsed = parse_bytes(data)
    if isinstance(parsed, ParseFailure):
        return _Parsed(path, data, None, parsed, None, None)
    facts, names = collect_module_facts(path, parsed.module)
    return _Parsed(path, data, parsed.text, None, facts, ModuleRef(names, facts.constants, facts.module_name))


def _launches_for(jit: JitFunction, launches: list[LaunchSite], module_launches: dict[str, list[LaunchSite]]) -> list[LaunchSite]:
    own = [s for s in module_launches.get(jit.module, []) if s.callee in (jit.qualname, jit.full_name)]
    other = [s for s in launches if s.callee == jit.full_name and s not in own]
    return own + other


def _is_kernel(jit: JitFunction, launched: bool, called: set[str]) -> bool:
    return launched or jit.autotune is not None or jit.full_name not in called


def analyse_kernel(jit: JitFunction, module: ModuleRef, helpers: HelperIndex, launches: list[LaunchSite],
                   targets: tuple[GpuSpec, ...], settings: Settings) -> KernelAnalysis:
    arg_types = {k: v for k, v in settings.arg_types.items() if k != "*"}
    pointee = settings.arg_types.get("*", settings.default_pointee).lstrip("*")
    ir = Lowerer(jit, module, helpers, arg_types, pointee).lower()
    cli = [c for c in settings.cli_configs
           if any(k in jit.constexpr_names for k in c) or all(k in ("num_warps", "num_stages", "maxnreg") for k in c)]
    points = config_points(jit, launches, cli, StaticEvaluator(module.names, module.constants))
    estimates: list[KernelEstimate] = [estimate(ir, p, t) for p in points for t in targets]
    return KernelAnalysis(jit, ir, tuple(points), tuple(estimates))


def _noqa(lines: list[str]) -> tuple[dict[int, set[str] | None], set[str] | None]:
    """Per-line suppressions (None = all codes) and file-level ones (comment-only lines)."""
    per_line: dict[int, set[str] | None] = {}
    file_level: set[str] | None = set()
    for i, line in enumerate(lines, start=1):
        if "noqa" not in line:
            continue
        m = NOQA.search(line)
        if not m:
            continue
        codes = {c.strip().upper() for c in m.group("codes").split(",") if c.strip()} if m.group("codes") else None
        if line.strip().startswith("#"):
            if codes is None:
                file_level = None
            elif file_level is not None:
                file_level |= codes
        else:
            per_line[i] = codes
    return per_line, (file_level if file_level is None or file_level else set())


def _suppressed(d: Diagnostic, per_line: dict[int, set[str] | None], file_level: set[str] | None,
                kernel_lines: dict[str, int]) -> bool:
    if file_level is None or d.code in file_level:
        return True
    lines = [d.span.start.line]
    if d.kernel and d.kernel in kernel_lines:
        lines.append(kernel_lines[d.kernel])
    for line in lines:
        if line in per_line:
            codes = per_line[line]
            if codes is None or d.code in codes:
                return True
    return False


def _lint_one(p: _Parsed, helpers: HelperIndex, launches: list[LaunchSite], module_launches: dict[str, list[LaunchSite]],
              called: set[str], targets: tuple[GpuSpec, ...], settings: Settings) -> FileResult:
    lines = p.text.splitlines() if p.text is not None else []
    ctx = FileContext(p.path, lines, targets, parse_failure=p.failure)
    if p.facts is not None and p.module is not None:
        for jit in p.facts.jit_functions:
            sites = _launches_for(jit, launches, module_launches)
            if _is_kernel(jit, bool(sites), called):
                ctx.kernels.append(analyse_kernel(jit, p.module, helpers, sites, targets, settings))
    diagnostics: list[Diagnostic] = []
    for rule_cls in select_rules(settings.select, settings.ignore):
        diagnostics.extend(rule_cls().check(ctx))
    per_line, file_level = _noqa(lines)
    kernel_lines = {k.jit.qualname: k.jit.decorator_line for k in ctx.kernels}
    kept = [d for d in dict.fromkeys(diagnostics) if not _suppressed(d, per_line, file_level, kernel_lines)]
    kept.sort(key=Diagnostic.sort_key)
    return FileResult(p.path, kept, ctx.kernels)


def lint_sources(sources: list[tuple[str, bytes | OSError]], settings: Settings | None = None) -> LintResult:
    settings = settings or Settings()
    targets = resolve_targets(settings.targets)
    parsed: list[_Parsed] = []
    failures: dict[str, str] = {}
    for path, data in sources:
        if isinstance(data, OSError):
            parsed.append(_Parsed(path, b"", None, ParseFailure(f"cannot read file: {data.strerror}"), None, None))
            continue
        try:
            parsed.append(_parse(path, data))
        except Exception as exc:  # never lose the other files
            failures[path] = _crash(exc)
            parsed.append(_Parsed(path, data, None, None, None, None))
    helpers: dict[str, tuple[JitFunction, ModuleRef]] = {}
    launches: list[LaunchSite] = []
    module_launches: dict[str, list[LaunchSite]] = {}
    called: set[str] = set()
    for p in parsed:
        if p.facts is None or p.module is None:
            continue
        for jit in p.facts.jit_functions:
            helpers[jit.full_name] = (jit, p.module)
        launches.extend(p.facts.launches)
        module_launches.setdefault(p.facts.module_name, []).extend(p.facts.launches)
        called |= p.facts.called_jit_names
    results: list[FileResult] = []
    for p in parsed:
        if p.path in failures:
            results.append(FileResult(p.path, [], [], failures[p.path]))
            continue
        try:
            results.append(_lint_one(p, helpers, launches, module_launches, called, targets, settings))
        except Exception as exc:
            results.append(FileResult(p.path, [_internal(p.path, exc)], [], _crash(exc)))
    return LintResult(results)


def lint_paths(paths: Iterable[str], settings: Settings | None = None) -> LintResult:
    files = discover(paths)
    sources: list[tuple[str, bytes | OSError]] = []
    for f in files:
        try:
            sources.append((f, Path(f).read_bytes()))
        except OSError as exc:  # unreadable file: a KL001 for it, the others still linted
            sources.append((f, exc))
    return lint_sources(sources, settings)


def lint_source(text: str, path: str = "<string>", settings: Settings | None = None) -> LintResult:
    return lint_sources([(path, text.encode("utf-8"))], settings)


def _crash(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" ({Path(frame.filename).name}:{frame.lineno})" if frame else ""
    return f"internal error {type(exc).__name__}: {exc}{where}"


def _internal(path: str, exc: BaseException) -> Diagnostic:
    return Diagnostic("KL000", Span.at(path, 1), f"kernlint failed on this file: {_crash(exc)}; please report it",
                      Severity.ERROR, Confidence.EXACT, "InternalError")


def iter_estimates(result: LintResult) -> Iterator[tuple[str, KernelAnalysis, KernelEstimate]]:
    for f in result.files:
        for k in f.kernels:
            for e in k.estimates:
                yield f.path, k, e
