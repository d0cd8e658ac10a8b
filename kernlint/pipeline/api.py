"""lint_paths / lint_source: the one entry point used by the CLI (and later the LSP and pre-commit)."""
from __future__ import annotations

import dataclasses
import errno
import functools
import os
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from kernlint.core import cancel
from kernlint.pipeline import incremental
from kernlint.core.diagnostic import Confidence, Diagnostic, Severity, Span
from kernlint.pipeline.results import FileResult, LintResult, ParsedFile, PathError, content_digest
from kernlint.pipeline.settings import Settings
from kernlint.core.source_files import is_lintable_path
from kernlint.pipeline.suppression import NOQA
from kernlint.core.text_lines import source_lines

# The engine (libcst frontend, IR, analyses, rules) is imported inside the functions that use it: importing
# this module must stay cheap, because a warm-cache `kernlint check` never needs the engine (cold-start
# budget, docs/design.md). The result types live in kernlint.pipeline.results and are exported here.
if TYPE_CHECKING:
    from kernlint.analysis.estimate import KernelEstimate
    from kernlint.frontend.facts import JitFunction, LaunchSite
    from kernlint.hardware.specs import GpuSpec
    from kernlint.pipeline.imports import Reexports
    from kernlint.lowering.lower import HelperIndex, ModuleRef
    from kernlint.pipeline.rule import KernelAnalysis, Rule

__all__ = ["NOQA", "FileResult", "LintResult", "PathError", "Settings", "lint_paths", "lint_source", "lint_sources"]

SKIP_DIRS = {".git", ".hg", ".venv", "venv", "__pycache__", "node_modules", "build", "dist", ".tox",
             ".mypy_cache", ".pytest_cache", ".kernlint_cache", ".eggs"}


def discover(paths: Iterable[str]) -> list[str]:
    found: list[str] = []
    for raw in paths:
        p = Path(raw)
        if is_lintable_path(raw):   # special files too: reading them gives a KL001 naming their type
            found.append(str(p))
        elif p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
                found.extend(str(Path(root) / f) for f in sorted(files) if f.endswith((".py", ".pyi")))
        else:
            raise PathError(f"{raw}: no such file or directory")
    return sorted(dict.fromkeys(found))


def _parse(path: str, data: bytes, reexports: Reexports | None = None) -> ParsedFile:
    from kernlint.frontend.parse import ParseFailure, check_syntax, decode_source, parse_ast
    from kernlint.frontend.prescan import facts_without_kernels, has_subscript_call, launch_syntax_only, may_hold_kernels

    text = decode_source(data, limit=None)   # the size limit was applied when the file was read
    if isinstance(text, ParseFailure):
        return ParsedFile(path, data, None, text, None, None)
    kernels_possible = may_hold_kernels(text)
    if not kernels_possible or launch_syntax_only(text):
        # No kernel, launch or Helion kernel can be in this file (most files of a repository), so
        # nothing will read its syntax tree: when CPython's parser accepts it, libcst's parse (most of
        # the cost of such a file) is skipped. Anything else takes the full path below, which reports
        # the syntax error from libcst as before. (Only a file that CPython parses but libcst rejects,
        # a libcst limitation, would lose its KL001; none of the 2,267 files of the speed corpus does.)
        # A file that passed the pre-scan on the launch regex alone (a `](` that may sit in a string, a
        # comment or a docstring's markdown link) is asked CPython's tree, which the check parses anyway:
        # without a call of a subscript it has no launch site either.
        checked = check_syntax(text)
        if isinstance(checked, ParseFailure):
            return ParsedFile(path, data, None, checked, None, None)
        if checked and (not kernels_possible or not has_subscript_call(parse_ast(text))):
            # libcst is neither imported nor run for this file (kernlint.frontend.prescan)
            return ParsedFile(path, data, text, None, facts_without_kernels(path), None)
    from kernlint.frontend.kernels import collect_module_facts
    from kernlint.frontend.parse import parse_text
    from kernlint.lowering.lower import ModuleRef

    memo = incremental.current()   # the language server: statements of the previous text are re-used
    parsed = parse_text(text, memo.statements(path) if memo is not None else None)
    if isinstance(parsed, ParseFailure):
        return ParsedFile(path, data, None, parsed, None, None)
    follow = (lambda name: reexports.resolve(name, path)) if reexports is not None else None  # noqa: E731
    facts, names = collect_module_facts(path, parsed.module, text=parsed.text, reexports=follow)
    return ParsedFile(path, data, parsed.text, None, facts, ModuleRef(names, facts.constants, facts.module_name))


