"""Settings: `[tool.kernlint]` in pyproject.toml, command-line overrides, and resolution per file.

The nearest pyproject.toml *that has a `[tool.kernlint]` table*, searched from a linted file's directory
upward, supplies that file's settings (ruff's rule: a pyproject without the tool table is skipped).
Command-line options then override it: `--select`, `--target`, `--config`, `--exclude` replace the
configured value; `--ignore`, `--extend-select`, `--extend-exclude` add to it; `--arg` entries override
configured `args` entry by entry. This module is imported on the cold path, so it stays stdlib-only.
"""
from __future__ import annotations

import fnmatch
import os
import hashlib
import json
import sys
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from kernlint.core.source_files import DEFAULT_MAX_FILE_BYTES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

DEFAULT_EXCLUDE = (".*", "__pycache__", "venv", "node_modules", "build", "dist", "site-packages",
                   "__pypackages__", "_build", "buck-out")
OUTPUT_FORMATS = ("full", "concise", "json", "json-lines", "github", "sarif", "gitlab", "rdjson", "junit",
                  "markdown")
VENDOR_BACKEND_MODES = ("skip", "check")
_LIST_KEYS = ("select", "ignore", "extend-select", "targets", "exclude", "extend-exclude")


class SettingsError(Exception):
    """`[tool.kernlint]` is malformed; the message names the file and the key (exit code 2)."""


