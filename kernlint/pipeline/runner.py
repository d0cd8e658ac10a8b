"""`kernlint check` over many files: discovery with excludes, per-file settings, the cache, `-j` workers.

A file's result depends on other files of the run (jit helpers it inlines, launch sites of its kernels,
calls that make its jit functions helpers). Each file's *interface* (names it defines, names it launches or
calls) gives its dependencies: the files whose helpers it uses, transitively, and the files that use its
names. A file is linted with exactly those files as context, so its result, and its cache key, depend on
nothing else; `-j N` workers lint disjoint sets of files with their dependencies and produce the same
result as one process (tested against `api.lint_sources` over the whole run).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kernlint.pipeline.cache import Cache, diagnostic_from_json, diagnostic_to_json, digest, model_hash
from kernlint.frontend.data_files import data_signature
from kernlint.pipeline.imports import Interface, follow, interface
from kernlint.pipeline.results import FileResult, LintResult, ParsedFile, PathError, content_digest
from kernlint.pipeline.settings import Resolver, Settings
from kernlint.core.source_files import is_lintable_path, read_source

Source = tuple[str, "bytes | OSError"]


@dataclass
class Options:
    jobs: int = 1
    cache: bool = True
    force_exclude: bool = False
    need_estimates: bool = False          # json/explain: estimates are not cached, so lint in-process
    stdin: tuple[str, bytes | OSError] | None = None  # (filename, content) for `-` on the command line


@dataclass
class RunStats:
    files: int = 0
    cached: int = 0
    linted: int = 0
    parsed: int = 0


@dataclass
class _File:
    path: str
    data: bytes | OSError
    settings: Settings
    hash: str = ""
    iface: Interface | None = None
    deps: list[str] = field(default_factory=list)


# -- discovery ------------------------------------------------------------------------------------

def discover(paths: Iterable[str], resolver: Resolver, force_exclude: bool = False,
             problems: list[str] | None = None) -> list[str]:
    """Python files under `paths`, sorted; excluded names are pruned while walking. Paths given
    explicitly are linted even when excluded, unless `force_exclude` (pre-commit passes every file).
    A path that does not exist or a directory that cannot be read is added to `problems` (and the rest is
    still found, as ruff does); without `problems` a missing path raises PathError."""
    found: list[str] = []

    def unreadable(exc: OSError) -> None:
        if problems is not None:
            problems.append(f"{exc.filename}: cannot read directory: {exc.strerror}")
    for raw in paths:
        p = Path(raw)
        if force_exclude and resolver.for_path(p).is_excluded(raw):
            continue
        if is_lintable_path(raw):   # special files too: reading them gives a KL001 naming their type
            found.append(str(p))
        elif p.is_dir():
            # a directory passed explicitly is walked even when it is excluded itself (`kernlint check
            # .venv/lib/pkg`, as ruff does): then only what lies below it is matched against the patterns
            below = str(p) if resolver.for_path(p).is_excluded(raw) else None
            for root, dirs, files in os.walk(p, onerror=unreadable):
                settings = resolver.for_path(root)
                dirs[:] = sorted(d for d in dirs if not settings.is_excluded(os.path.join(root, d), below))
                found.extend(f for f in (os.path.join(root, name) for name in sorted(files) if name.endswith((".py", ".pyi")))
                             if not settings.is_excluded(f, below))
        elif problems is not None:
            problems.append(f"{raw}: no such file or directory")
        else:
            raise PathError(f"{raw}: no such file or directory")
    return sorted(dict.fromkeys(os.path.normpath(f) if f != "-" else f for f in found))


# -- interfaces and dependencies ------------------------------------------------------------------

def dependencies(files: list[_File]) -> None:
    """Fill `deps`: helpers used transitively, plus the files that launch or call this file's names."""
    by_name: dict[str, list[int]] = {}
    for i, f in enumerate(files):
        for name in (f.iface or (frozenset(), frozenset()))[0]:
            by_name.setdefault(name, []).append(i)
    uses = [sorted({j for r in (f.iface or (frozenset(), frozenset()))[1] for j in by_name.get(r, ()) if j != i})
            for i, f in enumerate(files)]
    used_by: list[set[int]] = [set() for _ in files]
    for i, targets in enumerate(uses):
        for j in targets:
            used_by[j].add(i)
    for i, f in enumerate(files):
        seen, stack = {i}, [i]
        while stack:  # helpers of helpers are inlined too
            for j in uses[stack.pop()]:
                if j not in seen:
                    seen.add(j)
                    stack.append(j)
        seen |= used_by[i]
        seen.discard(i)
        f.deps = sorted(files[j].path for j in seen)


# -- the run --------------------------------------------------------------------------------------