def _launches_for(jit: JitFunction, launches: list[LaunchSite], module_launches: dict[str, list[LaunchSite]]) -> list[LaunchSite]:
    own = [s for s in module_launches.get(jit.module, []) if s.callee in (jit.qualname, jit.full_name)]
    other = [s for s in launches if s.callee == jit.full_name and s not in own]
    return own + other


def _is_kernel(jit: JitFunction, launched: bool, called: set[str]) -> bool:
    """Launched or autotuned; else a jit function no other jit function calls, unless it returns a value
    (only device functions may return: a kernel that returned would not compile)."""
    return launched or jit.autotune is not None or (jit.full_name not in called and not jit.returns_value)


def _data_table_for(jit: JitFunction, targets: tuple[GpuSpec, ...]) -> tuple[JitFunction, str | None]:
    """An autotune list read from the package's data files: the file the targets' architecture reads (its own
    where the package has one, else the generic one), and a note naming it; the generic list and a note saying
    why where the targets would read different files."""
    spec = jit.autotune
    if spec is None or spec.data is None:
        return jit, None
    data = spec.data
    same, table = data.for_capabilities([t.capability for t in targets])
    if same and table is None:
        return jit, None   # only other architectures' files: the frontend's "not read" reason says so
    if not same or table is None:
        return jit, (f"autotune configs under `{data.key}` from {data.generic.path if data.generic else 'no generic file'}"
                     f": the targets' architectures read different files "
                     f"({', '.join(v.path for v in data.variants)}); give one --target to use its own")
    if table is not data.generic:
        jit = dataclasses.replace(jit, autotune=dataclasses.replace(spec, configs=table.configs, unknown_reason=None))
    which = ("its architecture's file" if table.arch else
             "the generic file" + ("; no file for this architecture" if data.variants else ""))
    # an entry without num_warps/num_stages takes the loader's defaults, which live in its code, not the file
    # (flag-gems' are 4 warps and 2 stages): Triton's are assumed, and the note says for how many
    left = [f"{sum(o not in c.options for c in table.configs)} of {len(table.configs)} without {o}"
            for o in ("num_warps", "num_stages") if any(o not in c.options for c in table.configs)]
    unsaid = f"; {', '.join(left)}: Triton's default assumed, the loader's may differ" if left else ""
    return jit, f"autotune configs under `{data.key}` read from {table.path} ({which}){unsaid}"


def analyse_kernel(jit: JitFunction, module: ModuleRef, helpers: HelperIndex, launches: list[LaunchSite],
                   targets: tuple[GpuSpec, ...], settings: Settings) -> KernelAnalysis:
    from kernlint.analysis.configs import config_points, given_arg_values, launch_pointees
    from kernlint.analysis.estimate import estimate
    from kernlint.frontend.static_eval import StaticEvaluator
    from kernlint.lowering.lower import Lowerer
    from kernlint.pipeline.rule import KernelAnalysis

    arg_types = {k: v for k, v in settings.arg_types.items() if k != "*"}
    pointee = settings.arg_types.get("*", settings.default_pointee).lstrip("*")
    # `--arg '*=*T'` states every pointer's type: it wins over what the source implies
    ir = Lowerer(jit, module, helpers, settings.arg_types, pointee, inferred=launch_pointees(jit, launches)).lower()
    cli = [c for c in settings.cli_configs
           if any(k in jit.constexpr_names for k in c) or all(k in ("num_warps", "num_stages", "maxnreg") for k in c)]
    jit, data_note = _data_table_for(jit, targets)
    points = config_points(jit, launches, cli, StaticEvaluator(module.names, module.constants),
                           given_arg_values(jit, arg_types))
    if data_note is not None:
        points = [dataclasses.replace(p, source_note=data_note) if p.origin == "autotune" else p for p in points]
    estimates: list[KernelEstimate] = [estimate(ir, p, t) for p in points for t in targets]
    return KernelAnalysis(jit, ir, tuple(points), tuple(estimates))


