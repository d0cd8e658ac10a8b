"""`kernlint recommend PATH... --target h100 [--shape M=4096,N=4096] [-o kernlint.lock.json]`."""
from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import io
import sys
from typing import Any, TextIO

from kernlint.core.config_store import Entry, def_text, kernel_id, write_store


def add_parser(sub: Any) -> None:
    p = sub.add_parser("recommend", help="recommend configs per kernel, target and shape bucket")
    p.add_argument("paths", nargs="+")
    p.add_argument("--target", action="append", default=[], metavar="GPU", help="h100 (default), h200, b200, ...")
    p.add_argument("--shape", action="append", default=[], metavar="K=V,...",
                   help="a shape bucket, e.g. M=4096,N=4096,K=1024 (repeatable; a constexpr here is fixed)")
    p.add_argument("--kernel", metavar="NAME", help="search only this kernel of the file(s)")
    p.add_argument("--top-k", type=_positive, default=3, metavar="N", help="configs shown per bucket (%(default)s)")
    p.add_argument("-o", "--output", metavar="PATH", help="write the config store (kernlint.lock.json)")
    p.add_argument("--verify", action="store_true",
                   help="run each offered config outside the author's space and the author's config under "
                        "TRITON_INTERPRET=1 on small random inputs; drop the ones whose results differ "
                        "(needs triton and torch)")
    p.add_argument("--allow-unverified", action="store_true",
                   help="write configs outside the author's space to the store without --verify (a warning line "
                        "per config); without it, only verified ones are written")
    p.add_argument("--verify-python", metavar="PATH",
                   help="interpreter with triton and torch that runs --verify (default: this one)")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=SPEC",
                   help="argument spec, as for calibrate: x_ptr=*bf16, stride_xk=1 (types and unit strides also "
                        "refine the estimates), eps=1e-5 (values: --verify inputs)")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def kernel_source(path: str, line: int) -> str:
    """The text the kernel id of the kernel whose `def` is at `line` hashes (`store.def_text`)."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    return _def_texts(text).get(line, "")


@functools.lru_cache(maxsize=8)
def _def_texts(text: str) -> dict[int, str]:
    """`def` line → `def_text` of every function of a file's text: parsed once for all its kernels."""
    lines, out = text.splitlines(), {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef) and node.lineno not in out:
            out[node.lineno] = def_text(lines, node)
    return out


def _parse_shape(text: str) -> dict[str, Any]:
    from kernlint.analysis.configs import parse_config_option
    keys = [part.partition("=")[0].strip() for part in text.split(",") if part.strip()]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:   # `n=1024,n=4096`: the last one silently won
        raise ValueError(f"--shape {text!r}: {', '.join(twice)} given twice")
    try:
        return parse_config_option(text)
    except ValueError as exc:
        raise ValueError(str(exc).replace("--config", "--shape")) from None


def _same_buckets(shapes: list[dict[str, Any]], out: TextIO) -> list[dict[str, Any]]:
    """One shape per bucket: `--shape n=1000 --shape n=1024` are the bucket n=1024, and two store entries
    for it would leave the shim to pick one. The first is kept, and the merge is said."""
    from kernlint.recommend.core import bucket_label

    kept: dict[str, dict[str, Any]] = {}
    for shape in shapes:
        label = bucket_label(shape)
        if label in kept:
            out.write(f"note: --shape {_shape_text(shape)} is in the bucket of --shape {_shape_text(kept[label])} "
                      f"({label}): searched once\n")
            continue
        kept[label] = shape
    return list(kept.values())


def _shape_text(shape: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in shape.items())


def _shape_names(result: Any) -> set[str]:
    """The names a --shape may use: parameters of a Triton kernel, names at its launch sites and the locals of
    the launching functions (a host size the grid or a launch-computed block reads); a Helion kernel's
    extents (the sizes its host code unpacks)."""
    import ast as ast_

    from kernlint.recommend.core import kernel_source_facts

    known: set[str] = set()
    for f in result.files:
        for k in f.kernels:
            if getattr(k.jit, "helion", None) is not None:
                known.update(getattr(k.ir, "extents", {}) or {})
                continue
            known.update(p.name for p in k.jit.params)
            src = kernel_source_facts(k.jit.path, k.jit.name)
            for expr, local in src.grids:
                known.update(n.id for n in ast_.walk(expr) if isinstance(n, ast_.Name))
                known.update(local)
    return known


