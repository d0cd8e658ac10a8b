"""Real-world robustness: lint pinned releases of packages that ship Triton kernels.

    python benchmarks/corpus.py                 # download (once, into .corpus/), extract, lint, report
    python benchmarks/corpus.py --only liger-kernel --top 30

Archives come from PyPI's simple index (the protocol pip uses) and are checked against pinned SHA-256
digests; sdists are not built (flash-attn's setup.py needs torch), only unpacked. Nothing is committed:
`.corpus/` is git-ignored. Every `.py` file of a package is linted in one `lint_sources` call (so helpers
resolve across modules) with no exception handling: an internal error is counted per file, and an
escaping exception ends the run. Kernels found are compared with an independent `ast` census of launched
kernels (benchmarks/census.py); docs/corpus.md describes the table.
"""
from __future__ import annotations

import argparse
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

from kernlint.pipeline.api import Settings, lint_sources

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__":   # run as `python benchmarks/corpus.py`: the repository root, for `benchmarks.*`
    sys.path.insert(0, str(ROOT))
from benchmarks.census import Census  # noqa: E402
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
    ("flag-gems", "flag_gems-5.0.2-py3-none-any.whl", "d7c5a6121bf2d3f7daddde43bfa7cae739de6cb5b294dcfe7ae6173045c35552"),
    ("gemlite", "gemlite-0.6.0.post2.tar.gz", "95c32b3d5ff10f6b08673ad08af1940d615fac01350be3e3c21b74eae01260e9"),
    ("deepspeed", "deepspeed-0.19.8.tar.gz", "9e491abd0827ea5c389dd702e15e11e13d83d904bac4a20d6c2a4cb37207a9af"),
    ("causal-conv1d", "causal_conv1d-1.7.0.tar.gz", "3202758494eaa7b597ce1c282dfa188889506bfcb92cad3c407d26736bfcd32b"),
    ("parallax-kernel", "parallax_kernel-0.1.1-py3-none-any.whl", "f540a91e38c3ddb62e5640af5a1e89c2c3c82c52ad9e00ffa13dda8bfc14e15a"),
    # neither helion's wheel nor its sdist ships the repository's examples/: the package itself is linted
    ("helion", "helion-1.5.1-py3-none-any.whl", "d0ee963f7ebf81a6698c4a7a6b6f7f5c2eb20922f8bafd535c0cded0260cab87"),
)
TARGETS = ("h100", "b200", "a100")


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


# Data files a package ships beside its code and kernlint reads as text (autotune tables such as flag-gems'
# runtime/backend/_nvidia/*/tune_configs.yaml); bounded so a bundled dataset is not unpacked
DATA_SUFFIXES = (".yaml", ".yml", ".json")
MAX_DATA_BYTES = 1 << 20


def _wanted(name: str, size: int) -> bool:
    if ".." in Path(name).parts:
        return False
    return name.endswith(".py") or (name.endswith(DATA_SUFFIXES) and size <= MAX_DATA_BYTES)


def extract(archive: Path, cache: Path = CACHE) -> Path:
    """Unpack the .py files and small YAML/JSON data files (no code from the archive runs); returns the
    package's directory."""
    dest = cache / "src" / archive.name
    if (dest / ".done-data").exists():
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as z:
            for info in z.infolist():
                if _wanted(info.filename, info.file_size):
                    (dest / info.filename).parent.mkdir(parents=True, exist_ok=True)
                    (dest / info.filename).write_bytes(z.read(info.filename))
    else:
        with tarfile.open(archive) as t:
            members = [m for m in t.getmembers() if m.isfile() and _wanted(m.name, m.size)]
            t.extractall(dest, members=members, filter="data")
    (dest / ".done-data").write_text("")
    return dest


# -- census and lint -----------------------------------------------------------------------------
# flag-gems keeps the kernels of other vendors' chips (Ascend, Cambricon, Kunlunxin, ...) beside its NVIDIA
# code, under runtime/backend/_<vendor>/ (liger-kernel under ops/backends/_ascend/); they are Triton too,
# but written for other compilers, so they get rows of their own and the main rows stay comparable across
# packages. The names are flag-gems 5.0.2's and liger-kernel 0.8.5's backend directories.
OTHER_VENDORS = frozenset({"aipu", "amd", "arm", "ascend", "cambricon", "enflame", "hygon", "iluvatar", "kunlunxin",
                           "metax", "mthreads", "sunrise", "tsingmicro", "npu", "xpu", "rocm"})


def vendor_of(rel: Path) -> str | None:
    """The other vendor a file belongs to (`runtime/backend/_ascend/...` → "ascend"), None for the main code."""
    parts = rel.parts
    for i, part in enumerate(parts[:-2]):
        if part in ("backend", "backends") and parts[i + 1].lstrip("_") in OTHER_VENDORS:
            return parts[i + 1].lstrip("_")
    return None


_NAME = re.compile(r"`[^`]*`")