def _lint_one(p: ParsedFile, helpers: HelperIndex, launches: list[LaunchSite], module_launches: dict[str, list[LaunchSite]],
              called: set[str], targets: tuple[GpuSpec, ...], settings: Settings) -> FileResult:
    from kernlint.pipeline import suppression
    from kernlint.pipeline.registry import all_rules, select_rules
    from kernlint.pipeline.rule import FileContext

    settings = settings.for_file(p.path)   # per-file-ignores
    if p.facts is not None and settings.vendor_backends == "skip":
        from kernlint.frontend.vendor import vendor_backend

        if (reason := vendor_backend(p.path, p.text, settings.root)) is not None:
            # not judged against NVIDIA targets, and no rule runs (its noqa comments are not "unused" either)
            n = sum(_is_kernel(j, bool(_launches_for(j, launches, module_launches)), called)
                    for j in p.facts.jit_functions)
            return FileResult(p.path, [], [], vendor_skipped=n, vendor_reason=reason)
    lines = source_lines(p.text) if p.text is not None else []
    ctx = FileContext(p.path, lines, targets, parse_failure=p.failure, settings=settings)
    if p.facts is not None and p.module is not None:
        ctx.jit_functions, ctx.names = p.facts.jit_functions, p.module.names
        ctx.unresolved = p.facts.unresolved
        memo = incremental.current()
        inputs = incremental.module_inputs(p.text) if memo is not None else None
        if memo is not None:
            memo.inputs[p.path] = inputs   # the API-scan rules reuse per function too (incremental.file_misuses)
        for jit in p.facts.jit_functions:
            cancel.check()   # between kernels: the language server stops a lint of an outdated text here
            sites = _launches_for(jit, launches, module_launches)
            if _is_kernel(jit, bool(sites), called):
                analyse = functools.partial(analyse_kernel, jit, p.module, helpers, sites, targets, settings)
                if memo is None:
                    ctx.kernels.append(analyse())
                else:   # the language server's re-lint: unchanged kernels are reused (kernlint/pipeline/incremental.py)
                    key = incremental.kernel_key(inputs, memo, jit, sites, p.path, settings, targets)
                    ctx.kernels.append(memo.analyse(key, jit, analyse))
        from kernlint.pipeline.helion import analyse_helion_file  # @helion.kernel: same rules

        ctx.kernels.extend(analyse_helion_file(p.path, p.text, targets, settings))
    cancel.check()
    enabled = select_rules(*settings.rule_filter())
    from kernlint.pipeline.autotune_candidates import demote_dropped_candidates

    diagnostics = demote_dropped_candidates(_run_rules(enabled, ctx), ctx.kernels)

    def run_extra(codes: tuple[str, ...] | None) -> list[Diagnostic]:
        ran = set(enabled)
        return _run_rules([r for r in select_rules(codes or ()) if r not in ran], ctx)

    def report_unused(found: list[suppression.Unused]) -> list[Diagnostic]:
        rule = next(r for r in enabled if r.CODE == suppression.UNUSED_CODE)
        return rule().report(ctx, found)  # type: ignore[attr-defined, no-any-return]

    spans = [suppression.KernelSpan(k.jit.qualname, k.jit.name, k.jit.decorator_line, k.jit.line) for k in ctx.kernels]
    kept, warnings = suppression.finish(list(dict.fromkeys(diagnostics)), lines, p.text or "", spans,
                                        {r.CODE for r in enabled}, {r.CODE for r in all_rules()}, run_extra,
                                        report_unused, p.path)
    kept.sort(key=Diagnostic.sort_key)
    return FileResult(p.path, kept, ctx.kernels, warnings=warnings, source_digest=content_digest(p.data))


def _run_rules(rules: Iterable[type[Rule]], ctx: object) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for rule_cls in rules:
        found.extend(rule_cls().check(ctx))  # type: ignore[arg-type]
    return found


def lint_sources(sources: list[tuple[str, bytes | OSError]], settings: Settings | None = None) -> LintResult:
    return LintResult(lint_parsed(parse_sources(sources), settings or Settings()))


def parse_sources(sources: list[tuple[str, bytes | OSError]]) -> list[ParsedFile]:
    """Parse every file; a crash is recorded on the file (`crash`) so the other files still get linted."""
    from kernlint.core.deep_stack import run_deep

    return run_deep(_parse_sources, sources)


def _parse_sources(sources: list[tuple[str, bytes | OSError]]) -> list[ParsedFile]:
    from kernlint.frontend.parse import ParseFailure
    from kernlint.pipeline.imports import Reexports

    parsed: list[ParsedFile] = []
    reexports = Reexports()   # one per run: each re-exporting module is read once
    for path, data in sources:
        if isinstance(data, OSError):
            from kernlint.core.source_files import SourceRefused

            why = data.strerror if isinstance(data, SourceRefused) else f"cannot read file: {data.strerror}"
            too_big = isinstance(data, SourceRefused) and data.errno == errno.EFBIG
            parsed.append(ParsedFile(path, b"", None, ParseFailure(why, refused=too_big), None, None))
            continue
        try:
            parsed.append(_parse(path, data, reexports))
        except Exception as exc:  # never lose the other files
            parsed.append(ParsedFile(path, data, None, None, None, None, _crash(exc)))
    return parsed