def _read(path: str, limit: int) -> bytes | OSError:
    """Unreadable, special or too large: the OSError becomes a KL001 for it, the others still linted."""
    return read_source(path, limit)


def _result_to_json(r: FileResult) -> dict[str, Any]:
    return {"diagnostics": [diagnostic_to_json(d) for d in r.diagnostics], "warnings": r.warnings,
            "internal_error": r.internal_error, "counts": [r.kernel_count, r.estimate_count],
            "unknown": list(r.unknown_estimates), "vendor": [r.vendor_skipped, r.vendor_reason]}


def _result_from_json(path: str, o: dict[str, Any]) -> FileResult:
    return FileResult(path, [diagnostic_from_json(d) for d in o["diagnostics"]], [], o["internal_error"],
                      list(o["warnings"]), tuple(o["counts"]),  # type: ignore[arg-type]
                      cached_unknown=tuple(o.get("unknown", ())), vendor_skipped=o.get("vendor", (0, None))[0],
                      vendor_reason=o.get("vendor", (0, None))[1])


def run(paths: Iterable[str], resolver: Resolver, options: Options | None = None,
        stats: RunStats | None = None) -> LintResult:
    options = options or Options()
    stats = stats if stats is not None else RunStats()
    sources: list[Source] = []
    if options.stdin is not None:
        sources.append(options.stdin)
    other = [p for p in paths if p != "-"]
    problems: list[str] = []
    if other or options.stdin is None:
        sources.extend((f, _read(f, resolver.for_path(f).max_file_size))
                       for f in discover(other or ["."], resolver, options.force_exclude, problems))
    files = [_File(path, data, resolver.for_path(path)) for path, data in sources]
    stats.files = len(files)
    use_cache = options.cache and not options.need_estimates
    caches: dict[str, Cache] = {}
    model = model_hash() if use_cache else ""
    engine = _Engine(options.jobs if not options.need_estimates else 1)
    try:
        _interfaces(files, engine, caches if use_cache else None, model)
        context = _context_files(files, engine, resolver, caches if use_cache else None, model)
        dependencies([*files, *context])
        by_path = {f.path: f for f in [*context, *files]}
        results: dict[str, FileResult] = {}
        keys: dict[str, str] = {}
        signatures: dict[str, str] = {}   # package root → its data files' signature, once per run
        for f in files:
            if not use_cache:
                continue
            # the package's data files too: an autotune list read from one (frontend.data_configs) is part of
            # the result, and a changed table must not return the result of the old one
            keys[f.path] = digest(model, f.settings.fingerprint(), f.hash, *(by_path[d].hash for d in f.deps),
                                  data_signature(f.path, signatures))
            got = caches[f.settings.cache_dir].get("result", keys[f.path])
            if got is not None:
                results[f.path] = _result_from_json(f.path, got)
        todo = [f for f in files if f.path not in results]
        stats.cached, stats.linted = len(results), len(todo)
        for r in engine.lint(todo, by_path, keep_kernels=options.need_estimates):
            results[r.path] = r
            if use_cache and r.internal_error is None:
                caches[by_path[r.path].settings.cache_dir].put("result", keys[r.path], _result_to_json(r))
        stats.parsed = engine.parsed
    finally:
        engine.close()
    for f in files:   # cached results too: --fix compares this with the file just before rewriting it
        if isinstance(f.data, bytes):
            results[f.path].source_digest = content_digest(f.data)
    return LintResult([results[f.path] for f in files], problems)


def _interfaces(files: list[_File], engine: _Engine, caches: dict[str, Cache] | None, model: str) -> None:
    """Fill each file's content hash and interface: from the cache when it has them, else parsed (and cached)."""
    for f in files:
        f.hash = digest(f.path, f.data if isinstance(f.data, bytes) else repr(f.data))
        if caches is not None:
            got = caches.setdefault(f.settings.cache_dir, Cache(f.settings.cache_dir)).get("iface", digest(model, f.hash))
            f.iface = (frozenset(got[0]), frozenset(got[1])) if got is not None else None
    missing = [f for f in files if f.iface is None]
    for f, iface in zip(missing, engine.interfaces([(f.path, f.data) for f in missing]) if missing else []):
        f.iface = iface
        if caches is not None:
            caches[f.settings.cache_dir].put("iface", digest(model, f.hash), [sorted(iface[0]), sorted(iface[1])])


