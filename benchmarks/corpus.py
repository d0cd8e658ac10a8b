"""Real-world robustness: lint pinned releases of packages that ship Triton kernels.

    python benchmarks/corpus.py                 # download (once, into .corpus/), extract, lint, report
    python benchmarks/corpus.py --only liger-kernel --top 30

Archives come from PyPI's simple index (the protocol pip uses) and are checked against pinned SHA-256
digests; sdists are not built (flash-attn's setup.py needs torch), only unpacked. Nothing is committed:
`.corpus/` is git-ignored. Every `.py` file of a package is linted in one `lint_sources` call (so helpers
resolve across modules) with no exception handling: an internal error is counted as a crash, and an
escaping exception ends the run. Kernels found are compared with an independent `ast` census of
functions decorated with `@triton.jit` / `@jit` (kernels and helpers alike).
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import sys
import tarfile
import time
import urllib.parse
import urllib.request
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kernlint.api import Settings, lint_sources
from kernlint.frontend.kernels import collect_module_facts
from kernlint.frontend.parse import parse_bytes

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".corpus"
INDEX = "https://pypi.org/simple/{project}/"
# (project, file, sha256). Pure-Python wheels where PyPI has them; bitsandbytes' macOS wheel is its
# smallest (same Python sources, no CUDA binaries); mamba-ssm and flash-attn only publish sdists.
PINNED: tuple[tuple[str, str, str], ...] = (
    ("liger-kernel", "liger_kernel-0.8.5-py3-none-any.whl", "60789cd576af073ab9b192b570d2597fd0cdad489cd62fb44fb16256d43754c9"),
    ("mamba-ssm", "mamba_ssm-2.3.2.post1.tar.gz", "104cc47e9101e5401a675fa2b784f2952b9b037f3b1dd83b5ac544394e95d028"),
    ("bitsandbytes", "bitsandbytes-0.50.2-py3-none-macosx_14_0_arm64.whl", "4311f52a880b341bada639e4edd1a3c8d786830c9c93cdde29eaa1f062c8f8e5"),
    ("flash-attn", "flash_attn-2.8.3.post2.tar.gz", "d0f9f0b08a986cdeadbffcf5ec8b3a8f514366c68ad1853d3ab061bc83cc340b"),
    ("fla-core", "fla_core-0.6.0-py3-none-any.whl", "b0708b70e0b119cd58a0a5146ea56cb175cef6ed969d8ac60267e3e077ce3ebd"),
    ("unsloth", "unsloth-2026.10.9-py3-none-any.whl", "feb40b99bc4f8c543a36cbd0fe6e1410d6e4ac16bd4d0c731f607adce3d63bb0"),
)
TARGETS = ("h100", "b200", "a100")
JIT_NAMES = {"triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit", "triton.runtime.jit.JITFunction"}


# -- download and extract ------------------------------------------------------------------------
def download(project: str, filename: str, sha256: str, cache: Path = CACHE) -> Path:
    target = cache / "archives" / filename
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == sha256:
        return target
    req = urllib.request.Request(INDEX.format(project=project), headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        index, base = json.load(resp), resp.geturl()
    entry = next(f for f in index["files"] if f["filename"] == filename)
    with urllib.request.urlopen(urllib.parse.urljoin(base, entry["url"]), timeout=600) as resp:
        data = resp.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise SystemExit(f"{filename}: sha256 {digest} does not match the pinned {sha256}")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def extract(archive: Path, cache: Path = CACHE) -> Path:
    """Unpack only the .py files (no code from the archive runs); returns the package's directory."""
    dest = cache / "src" / archive.name
    if (dest / ".done").exists():
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as z:
            for name in z.namelist():
                if name.endswith(".py") and ".." not in Path(name).parts:
                    (dest / name).parent.mkdir(parents=True, exist_ok=True)
                    (dest / name).write_bytes(z.read(name))
    else:
        with tarfile.open(archive) as t:
            members = [m for m in t.getmembers() if m.isfile() and m.name.endswith(".py") and ".." not in Path(m.name).parts]
            t.extractall(dest, members=members, filter="data")
    (dest / ".done").write_text("")
    return dest


