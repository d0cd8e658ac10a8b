"""A grammar of Triton kernel constructs, rendered to source for fuzzing kernlint.

The generator draws every decision through a `Chooser`, so the same grammar serves two drivers:
hypothesis (`DataChooser`: each decision is a `data.draw`, so failures shrink to small kernels) in the
CI tests, and `random.Random` (`RandomChooser`: fast, fixed seed, keeps going after a failure) in
`benchmarks/fuzz.py`. Generated kernels are mostly shape-correct Triton; a few draws deliberately
produce odd-but-parseable code (non-power-of-two blocks, constexprs without values) because a
linter sees such code in real repositories too.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

BLOCKS = ("BLOCK_M", "BLOCK_N", "BLOCK_K")
POINTEE = ("*fp16", "*bf16", "*fp32", "*fp8e4nv", "*i8")
TARGETS = ("h100", "h200", "b200", "a100", "l40s", "rtx4090", "rtx5090")
FLOAT_CASTS = ("tl.float32", "tl.float16", "tl.bfloat16")


class Chooser(Protocol):
    def choice(self, options: Sequence[T]) -> T: ...
    def integer(self, lo: int, hi: int) -> int: ...
    def flag(self, p: float = 0.5) -> bool: ...


class RandomChooser:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choice(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def flag(self, p: float = 0.5) -> bool:
        return self.rng.random() < p


class DataChooser:
    """Adapter for hypothesis' `st.data()`; imported lazily so benchmarks need no hypothesis."""

    def __init__(self, data: Any) -> None:
        from hypothesis import strategies as st

        self.data, self.st = data, st

    def choice(self, options: Sequence[T]) -> T:
        return self.data.draw(self.st.sampled_from(list(options)))

    def integer(self, lo: int, hi: int) -> int:
        return self.data.draw(self.st.integers(lo, hi))

    def flag(self, p: float = 0.5) -> bool:
        # Shrinks towards False, i.e. towards fewer optional constructs.
        return self.data.draw(self.st.integers(0, 99)) < int(p * 100)


@dataclass
class Tile:
    name: str
    dims: tuple[str, ...]     # block names, e.g. ("BLOCK_M", "BLOCK_K"); () for a scalar
    is_float: bool = True


@dataclass
class GeneratedKernel:
    source: str
    name: str
    blocks: tuple[str, ...]                      # block constexprs the kernel declares
    config: dict[str, Any]                       # one complete config (constexprs + launch options)
    knobs: tuple[str, ...]                       # keys of `config` whose increase must not shrink smem
    pointee: str = "*fp16"
    targets: tuple[str, ...] = ("h100",)


@dataclass
class _Body:
    lines: list[str] = field(default_factory=list)
    tiles: list[Tile] = field(default_factory=list)
    counter: int = 0

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def emit(self, text: str, indent: int = 1) -> None:
        self.lines.append("    " * indent + text)


# Offsets and masks for each block dimension: (offset expression name, bound name, stride stems).
_OFFS = {"BLOCK_M": ("offs_m", "M"), "BLOCK_N": ("offs_n", "N"), "BLOCK_K": ("offs_k", "K")}


def _ptr_expr(ptr: str, dims: tuple[str, ...]) -> tuple[str, str]:
    """A pointer tile and its mask over `dims` (1-D or 2-D), with broadcasting `[:, None]`."""
    if len(dims) == 1:
        offs, bound = _OFFS[dims[0]]
        return f"{ptr} + {offs}", f"{offs} < {bound}"
    (o0, b0), (o1, b1) = _OFFS[dims[0]], _OFFS[dims[1]]
    s0, s1 = f"stride_{b0.lower()}", f"stride_{b1.lower()}"
    return (f"{ptr} + {o0}[:, None] * {s0} + {o1}[None, :] * {s1}",
            f"({o0}[:, None] < {b0}) & ({o1}[None, :] < {b1})")