@dataclass
class Row:
    files: int = 0
    census: int = 0
    found: int = 0
    skipped: int = 0     # census kernels in files kernlint recognises as another vendor's and does not judge
    errors: int = 0
    seconds: float = 0.0

    @property
    def percent(self) -> float:
        seen = self.census - self.skipped
        return 100.0 * self.found / seen if seen else 100.0


@dataclass
class Report:
    kernels: int = 0
    configs: int = 0
    estimates: int = 0
    crashes: list[str] = field(default_factory=list)
    codes: Counter[str] = field(default_factory=Counter)
    unmodelled: Counter[str] = field(default_factory=Counter)
    unmodelled_kinds: Counter[str] = field(default_factory=Counter)
    missed: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)   # kernels whose jit-like decorator did not resolve
    rows: dict[str, Row] = field(default_factory=dict)


def lint_tree(name: str, root: Path, report: Report, settings: Settings) -> None:
    paths = sorted(p for p in root.rglob("*.py") if p.is_file())
    sources = [(str(p), p.read_bytes()) for p in paths]
    start = time.perf_counter()
    result = lint_sources(sources, settings)          # no try: an escaping exception is a crash too
    seconds = time.perf_counter() - start
    wanted = Census(root, paths).kernels()
    found_lines: dict[str, set[int]] = {}
    for f in result.files:
        report.codes.update(d.code for d in f.diagnostics)
        report.unresolved += [f"{Path(f.path).relative_to(root)}:{d.span.start.line}" for d in f.diagnostics
                              if d.code == "KL002" and "could not be resolved" in d.message]
        found_lines[f.path] = {k.jit.line for k in f.kernels}
        for k in f.kernels:
            report.kernels += 1
            report.configs += len(k.points)
            report.estimates += len(k.estimates)
            for u in {(u.line, u.construct) for u in k.ir.unmodelled}:
                report.unmodelled[u[1]] += 1
                report.unmodelled_kinds[_NAME.sub("`…`", u[1])] += 1
    errors = {f.path for f in result.files if f.internal_error}
    vendor_files = {f.path for f in result.files if f.vendor_reason}
    report.crashes += result.internal_errors
    for p in paths:
        rel = p.relative_to(root)
        vendor = vendor_of(rel)
        row = report.rows.setdefault(name if vendor is None else f"{name} [{vendor}]", Row())
        lines = wanted.get(p, set())
        mine = found_lines.get(str(p), set())
        row.files += 1
        row.census += len(lines)
        row.found += len(lines & mine)
        row.skipped += len(lines) if str(p) in vendor_files else 0
        row.errors += str(p) in errors
        if vendor is None and str(p) not in vendor_files:
            report.missed += [f"{name}/{rel}:{ln}" for ln in sorted(lines - mine)]
    report.rows[name].seconds = seconds   # the run lints the whole package at once: time on the main row


def render(report: Report, top: int, show_vendors: bool) -> str:
    head = (f"{'package':26} {'files':>6} {'census':>7} {'found':>6} {'vendor':>6} {'found %':>8} {'errors':>6} "
            f"{'seconds':>8}")
    out = [head]
    total = Row()
    vendors = Row()
    for name, r in report.rows.items():
        target = vendors if "[" in name else total
        target.files += r.files
        target.census += r.census
        target.found += r.found
        target.skipped += r.skipped
        target.errors += r.errors
        target.seconds += r.seconds
        if "[" not in name or show_vendors:
            out.append(f"{name:26} {r.files:6d} {r.census:7d} {r.found:6d} {r.skipped:6d} {r.percent:7.1f}% "
                       f"{r.errors:6d} {r.seconds:8.1f}")
    out.append(f"{'total (main code)':26} {total.files:6d} {total.census:7d} {total.found:6d} {total.skipped:6d} "
               f"{total.percent:7.1f}% {total.errors:6d} {total.seconds:8.1f}")
    if vendors.files:
        out.append(f"{'other vendors (apart)':26} {vendors.files:6d} {vendors.census:7d} {vendors.found:6d} "
                   f"{vendors.skipped:6d} {vendors.percent:7.1f}% {vendors.errors:6d}")
    out.append("vendor: census kernels in files kernlint skips as another vendor's backend (vendor-backends = "
               "\"skip\"); found % = found / (census - vendor)")
    out += [
        f"kernels analysed {report.kernels:,}; configs {report.configs:,}; estimates {report.estimates:,}",
        f"internal errors: {len(report.crashes)}",
        *[f"  {c[:300]}" for c in report.crashes[:20]],
        "diagnostics by code: " + ", ".join(f"{c} {n}" for c, n in sorted(report.codes.items())),
        f"missed census kernels, main code ({len(report.missed)}): " + ", ".join(report.missed[:15]),
        f"jit-like decorators not resolved to triton (KL002, kernel not analysed) ({len(report.unresolved)}): "
        + ", ".join(report.unresolved[:10]),
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
    ap.add_argument("--vendors", action="store_true", help="a row for each other vendor's backend directory")
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
    print(render(report, a.top, a.vendors))
    return 1 if report.crashes else 0


if __name__ == "__main__":
    raise SystemExit(main())