def _context_files(files: list[_File], engine: _Engine, resolver: Resolver, caches: dict[str, Cache] | None,
                   model: str) -> list[_File]:
    """Files outside the run that define helpers its kernels call (kernlint.pipeline.imports): used as context for
    the run's files, never linted or reported themselves."""
    def load(paths: list[str]) -> list[tuple[Interface, _File]]:
        new = [_File(path, _read(path, resolver.for_path(path).max_file_size), resolver.for_path(path))
               for path in paths]
        _interfaces(new, engine, caches, model)
        return [(f.iface or (frozenset(), frozenset()), f) for f in new]

    return [f for _, _, f in follow([(f.path, f.iface) for f in files if f.iface is not None], load)]


# -- where the parsing and linting happens: this process, or N worker processes -------------------

_MEMO: dict[tuple[str, int], ParsedFile] = {}   # per process: parsed files, reused between the two phases


def _parse_memo(items: list[Source]) -> list[ParsedFile]:
    from kernlint.pipeline.api import parse_sources

    out: list[ParsedFile] = []
    for path, data in items:
        key = (path, hash(data) if isinstance(data, bytes) else id(data))
        if key not in _MEMO:
            _MEMO[key] = parse_sources([(path, data)])[0]
        out.append(_MEMO[key])
    return out


def _w_interfaces(items: list[Source]) -> list[Interface]:
    return [interface(p) for p in _parse_memo(items)]


def _w_lint(context: list[Source], groups: list[tuple[Settings, list[str]]], keep_kernels: bool) -> list[FileResult]:
    from kernlint.pipeline.api import lint_parsed

    parsed = _parse_memo(context)
    out: list[FileResult] = []
    for settings, paths in groups:
        for r in lint_parsed(parsed, settings, set(paths)):
            if not keep_kernels:  # estimates hold CST nodes: send counts, not kernels, across processes
                r = replace(r, kernels=[], cached_counts=(r.kernel_count, r.estimate_count),
                            cached_unknown=r.unknown_estimates)
            out.append(r)
    return out


class _Engine:
    """One executor per worker, so the files a worker parsed for their interfaces are linted by the same
    worker without parsing them again (parsing is most of the cost of a cold run)."""

    def __init__(self, jobs: int) -> None:
        self.jobs = max(1, jobs)
        self.pools: list[ProcessPoolExecutor] = []
        self.owner: dict[str, int] = {}
        self.parsed = 0

    def _pool(self, i: int) -> ProcessPoolExecutor:
        while len(self.pools) <= i:
            import multiprocessing

            method = "fork" if sys.platform == "linux" else None  # fork: no re-import of kernlint per worker
            self.pools.append(ProcessPoolExecutor(1, mp_context=multiprocessing.get_context(method)))
        return self.pools[i]

    def _chunks(self, n: int) -> list[range]:
        k = min(self.jobs, n)
        return [range(i * n // k, (i + 1) * n // k) for i in range(k)] if k else []

    def interfaces(self, items: list[Source]) -> list[Interface]:
        self.parsed += len(items)
        if self.jobs == 1 or len(items) < 2:
            for path, _ in items:
                self.owner[path] = -1
            return _w_interfaces(items)
        futures = []
        for i, chunk in enumerate(self._chunks(len(items))):  # contiguous: neighbours often share helpers
            part = [items[j] for j in chunk]
            for path, _ in part:
                self.owner[path] = i
            futures.append(self._pool(i).submit(_w_interfaces, part))
        return [iface for fut in futures for iface in fut.result()]

    def lint(self, todo: list[_File], by_path: dict[str, _File], keep_kernels: bool) -> list[FileResult]:
        if not todo:
            return []
        workers = 1 if self.jobs == 1 or len(todo) < 2 else self.jobs
        assigned: dict[int, list[_File]] = {}
        if workers == 1:
            assigned[-1] = todo
        else:
            chunks = self._chunks(len(todo))
            for n, f in enumerate(todo):
                i = self.owner.get(f.path, -1)
                if i < 0:  # interface came from the cache: place it by position
                    i = next(k for k, r in enumerate(chunks) if n in r)
                assigned.setdefault(i, []).append(f)
        futures = []
        for i, group in sorted(assigned.items()):
            context_paths = sorted({f.path for f in group} | {d for f in group for d in f.deps})
            context = [(p, by_path[p].data) for p in context_paths]
            groups: dict[str, tuple[Settings, list[str]]] = {}
            for f in group:
                groups.setdefault(f.settings.fingerprint(), (f.settings, []))[1].append(f.path)
            if i < 0:
                futures.append(_w_lint(context, list(groups.values()), keep_kernels))
            else:
                futures.append(self._pool(i).submit(_w_lint, context, list(groups.values()), keep_kernels))
        out: list[FileResult] = []
        for fut in futures:
            out.extend(fut if isinstance(fut, list) else fut.result())
        return out

    def close(self) -> None:
        for pool in self.pools:
            pool.shutdown(cancel_futures=True)
        _MEMO.clear()  # parsed trees are only shared within one run