def _load(ch: Chooser, b: _Body, dims: tuple[str, ...], indent: int, ptr: str | None = None) -> Tile:
    ptr = ptr or ch.choice(("x_ptr", "y_ptr", "w_ptr"))
    addr, mask = _ptr_expr(ptr, dims)
    name = b.fresh("t")
    kind = ch.integer(0, 3)
    if kind == 0:
        b.emit(f"{name} = tl.load({addr})", indent)
    elif kind == 1:
        b.emit(f"{name} = tl.load({addr}, mask={mask}, other=0.0)", indent)
    elif kind == 2:
        b.emit(f"{name} = tl.load({addr}, mask={mask}, other=0.0, eviction_policy='evict_last')", indent)
    else:
        b.emit(f"{name} = tl.load({addr}, mask={mask}).to(tl.float32)", indent)
    tile = Tile(name, dims)
    b.tiles.append(tile)
    return tile


def _pick(ch: Chooser, b: _Body, ndim: int | None = None) -> Tile | None:
    pool = [t for t in b.tiles if ndim is None or len(t.dims) == ndim]
    return ch.choice(pool) if pool else None


def _elementwise(ch: Chooser, b: _Body, indent: int, helpers: list[str]) -> None:
    a = _pick(ch, b)
    if a is None:
        return
    name = b.fresh("e")
    same = [t for t in b.tiles if t.dims == a.dims]
    other = ch.choice(same)
    op = ch.integer(0, 9)
    if op == 0:
        expr = f"{a.name} * {other.name} + 1.0"
    elif op == 1:
        expr = f"tl.exp({a.name}.to(tl.float32))"
    elif op == 2:
        expr = f"tl.where({a.name} > 0, {a.name}, 0.0)"
    elif op == 3:
        expr = f"tl.maximum({a.name}, {other.name})"
    elif op == 4:
        expr = f"{a.name}.to({ch.choice(FLOAT_CASTS)})"
    elif op == 5:
        expr = f"tl.sqrt(tl.abs({a.name}.to(tl.float32)) + 1e-6)"
    elif op == 6 and helpers:
        expr = f"{ch.choice(helpers)}({a.name}, {other.name})"
    elif op == 7 and len(a.dims) == 2:
        # broadcasting a row vector against the tile
        row = [t for t in b.tiles if t.dims == (a.dims[0],)]
        expr = f"{a.name} - {row[0].name}[:, None]" if row else f"{a.name} * 2.0"
    elif op == 8:
        expr = f"tl.sigmoid({a.name}.to(tl.float32)) * {other.name}"
    else:
        expr = f"-{a.name} / 3.0"
    b.emit(f"{name} = {expr}", indent)
    b.tiles.append(Tile(name, a.dims))


def _reduce(ch: Chooser, b: _Body, indent: int) -> None:
    a = _pick(ch, b, 2) or _pick(ch, b, 1)
    if a is None:
        return
    fn = ch.choice(("tl.sum", "tl.max", "tl.min"))
    name = b.fresh("r")
    if len(a.dims) == 2:
        axis = ch.integer(0, 1)
        b.emit(f"{name} = {fn}({a.name}, axis={axis})", indent)
        b.tiles.append(Tile(name, (a.dims[1 - axis],)))
    else:
        b.emit(f"{name} = {fn}({a.name}, axis=0)", indent)
        b.tiles.append(Tile(name, ()))


def _dot(ch: Chooser, b: _Body, indent: int) -> None:
    lhs = _load(ch, b, ("BLOCK_M", "BLOCK_K"), indent, "x_ptr")
    rhs = _load(ch, b, ("BLOCK_K", "BLOCK_N"), indent, "w_ptr")
    name = b.fresh("d")
    b.emit(f"{name} = tl.dot({lhs.name}, {rhs.name})", indent)
    b.tiles.append(Tile(name, ("BLOCK_M", "BLOCK_N")))


def _loop_header(ch: Chooser, stages_param: bool) -> str:
    kind = ch.integer(0, 4)
    if kind == 0:
        return "for k in range(0, K, BLOCK_K):"
    if kind == 1:
        return "for k in range(0, tl.cdiv(K, BLOCK_K)):"
    if kind == 2:
        stages = "STAGES" if stages_param else str(ch.integer(1, 5))
        return f"for k in tl.range(0, K, BLOCK_K, num_stages={stages}):"
    if kind == 3:
        return f"for k in tl.static_range({ch.integer(1, 4)}):"
    return "for k in tl.range(0, K, BLOCK_K):"