@dataclass(frozen=True)
class Settings:
    targets: tuple[str, ...] = ("h100",)
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    cli_configs: tuple[dict[str, Any], ...] = ()
    arg_types: dict[str, str] = field(default_factory=dict)   # param name (or "*") → "*fp16", "i32", "1"
    default_pointee: str = "fp16"
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()   # (glob, codes), relative to `root`
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    output_format: str = "full"
    cache_dir: str = ".kernlint_cache"
    config_store: str = "kernlint.lock.json"   # `config-store`, relative to `root` (KL406 reads it)
    vendor_backends: str = "skip"        # "skip": kernels of other vendors' backends are not judged (frontend/vendor.py)
    triton_version: str | None = None    # `triton-version`: the release the API rules (KL31x) judge; None = newest
    max_file_size: int = DEFAULT_MAX_FILE_BYTES   # bytes; larger files get KL001 "file too large"
    root: str = "."                      # directory of the pyproject.toml the values came from
    source: str | None = None            # that pyproject.toml, None for built-in defaults

    def rule_filter(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(select, ignore) prefixes for `registry.select_rules`; extend-select only widens a select."""
        # normalised here too, for the Python API: `Settings(select=("ALL",))` or `("kl3",)` selected nothing
        select = tuple(map(rule_prefix, (*self.select, *self.extend_select))) if self.select else ()
        return select, tuple(map(rule_prefix, self.ignore))

    def for_file(self, path: str) -> Settings:
        """These settings with the matching per-file-ignores folded into `ignore`."""
        if not self.per_file_ignores:
            return self
        rel, name = _relative(path, self.root), Path(path).name
        extra = [c for pattern, codes in self.per_file_ignores
                 if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(name, pattern) for c in codes]
        return replace(self, ignore=tuple(dict.fromkeys((*self.ignore, *extra)))) if extra else self

    def is_excluded(self, path: str, below: str | None = None) -> bool:
        """True when a pattern of exclude/extend-exclude matches the path (relative to root) or its name.
        With `below` (an excluded directory passed explicitly), the path is matched relative to it."""
        name = Path(path).name
        if name in (".", ".."):
            return False
        rel = os.path.relpath(path, below) if below is not None else _relative(path, self.root)
        parts = rel.split("/")
        for pattern in (*self.exclude, *self.extend_exclude):
            pattern = pattern.rstrip("/")
            if fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(rel, pattern):
                return True
            # an excluded directory excludes what is below it (matters for explicitly passed files)
            if any(fnmatch.fnmatch(parts[i - 1], pattern) or fnmatch.fnmatch("/".join(parts[:i]), pattern)
                   for i in range(1, len(parts)) if parts[i - 1] not in ("", ".", "..")):
                return True
        return False

    def store_path(self) -> Path:
        """The config store: `config-store` next to the pyproject.toml that configures the file (or the
        working directory without one); an absolute `config-store` is used as is."""
        return Path(self.root) / self.config_store

    def fingerprint(self) -> str:
        """A stable hash of everything that can change a file's lint result (cache keys, grouping)."""
        data = {k: v for k, v in asdict(self).items() if k not in ("output_format", "cache_dir", "source")}
        try:  # KL406 reads the config store: a changed store must not be answered from the cache
            st = self.store_path().stat()
            data["config_store_state"] = [st.st_mtime_ns, st.st_size]
        except OSError:
            data["config_store_state"] = None
        return hashlib.blake2b(json.dumps(data, sort_keys=True, default=repr).encode(), digest_size=16).hexdigest()

    def describe(self) -> str:
        """`--show-settings`: one `key = value` line per setting, TOML-like."""
        lines = [f"# settings from {self.source or 'built-in defaults'}"]
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                value = [list(v) if isinstance(v, tuple) else v for v in value]
            lines.append(f"{f.name.replace('_', '-')} = {json.dumps(value, default=repr)}")
        return "\n".join(lines) + "\n"


def _relative(path: str, root: str) -> str:
    p = Path(path).absolute()
    try:
        return p.relative_to(Path(root).absolute()).as_posix()
    except ValueError:
        return Path(path).as_posix()


# -- pyproject.toml -------------------------------------------------------------------------------

def _strings(value: Any, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"{where}: `{key}` must be a list of strings, got {value!r}")
    return tuple(value)


def rule_prefix(code: str) -> str:
    """A select/ignore entry as a code prefix: `ALL` (ruff's spelling) is every rule."""
    code = code.strip().upper()
    return "KL" if code == "ALL" else code


def _codes(value: Any, key: str, where: str) -> tuple[str, ...]:
    return tuple(rule_prefix(c) for c in _strings(value, key, where) if c.strip())


def parse_table(table: Any, where: str, root: str) -> dict[str, Any]:
    """Validate a `[tool.kernlint]` table into Settings field values; SettingsError names file and key."""
    if not isinstance(table, dict):
        raise SettingsError(f"{where}: `tool.kernlint` must be a table")
    values: dict[str, Any] = {"root": root, "source": where}
    for key, value in table.items():
        name = key.replace("-", "_")
        if key in ("select", "ignore", "extend-select"):
            values[name] = _codes(value, key, where)
        elif key in _LIST_KEYS:
            values[name] = _strings(value, key, where)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise SettingsError(f"{where}: `per-file-ignores` must be a table of glob = [codes]")
            values["per_file_ignores"] = tuple((glob, _codes(codes, f"per-file-ignores.{glob}", where))
                                               for glob, codes in value.items())
        elif key == "output-format":
            if value not in OUTPUT_FORMATS:
                raise SettingsError(f"{where}: `output-format` must be one of {', '.join(OUTPUT_FORMATS)}, got {value!r}")
            values[name] = value
        elif key == "cache-dir":
            if not isinstance(value, str):
                raise SettingsError(f"{where}: `cache-dir` must be a string")
            values[name] = str(Path(root) / value)
        elif key == "config-store":
            if not isinstance(value, str) or not value:
                raise SettingsError(f"{where}: `config-store` must be a path string, e.g. \"kernlint.lock.json\"")
            values["config_store"] = value      # resolved against `root` (this file's directory) when read
        elif key == "vendor-backends":
            if value not in VENDOR_BACKEND_MODES:
                raise SettingsError(f"{where}: `vendor-backends` must be one of {', '.join(VENDOR_BACKEND_MODES)}, "
                                    f"got {value!r}")
            values["vendor_backends"] = value
        elif key == "args":
            if not isinstance(value, dict) or not all(isinstance(v, (str, int)) for v in value.values()):
                raise SettingsError(f"{where}: `args` must be a table of NAME = \"TYPE\", e.g. a_ptr = \"*bf16\"")
            from kernlint.frontend.arg_values import ArgValueError, parse_arg_value
            arg_types: dict[str, str] = {}
            for k, v in value.items():   # the parser every --arg goes through; kept in its canonical text
                try:
                    arg_types[k] = parse_arg_value(k, str(v)).lint_text()
                except ArgValueError as exc:
                    raise SettingsError(f"{where}: `args.{k}`: {str(exc).split(': ', 1)[-1]}") from None
            values["arg_types"] = arg_types
        elif key == "configs":
            if not isinstance(value, list) or not all(
                    isinstance(c, dict) and all(isinstance(v, (int, str, bool)) for v in c.values()) for c in value):
                raise SettingsError(f"{where}: `configs` must be a list of tables, e.g. [{{BLOCK_M = 128, num_warps = 8}}]")
            from kernlint.analysis.configs import DEFAULT_NUM_STAGES, DEFAULT_NUM_WARPS, invalid_launch_options
            for c in value:
                if any(not isinstance(c[n], int) or isinstance(c[n], bool) for n in ("num_warps", "num_stages",
                                                                                      "maxnreg") if n in c):
                    raise SettingsError(f"{where}: `configs` entry {c}: num_warps/num_stages/maxnreg must be integers")
                why = invalid_launch_options(c.get("num_warps", DEFAULT_NUM_WARPS),
                                             c.get("num_stages", DEFAULT_NUM_STAGES), c.get("maxnreg"))
                if why:
                    raise SettingsError(f"{where}: `configs` entry {c}: {why}")
            values["cli_configs"] = tuple(dict(c) for c in value)
        elif key == "triton-version":
            from kernlint.frontend.triton_api import release_error   # stdlib only: reads the shipped JSON table
            if (why := release_error(value)) is not None:
                raise SettingsError(f"{where}: `triton-version` {why}")
            values["triton_version"] = value
        elif key == "max-file-size":
            values["max_file_size"] = _file_size(value, f"{where}: `max-file-size`")
        elif key == "calibrate":
            # read by `kernlint calibrate` (kernlint/calibrate/command.py); only its shape is checked here
            if not isinstance(value, dict):
                raise SettingsError(f"{where}: `[tool.kernlint.calibrate]` must be a table")
        else:
            raise SettingsError(f"{where}: unknown key `{key}` in [tool.kernlint]")
    values.setdefault("cache_dir", str(Path(root) / ".kernlint_cache"))  # per project, like ruff
    if "targets" in values:
        _check_targets(values["targets"], f"{where}: `targets`")
    return values


_SIZE_UNITS = {"": 1, "B": 1, "KB": 1024, "K": 1024, "MB": 1024 ** 2, "M": 1024 ** 2}


def _file_size(value: Any, what: str) -> int:
    """A positive byte count: an integer or a string such as "512KB" or "4MB" (binary units)."""
    if isinstance(value, str):
        text = value.strip().upper().replace(" ", "")
        digits = text.rstrip("KMB")
        unit = text[len(digits):]
        if digits.isdigit() and unit in _SIZE_UNITS:
            value = int(digits) * _SIZE_UNITS[unit]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SettingsError(f"{what} must be a positive number of bytes, e.g. 2097152 or \"2MB\", got {value!r}")
    return value


def file_size_arg(text: str) -> int:
    """`--max-file-size`: the same forms as the setting."""
    return _file_size(text, "--max-file-size")


def _check_targets(targets: tuple[str, ...], what: str) -> None:
    # hardware.specs is a plain table (no libcst), cheap enough for the cold path
    from kernlint.hardware.specs import UnknownTarget, resolve_targets

    if not targets:   # no target means no estimate: every resource rule would pass silently
        raise SettingsError(f"{what}: empty; name at least one GPU (e.g. [\"h100\"])")

    try:
        resolve_targets(targets)
    except UnknownTarget as exc:
        raise SettingsError(f"{what}: {exc}") from None


def load_pyproject(path: Path) -> dict[str, Any] | None:
    """The validated `[tool.kernlint]` values of one pyproject.toml, or None when it has no such table."""
    try:
        with path.open("rb") as fh:
            doc = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read: {exc.strerror}") from None
    table = doc.get("tool", {}).get("kernlint") if isinstance(doc.get("tool"), dict) else None
    if table is None:
        return None
    return parse_table(table, str(path), str(path.parent))


@dataclass
class Overrides:
    """Values given on the command line; None/empty means "not given"."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    targets: tuple[str, ...] | None = None
    cli_configs: tuple[dict[str, Any], ...] | None = None
    arg_types: dict[str, str] = field(default_factory=dict)
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    output_format: str | None = None
    cache_dir: str | None = None
    triton_version: str | None = None
    max_file_size: int | None = None

    def apply(self, base: Settings) -> Settings:
        changes: dict[str, Any] = {}
        for name in ("select", "targets", "cli_configs", "exclude", "output_format", "cache_dir", "triton_version",
                     "max_file_size"):
            if getattr(self, name) is not None:
                changes[name] = getattr(self, name)
        if self.select is not None and base.ignore:
            # as in ruff, the more specific selector wins and the command line wins a tie: `--select KL303`
            # re-enables a configured `ignore = ["KL303"]` or `["KL3"]`, not one of `["KL3031"]`
            kept = tuple(i for i in base.ignore if not any(s.startswith(i) for s in self.select))
            if kept != base.ignore:
                changes["ignore"] = kept
        for name in ("ignore", "extend_select", "extend_exclude"):
            if getattr(self, name):
                changes[name] = tuple(dict.fromkeys((*changes.get(name, getattr(base, name)), *getattr(self, name))))
        if self.arg_types:
            changes["arg_types"] = {**base.arg_types, **self.arg_types}
        return replace(base, **changes) if changes else base


class Resolver:
    """Settings per file: nearest pyproject.toml with `[tool.kernlint]`, then the command line.

    `config_file` (an explicit pyproject.toml) pins one configuration for every file.
    """

    def __init__(self, overrides: Overrides | None = None, config_file: str | None = None,
                 isolated: bool = False) -> None:
        self.overrides = overrides or Overrides()
        self.isolated = isolated
        self._by_dir: dict[Path, Settings] = {}
        self._pinned: Settings | None = None
        if config_file is not None:
            values = load_pyproject(Path(config_file)) or {"root": str(Path(config_file).parent), "source": config_file}
            self._pinned = self.overrides.apply(Settings(**values))

    def for_path(self, path: str | Path) -> Settings:
        """Settings of a file (searching from its directory) or of a directory (from itself)."""
        if self._pinned is not None:
            return self._pinned
        p = Path(path).absolute()
        start = p if p.is_dir() else p.parent
        return self._for_dir(start)

    def _for_dir(self, directory: Path) -> Settings:
        if directory in self._by_dir:
            return self._by_dir[directory]
        settings: Settings | None = None
        if not self.isolated:
            candidate = directory / "pyproject.toml"
            values = load_pyproject(candidate) if candidate.is_file() else None
            if values is not None:
                settings = self.overrides.apply(Settings(**values))
        if settings is None:
            parent = directory.parent
            settings = self._for_dir(parent) if parent != directory else self.overrides.apply(
                Settings(root=str(Path.cwd())))
        self._by_dir[directory] = settings
        return settings

    def check_overrides(self) -> None:
        """Validate command-line targets once, with the same error style as the config file."""
        if self.overrides.targets is not None:
            _check_targets(self.overrides.targets, "--target")
        if self.overrides.triton_version is not None:
            from kernlint.frontend.triton_api import release_error
            if (why := release_error(self.overrides.triton_version)) is not None:
                raise SettingsError(f"--triton-version {why}")


def unknown_codes(codes: tuple[str, ...], known: set[str]) -> list[str]:
    """Codes or prefixes that select no rule at all (for a warning, never an error)."""
    return [c for c in codes if not any(k.startswith(c) for k in known)]