def lint_parsed(parsed: list[ParsedFile], settings: Settings, only: set[str] | None = None) -> list[FileResult]:
    """Lint the parsed files (all, or the paths in `only`); every file in `parsed` is cross-file context:
    its jit helpers, launch sites and calls. `runner` passes each file's dependencies as context."""
    from kernlint.core.deep_stack import run_deep

    return run_deep(_lint_parsed, parsed, settings, only)


def _lint_parsed(parsed: list[ParsedFile], settings: Settings, only: set[str] | None) -> list[FileResult]:
    from kernlint.hardware.specs import resolve_targets

    targets = resolve_targets(settings.targets)
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
    memo = incremental.current()
    if memo is not None:
        memo.begin([(p.path, p.data) for p in parsed])
    results: list[FileResult] = []
    for p in parsed:
        if only is not None and p.path not in only:
            continue
        if p.crash is not None:
            results.append(FileResult(p.path, [], [], p.crash))
            continue
        try:
            results.append(_lint_one(p, helpers, launches, module_launches, called, targets, settings))
        except Exception as exc:
            results.append(FileResult(p.path, [_internal(p.path, exc)], [], _crash(exc)))
    if memo is not None:
        memo.end()
    return results


def lint_paths(paths: Iterable[str] | str | os.PathLike[str], settings: Settings | None = None) -> LintResult:
    if isinstance(paths, (str, os.PathLike)):   # one path: iterating a str would lint its characters
        paths = [os.fspath(paths)]
    limit = (settings or Settings()).max_file_size
    return _lint_with_imports(parse_sources([(f, _read(f, limit)) for f in discover(paths)]), settings,
                              lambda f: _read(f, limit))


def lint_source(text: str, path: str = "<string>", settings: Settings | None = None,
                base: str | None = None) -> LintResult:
    """Lint one in-memory document. With `base` (the directory `path` is relative to), helpers it imports from
    files on disk are followed as `lint_paths` does (kernlint/pipeline/imports.py); the editor passes its project root."""
    # A lone surrogate (possible in LSP/JSON text) must become a KL001 for the file, not an exception:
    # "surrogatepass" keeps it as bytes that the UTF-8 decoder then rejects with a position.
    data = text.encode("utf-8", errors="surrogatepass")
    limit = (settings or Settings()).max_file_size
    if len(data) > limit:   # an editor's buffer or stdin: the same limit as a file on disk
        from kernlint.core.source_files import SourceRefused, too_large

        sources: list[tuple[str, bytes | OSError]] = [(path, SourceRefused(errno.EFBIG, too_large(len(data), limit), path))]
    else:
        sources = [(path, data)]
    if base is None:
        return lint_sources(sources, settings)
    return _lint_with_imports(parse_sources(sources), settings, lambda f: _read(os.path.join(base, f), limit), base)


def _lint_with_imports(parsed: list[ParsedFile], settings: Settings | None, read: Callable[[str], bytes | OSError],
                       base: str = "") -> LintResult:
    """Lint `parsed` with the files defining helpers they import from elsewhere as context, not results."""
    from kernlint.pipeline.imports import follow, interface

    context = follow([(p.path, interface(p)) for p in parsed],
                     lambda new: [(interface(q), q) for q in parse_sources([(f, read(f)) for f in new])], base=base)
    return LintResult(lint_parsed([*parsed, *(q for _, _, q in context)], settings or Settings(),
                                  {p.path for p in parsed} if context else None))


def _read(path: str, limit: int | None = None) -> bytes | OSError:
    """Unreadable, special or too large: the OSError becomes a KL001 for it, the others still linted."""
    from kernlint.core.source_files import DEFAULT_MAX_FILE_BYTES, read_source

    return read_source(path, DEFAULT_MAX_FILE_BYTES if limit is None else limit)


def _crash(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" ({Path(frame.filename).name}:{frame.lineno})" if frame else ""
    return f"internal error {type(exc).__name__}: {exc}{where}"


def _internal(path: str, exc: BaseException) -> Diagnostic:
    return Diagnostic("KL000", Span.at(path, 1), f"kernlint failed on this file: {_crash(exc)}; please report it",
                      Severity.ERROR, Confidence.EXACT, "InternalError")