def _loop(ch: Chooser, b: _Body, indent: int, stages_param: bool) -> None:
    """A loop carrying an accumulator: a K-loop matmul, a row reduction or a running update."""
    header = _loop_header(ch, stages_param)
    kind = ch.integer(0, 2)
    acc = b.fresh("acc")
    if kind == 0:
        b.emit(f"{acc} = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)", indent)
        b.emit(header, indent)
        inner = _Body(counter=b.counter + 100)
        a = _load(ch, inner, ("BLOCK_M", "BLOCK_K"), indent + 1, "x_ptr")
        w = _load(ch, inner, ("BLOCK_K", "BLOCK_N"), indent + 1, "w_ptr")
        if ch.flag():
            inner.emit(f"{acc} = tl.dot({a.name}, {w.name}, {acc})", indent + 1)
        else:
            inner.emit(f"{acc} += tl.dot({a.name}, {w.name})", indent + 1)
        if ch.flag(0.3):
            inner.emit("x_ptr += BLOCK_K * stride_k", indent + 1)
        dims: tuple[str, ...] = ("BLOCK_M", "BLOCK_N")
    elif kind == 1:
        b.emit(f"{acc} = tl.zeros((BLOCK_M,), dtype=tl.float32)", indent)
        b.emit(header, indent)
        inner = _Body(counter=b.counter + 100)
        x = _load(ch, inner, ("BLOCK_M", "BLOCK_K"), indent + 1)
        inner.emit(f"{acc} += tl.sum({x.name}.to(tl.float32), axis=1)", indent + 1)
        dims = ("BLOCK_M",)
    else:
        base = _pick(ch, b) or _load(ch, b, ("BLOCK_M",), indent)
        b.emit(f"{acc} = {base.name}.to(tl.float32)", indent)
        b.emit(header, indent)
        inner = _Body(counter=b.counter + 100)
        inner.emit(f"{acc} = {acc} * 0.5 + 1.0", indent + 1)
        dims = base.dims
    b.lines.extend(inner.lines)
    b.counter = inner.counter
    b.tiles.append(Tile(acc, dims))


def _constexpr_if(ch: Chooser, b: _Body, indent: int, helpers: list[str]) -> None:
    a = _pick(ch, b)
    if a is None:
        return
    b.emit("if FLAG:", indent)
    b.emit(f"{a.name} = {a.name} * 2.0", indent + 1)
    if ch.flag():
        b.emit("else:", indent)
        b.emit(f"{a.name} = {a.name} + 1.0", indent + 1)


def _store(ch: Chooser, b: _Body) -> None:
    for t in b.tiles[-ch.integer(1, 2):]:
        if not t.dims:
            b.emit(f"tl.store(out_ptr + pid_m, {t.name})")
            continue
        addr, mask = _ptr_expr("out_ptr", t.dims)
        b.emit(f"tl.store({addr}, {t.name}, mask={mask})" if ch.flag(0.8) else f"tl.store({addr}, {t.name})")


def _helpers(ch: Chooser) -> tuple[list[str], list[str]]:
    names: list[str] = []
    src: list[str] = []
    for i in range(ch.integer(0, 2)):
        name = f"_helper{i}"
        body = ch.choice(("return a * b + 1.0", "return tl.maximum(a, b)",
                          "c = a + b\n    return tl.where(c > 0, c, 0.0)"))
        if names and ch.flag(0.4):
            body = f"return {names[-1]}(a, b) * 0.5"   # helper calling a helper (inlining depth)
        src.append(f"@triton.jit\ndef {name}(a, b):\n    {body}\n")
        names.append(name)
    return names, src


def _block_value(ch: Chooser, block: str) -> int:
    if ch.flag(0.05):
        return ch.choice((24, 48, 96))          # not a power of two: KL301 territory, must not crash
    return ch.choice((16, 32, 64, 128, 256) if block != "BLOCK_K" else (16, 32, 64, 128))