def match_shape_names(shapes: list[dict[str, Any]], known: set[str]) -> tuple[list[dict[str, Any]], str | None]:
    """`--shape` names as the kernels spell them: an exact name stays, another is matched ignoring case when
    exactly one known name matches; the rest are one error naming every unknown name and the valid ones."""
    out, bad = [], []
    for shape in shapes:
        fixed: dict[str, Any] = {}
        for key, v in shape.items():
            hits = [key] if key in known else [n for n in known if n.lower() == key.lower()]
            if len(hits) == 1:
                fixed[hits[0]] = v
            else:
                bad.append(f"{key} (could be {' or '.join(sorted(hits))})" if hits else key)
        out.append(fixed)
    if bad:
        return shapes, (f"--shape {', '.join(dict.fromkeys(bad))}: not a size of any kernel searched; valid names: "
                        f"{', '.join(sorted(known, key=lambda n: (n.lower(), n != n.lower()))) or '(none)'}")
    return out, None


def analysis_arg_types(specs: list[str]) -> dict[str, str]:
    """`--arg` specs (the parser every command shares) → the facts the static analysis takes. A type stays a
    type (`*fp16:16` → `*fp16`); an example value only says the argument's type — an integer is `i32`/`i64`,
    except 1, which Triton specialises to a constant (a unit stride) — so `--arg K=64`, an input size for
    --verify, does not freeze a loop bound. None (an argument passed as None) and dtypes (`ACC_DTYPE=tl.int32`)
    are kept: the kernel is analysed with them, as `check` does."""
    from kernlint.frontend.arg_values import ArgValueError, parse_arg_items
    try:
        given = parse_arg_items(specs)
    except ArgValueError as exc:
        raise ValueError(str(exc)) from None
    out: dict[str, str] = {}
    for name, a in given.items():
        v = a.value
        if not a.is_value or v is None or isinstance(v, bool):
            out[name] = a.lint_text()   # True/False stays a value: a flag constexpr folds its branches
        elif isinstance(v, int):
            out[name] = "1" if v == 1 else ("i32" if -2**31 <= v < 2**31 else "i64")
        elif isinstance(v, float):
            out[name] = "fp32"
    return out


def run(args: argparse.Namespace, out: TextIO) -> int:
    from kernlint import __version__
    from kernlint.pipeline.api import Settings, lint_paths
    from kernlint.hardware.specs import resolve_targets

    import sys

    from kernlint.hardware.specs import UnknownTarget
    try:
        targets = resolve_targets(args.target or ["h100"])
        shapes = [_parse_shape(s) for s in args.shape]
    except (UnknownTarget, ValueError) as exc:
        sys.stderr.write(f"kernlint: error: {str(exc).strip(chr(39))}\n")
        return 2
    for shape in shapes:   # a bucket is sizes: `M=abc` used to be searched as if it meant something
        bad = [f"{k}={v!r}" for k, v in shape.items() if not isinstance(v, int) or isinstance(v, bool) or v < 0]
        if bad:
            sys.stderr.write(f"kernlint: error: --shape {', '.join(bad)}: sizes must be non-negative integers\n")
            return 2
    verifier = None
    if args.verify:
        from kernlint.recommend.verify import Verifier, VerifyUnavailable
        try:
            verifier = Verifier(args.verify_python, dict(a.split("=", 1) for a in args.arg if "=" in a))
        except VerifyUnavailable as exc:
            sys.stderr.write(f"kernlint: error: {exc}\n")
            return 2
    extra = 20 if verifier else 0       # spares that replace candidates --verify drops
    try:
        arg_types = analysis_arg_types(args.arg)
    except ValueError as exc:
        sys.stderr.write(f"kernlint: error: {exc}\n")
        return 2
    result = lint_paths(args.paths, Settings(targets=tuple(t.key for t in targets), arg_types=arg_types))
    if args.kernel:   # one kernel of the file(s); a wrong name lists the kernels found
        found = [k.jit.qualname for f in result.files for k in f.kernels]
        for f in result.files:
            f.kernels = [k for k in f.kernels if args.kernel in (k.jit.qualname, k.jit.name)]
        if not any(f.kernels for f in result.files):
            sys.stderr.write(f"kernlint: error: --kernel {args.kernel}: no such kernel; found: "
                             f"{', '.join(found) or '(none)'}\n")
            return 2
    # `--shape Q=5` was stored as bucket Q=8, which the shim can never match; `--shape M=...` for `m` was
    # silently searched at the default size
    shapes, bad = match_shape_names(shapes, _shape_names(result))
    if bad:
        sys.stderr.write(f"kernlint: error: {bad}\n")
        return 2
    shapes = _same_buckets(shapes, out)
    unreadable = 0
    internal = 0   # kernels whose search raised: reported, the rest still searched (exit 2)
    for f in result.files:   # a file that does not parse has no kernels to search: say so, do not skip quietly
        for d in f.diagnostics:
            if d.code in ("KL000", "KL001"):
                unreadable += 1
                sys.stderr.write(f"kernlint: {f.path}:{d.span.start.line}: {d.code} {d.message} (not searched)\n")
    entries: list[Entry] = []
    # a directory takes minutes (examples/: ~2.5 min on two cores): a progress line on a terminal's stderr
    progress = _Progress(sum(len(f.kernels) for f in result.files) * len(targets))
    for f in result.files:
        for k in f.kernels:
            if k.ir.returned:   # a launched kernel returns nothing (Triton requires it): this is a helper
                out.write(f"{f.path}::{k.jit.qualname}: not searched: it returns values (a jit helper, "
                          "configured by the kernels that call it)\n")
                continue
            kid = kernel_id(k.jit.module, k.jit.qualname, kernel_source(k.jit.path, k.jit.line))
            for spec in targets:
                progress.step(f"{f.path}::{k.jit.qualname} [{spec.key}]")
                buffer = io.StringIO()
                try:
                    entries += _search_target(k, f.path, kid, spec, shapes, args, extra, verifier, buffer)
                except Exception as exc:  # noqa: BLE001 - kernlint's failure on one kernel; the others go on
                    internal += 1
                    buffer.write(f"{f.path}::{k.jit.qualname} [{spec.key}]\n  not searched: internal error "
                                 f"{type(exc).__name__}: {str(exc)[:200]} (please report it)\n")
                    sys.stderr.write(f"kernlint: error: {f.path}::{k.jit.qualname} [{spec.key}]: internal error "
                                     f"{type(exc).__name__}: {str(exc)[:200]}\n")
                out.write(buffer.getvalue())
    progress.done()
    if args.output:
        try:
            write_store(args.output, entries, f"kernlint {__version__}")
        except OSError as exc:
            sys.stderr.write(f"kernlint: error: cannot write {args.output}: {exc.strerror or exc}\n")
            return 2
        out.write(f"wrote {len(entries)} entries to {args.output}\n")
    return 2 if internal else 1 if unreadable else 0