# -- census and lint -----------------------------------------------------------------------------
def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def census(text: str) -> set[int] | None:
    """Def lines of functions decorated with triton's jit, found with `ast` (None: not parseable).

    `@jit` counts when the file imports `jit` from triton; aliases such as `import triton as tr` count too.
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    aliases = {"triton": "triton"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update({a.asname or a.name: a.name for a in node.names if a.name.startswith("triton")})
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("triton"):
            aliases.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                head, _, rest = _dotted(dec).partition(".")
                full = aliases.get(head, head) + (f".{rest}" if rest else "")
                if full in JIT_NAMES:
                    lines.add(node.lineno)
    return lines


def kernlint_jit_lines(path: str, data: bytes) -> set[int]:
    parsed = parse_bytes(data)
    if not hasattr(parsed, "module"):
        return set()
    facts, _ = collect_module_facts(path, parsed.module)  # type: ignore[union-attr]
    return {j.line for j in facts.jit_functions}


_NAME = re.compile(r"`[^`]*`")


@dataclass
class Report:
    files: int = 0
    census: int = 0
    found: int = 0
    kernels: int = 0
    configs: int = 0
    estimates: int = 0
    crashes: list[str] = field(default_factory=list)
    codes: Counter[str] = field(default_factory=Counter)
    unmodelled: Counter[str] = field(default_factory=Counter)
    unmodelled_kinds: Counter[str] = field(default_factory=Counter)
    missed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    per_package: dict[str, tuple[int, int, int, int, float]] = field(default_factory=dict)


def lint_tree(name: str, root: Path, report: Report, settings: Settings) -> None:
    paths = sorted(p for p in root.rglob("*.py") if p.is_file())
    sources = [(str(p), p.read_bytes()) for p in paths]
    start = time.perf_counter()
    result = lint_sources(sources, settings)          # no try: an escaping exception is a crash too
    seconds = time.perf_counter() - start
    want = found = 0
    for path, data in sources:
        lines = census(data.decode("utf-8", "replace"))
        if not lines:
            continue
        mine = kernlint_jit_lines(path, data)
        want += len(lines)
        found += len(lines & mine)
        report.missed += [f"{Path(path).relative_to(root)}:{ln}" for ln in sorted(lines - mine)]
    kernels = 0
    for f in result.files:
        report.codes.update(d.code for d in f.diagnostics)
        for k in f.kernels:
            kernels += 1
            report.configs += len(k.points)
            report.estimates += len(k.estimates)
            for u in {(u.line, u.construct) for u in k.ir.unmodelled}:
                report.unmodelled[u[1]] += 1
                report.unmodelled_kinds[_NAME.sub("`…`", u[1])] += 1
    report.crashes += result.internal_errors
    report.files += len(sources)
    report.census += want
    report.found += found
    report.kernels += kernels
    report.seconds += seconds
    report.per_package[name] = (len(sources), want, found, kernels, seconds)


def render(report: Report, top: int) -> str:
    out = [f"{'package':16} {'files':>6} {'census':>7} {'found':>6} {'kernels':>8} {'seconds':>8}"]
    for name, (files, want, found, kernels, secs) in report.per_package.items():
        out.append(f"{name:16} {files:6d} {want:7d} {found:6d} {kernels:8d} {secs:8.1f}")
    pct = 100.0 * report.found / report.census if report.census else 100.0
    out += [
        f"files {report.files:,}; jit functions found {report.found:,}/{report.census:,} of the ast census ({pct:.1f} %); "
        f"kernels analysed {report.kernels:,}; configs {report.configs:,}; estimates {report.estimates:,}",
        f"crashes (internal errors): {len(report.crashes)}",
        *[f"  {c[:300]}" for c in report.crashes[:20]],
        f"time {report.seconds:.1f} s lint = {report.files / max(report.seconds, 1e-9):.1f} files/s (one process)",
        "diagnostics by code: " + ", ".join(f"{c} {n}" for c, n in sorted(report.codes.items())),
        f"missed census functions ({len(report.missed)}): " + ", ".join(report.missed[:10]),
        f"unmodelled constructs (KL002), top {top} by kind:",
        *[f"  {n:5d}  {k}" for k, n in report.unmodelled_kinds.most_common(top)],
        f"unmodelled constructs, top {top} exact:",
        *[f"  {n:5d}  {k}" for k, n in report.unmodelled.most_common(top)],
    ]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], help="project name(s) to run")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--dir", type=Path, default=None, help="lint this directory instead of the pinned packages")
    a = ap.parse_args()
    settings = Settings(targets=TARGETS)
    report = Report()
    if a.dir is not None:
        lint_tree(a.dir.name, a.dir, report, settings)
    for project, filename, sha in PINNED:
        if a.dir is not None or (a.only and project not in a.only):
            continue
        lint_tree(project, extract(download(project, filename, sha)), report, settings)
        print(f"{project}: done", file=sys.stderr, flush=True)
    print(render(report, a.top))
    return 1 if report.crashes else 0


if __name__ == "__main__":
    raise SystemExit(main())