def generate_kernel(ch: Chooser) -> GeneratedKernel:
    helpers, helper_src = _helpers(ch)
    stages_param = ch.flag(0.3)
    body = _Body()
    body.emit("pid_m = tl.program_id(0)")
    body.emit("pid_n = tl.program_id(axis=1)")
    body.emit("offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)")
    body.emit("offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)")
    body.emit("offs_k = tl.arange(0, BLOCK_K)")
    _load(ch, body, ch.choice((("BLOCK_M",), ("BLOCK_M", "BLOCK_N"), ("BLOCK_M", "BLOCK_K"))), 1)
    for _ in range(ch.integer(1, 7)):
        what = ch.integer(0, 9)
        if what <= 2:
            _elementwise(ch, body, 1, helpers)
        elif what == 3:
            _load(ch, body, ch.choice((("BLOCK_M",), ("BLOCK_N",), ("BLOCK_M", "BLOCK_N"))), 1)
        elif what == 4:
            _reduce(ch, body, 1)
        elif what == 5:
            _dot(ch, body, 1)
        elif what in (6, 7):
            _loop(ch, body, 1, stages_param)
        else:
            _constexpr_if(ch, body, 1, helpers)
    _store(ch, body)

    params = ["x_ptr", "y_ptr", "w_ptr", "out_ptr", "M", "N", "K",
              "stride_m", "stride_n", "stride_k"]
    constexprs = [f"{blk}: tl.constexpr" for blk in BLOCKS] + ["FLAG: tl.constexpr"]
    if stages_param:
        constexprs.append("STAGES: tl.constexpr")
    config: dict[str, Any] = {blk: _block_value(ch, blk) for blk in BLOCKS}
    config["FLAG"] = ch.flag()
    if stages_param:
        config["STAGES"] = ch.integer(1, 5)
    config["num_warps"] = ch.choice((1, 2, 4, 8, 16))
    config["num_stages"] = ch.integer(1, 6)
    knobs = tuple(k for k in (*BLOCKS, "num_stages", "STAGES") if k in config)

    head = ch.choice(("import triton\nimport triton.language as tl\n",
                      "import triton\nfrom triton import language as tl\n"))
    decorator = "@triton.jit"
    extra = ""
    if ch.flag(0.3):
        # an autotune list around the kernel: more configs, parsed statically from literals
        cfgs = ", ".join(
            f"triton.Config({{'BLOCK_M': {ch.choice((32, 64, 128))}, 'BLOCK_N': {ch.choice((32, 64, 128))}, "
            f"'BLOCK_K': {ch.choice((32, 64))}}}, num_warps={ch.choice((4, 8))}, num_stages={ch.integer(2, 5)})"
            for _ in range(ch.integer(1, 3)))
        decorator = f"@triton.autotune(configs=[{cfgs}], key=['M', 'N', 'K'])\n@triton.jit"
    elif ch.flag(0.3):
        # a launch site with explicit keywords (and an unknown one now and then)
        bm = ch.choice(("64", "128", "triton.next_power_of_2(n)"))
        extra = (f"\n\ndef launch(x, y, w, out, n):\n    grid = (4, 4)\n"
                 f"    kernel[grid](x, y, w, out, n, n, n, 1, 1, 1, BLOCK_M={bm}, BLOCK_N=64, BLOCK_K=32, "
                 f"FLAG=True{', STAGES=2' if stages_param else ''}, num_warps=4)\n")
    signature = ",\n    ".join(params + constexprs)
    source = (f"{head}\n\n" + "\n\n".join(helper_src) + ("\n\n" if helper_src else "")
              + f"{decorator}\ndef kernel(\n    {signature},\n):\n" + "\n".join(body.lines) + "\n" + extra)
    targets = tuple(dict.fromkeys(ch.choice(TARGETS) for _ in range(ch.integer(1, 3))))
    return GeneratedKernel(source, "kernel", BLOCKS, config, knobs, ch.choice(POINTEE), targets)


def bump(config: dict[str, Any], knob: str) -> dict[str, Any] | None:
    """The same config with one knob increased (blocks double, stages +1), or None past sane limits."""
    out = dict(config)
    if knob in BLOCKS:
        if out[knob] >= 512:
            return None
        out[knob] = out[knob] * 2
    else:
        out[knob] = out[knob] + 1
    return out