class _Progress:
    """`[3/22] examples/matmul.py::matmul_kernel [h100]` on stderr, rewritten in place; only when stderr is a
    terminal, so pipes, files and CI logs get the results alone."""

    def __init__(self, total: int) -> None:
        self.total, self.n = total, 0
        isatty = getattr(sys.stderr, "isatty", None)
        self.on = total > 1 and isatty is not None and isatty()

    def step(self, what: str) -> None:
        self.n += 1
        if self.on:
            sys.stderr.write(f"\r\x1b[K[{self.n}/{self.total}] {what}")
            sys.stderr.flush()

    def done(self) -> None:
        if self.on:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _search_target(k: Any, path: str, kid: str, spec: Any, shapes: list[Any], args: Any, extra: int,
                   verifier: Any, out: TextIO) -> list[Entry]:
    """Search one kernel for one target, print the ranking, return its store entries."""
    from kernlint.recommend.core import bucket_label, buckets_for, minimax, recommend
    entries: list[Entry] = []
    if getattr(k.jit, "helion", None) is not None:   # Helion kernels: kernlint/recommend/helion.py
        from kernlint.recommend.helion import cli_entries
        out.write(f"{path}::{k.jit.qualname} [{spec.key}]\n")
        return cli_entries(k, path, spec, [dict(s) for s in shapes], args.top_k, out, analysis_arg_types(args.arg))
    buckets = [dict(s) for s in shapes] if shapes else buckets_for(k, None)
    recs = [recommend(k, spec, b, top_k=max(args.top_k, 50 if not shapes else args.top_k) + extra)
            for b in buckets]
    if verifier:
        for rec in recs:
            verifier.check(k, rec, max(args.top_k, 50 if not shapes else args.top_k))
    unknown = not shapes and len(recs) > 1
    out.write(f"{path}::{k.jit.qualname} [{spec.key}]\n")
    if unknown:   # no shapes: one config good for every bucket (the worst bucket is minimised)
        pick = minimax(recs)
        if pick is None:
            out.write(f"  no recommendation: {next((r.reason for r in recs if r.reason), 'no config fits')}\n")
            return entries
        out.write(f"  shapes unknown: best worst-case over {len(recs)} buckets -> {pick.label()}\n")
        if pick.space_note():
            out.write(f"    {pick.space_note()}\n")
        for note in dict.fromkeys(n for r in recs for n in r.notes):
            out.write(f"    {note}\n")
        kept = next((r for r in recs if r.kept_author), None)
        if kept is not None:   # one bucket where the author's config stays: the "*" entry applies nothing
            out.write(f"    kept the author's config: {kept.kept_author} (bucket {bucket_label(kept.bucket)})\n")
            entries.append(_keep(kid, spec.key, "*", kept, kept.kept_author or ""))
            return entries
        fake = dataclasses.replace(recs[0], ranked=[pick], kept_author=None)
        entries.append(store_entry(kid, spec.key, "*", fake, getattr(args, "allow_unverified", False), out))
        return entries
    for b, rec in zip(buckets, recs):
        label = bucket_label(b)
        if shapes and label != ",".join(f"{k}={v}" for k, v in sorted(b.items())):
            # the store keys a bucket by sizes rounded up to a power of two; say so once per shape
            out.write(f"  --shape {_shape_text(b)} is the bucket {label} (sizes round up to a power "
                      "of two)\n")
        if not rec.ranked:
            out.write(f"  {label}: no recommendation: {rec.reason}\n")
            out.writelines(f"    {note}\n" for note in rec.notes)
            continue
        out.write(f"  {label}: searched {rec.searched} configs\n")
        for i, c in enumerate(rec.ranked[:args.top_k], 1):
            out.write(f"    {i}. {c.label()}\n       {c.score.rationale()}\n")
            if c.space_note():
                out.write(f"       {c.space_note()}\n")
            if c.stages_note():
                out.write(f"       {c.stages_note()}\n")
        out.writelines(f"    {note}\n" for note in rec.notes)
        if rec.author:
            out.write(f"    author: {rec.author.label()}  ({rec.author.score.rationale()})\n")
        else:
            out.write("    author: not known (no autotune list, and the launch's values do not evaluate)\n")
        entries.append(store_entry(kid, spec.key, label, rec, getattr(args, "allow_unverified", False), out))
    return entries


def store_entry(kid: str, target: str, label: str, rec: Any, allow_unverified: bool, out: TextIO) -> Entry:
    """The store entry of one bucket, saying on `out` what is written: the top config; or, where the author's
    config is kept, an entry that applies nothing (`Entry.keep`); or, instead of a config outside the
    author's space that `--verify` did not pass, the best one inside it (`--allow-unverified` writes it,
    with a warning)."""
    if rec.kept_author:
        out.write(f"    kept the author's config: {rec.kept_author}\n")
        return _keep(kid, target, label, rec, rec.kept_author)
    top = rec.ranked[0]
    if not top.in_author_space and not _passed(top):
        if allow_unverified:
            out.write(f"    warning: {top.label()} is outside the author's space and was not verified; written "
                      "because of --allow-unverified\n")
            return _entry(kid, target, label, top)
        inside = next((c for c in rec.ranked if c.in_author_space or _passed(c)), None)
        if inside is None:
            why = (f"the configs offered are outside the author's space and not verified (run --verify, or "
                   f"--allow-unverified to write {top.label()} anyway)")
            out.write(f"    kept the author's config: {why}\n")
            return _keep(kid, target, label, rec, why)
        out.write(f"    stored: {inside.label()} (the configs ranked above it are outside the author's space and "
                  "not verified: --verify checks them)\n")
        return _entry(kid, target, label, inside)
    return _entry(kid, target, label, top)


def _passed(c: Any) -> bool:
    return bool(c.verified and c.verified.startswith("verified"))


def _keep(kid: str, target: str, label: str, rec: Any, why: str) -> Entry:
    config = rec.author.config() if rec.author is not None else {}
    return Entry(kid, target, label, config, {}, f"kept the author's config: {why}", None, why)


def _entry(kid: str, target: str, bucket: str, c: Any) -> Entry:
    est = c.estimate
    summary = {"registers": est.registers.allocated if est.registers else None,
               "spill_bytes": est.registers.spill_bytes if est.registers else None,
               "smem": est.smem.total if est.smem else None,
               "ctas_per_sm": est.occupancy.ctas_per_sm if est.occupancy else None,
               "model_us": round(c.score.time_us, 2)}
    rationale = c.score.rationale() + (f"; {c.space_note()}" if c.space_note() else "")
    space = None if c.in_author_space else {"in_author_space": False, "outside": dict(c.outside),
                                            "verified": c.verified}
    return Entry(kid, target, bucket, c.config(), summary, rationale, space)
