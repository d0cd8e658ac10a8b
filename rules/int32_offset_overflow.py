from __future__ import annotations

from collections.abc import Iterator, Mapping

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.ir.nodes import KernelIR, Op, OpKind, Value, is_pointer
from kernlint.ir.walk import bounded_walk
from kernlint.pipeline.rule import Case, FileContext, Rule

_SAFE = '''import triton
import triton.language as tl


@triton.jit
def copy_rows(x_ptr, y_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols)
    tl.store(y_ptr + row * stride + cols, x)
'''
_UNSAFE = _SAFE.replace("tl.program_id(0).to(tl.int64)", "tl.program_id(0)").replace(
    "    x = tl.load(x_ptr + row * stride + cols)\n",
    "    x = tl.load(x_ptr + row * stride + cols)  # expect: KL303\n").replace(
    "    tl.store(y_ptr + row * stride + cols, x)\n", "    tl.store(y_ptr + row * stride + cols, x)  # expect: KL303\n")

# a product in a helper is inlined into every kernel that calls it: one finding at the helper's line
_HELPER = '''import triton
import triton.language as tl


@triton.jit
def _row_start(ptr, stride):
    return ptr + tl.program_id(1) * stride  # expect: KL303


@triton.jit
def scale_rows(x_ptr, stride, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(_row_start(x_ptr, stride) + cols)
    tl.store(_row_start(x_ptr, stride) + cols, x * 2)


@triton.jit
def negate_rows(x_ptr, stride, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(_row_start(x_ptr, stride) + cols)
    tl.store(_row_start(x_ptr, stride) + cols, -x)
'''


# the batch term widened by the author: the int32 products beside it index within one batch (a row of D)
_WIDENED = '''import triton
import triton.language as tl


@triton.jit
def conv_rows(x, y, stride_n, stride_d, D: tl.constexpr, BD: tl.constexpr):
    i_d, i_b = tl.program_id(0), tl.program_id(1)
    o_d = i_d * BD + tl.arange(0, BD)
    p_x = x + tl.cast(i_b, tl.int64) * stride_n + o_d * stride_d
    tl.store(y + tl.cast(i_b, tl.int64) * stride_n + o_d * stride_d, tl.load(p_x, mask=o_d < D), mask=o_d < D)
'''


# How many runtime integers (strides, sizes) a product must multiply an unbounded index by before kernlint
# calls it a likely overflow (the message says so). One is `row * stride`: it passes 2**31 only when the tensor it indexes
# has 2**31 elements, and it is just as often a per-head, per-chunk, split-K or scale buffer that never
# comes near (the 8 findings of this kind a review of 17 packages read: 0 right, 4 wrong, 4 undecidable).
# Two or more is the batch offset built from runtime sizes, `i_b * T * H * K` or `(bos + i_t) * stride_t`
# with `bos = i_b * T`: the whole activation tensor, the int32 bug fla fixed across its ops.
LIKELY_FACTORS = 2


# fla's int32 batch offset (fixed across its ops): `bos = i_b * T`, then scaled by the constexpr H and K
_BATCH = '''import triton
import triton.language as tl


@triton.jit
def chunk_fwd(q, o, T, H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    bos = i_b * T  # expect: KL303
    o_t = i_t * BT + tl.arange(0, BT)
    tl.store(o + (bos + o_t) * H * K + i_h * K, tl.load(q + (bos + o_t) * H * K + i_h * K))
'''
_BATCH_SAFE = _BATCH.replace("i_b * T  # expect: KL303", "i_b.to(tl.int64) * T")


def _scaled(op: Op) -> bool:
    """A product by a literal or constexpr other than 1 (`x * H`, H a constexpr): a dimension's size."""
    scalar = op.elementwise_attrs().scalar if op.kind == OpKind.ELEMENTWISE else None
    value = getattr(scalar, "value", scalar)
    return len(op.operands) == 1 and scalar is not None and value not in (0, 1)


def _dividends(op: Op, producer: Mapping[int, Op]) -> list[Value]:
    """The dividend x of a product `(x // s) * s` (either order), which is at most x: decoding a flat index
    (`n = nc // C; c = nc - n * C`) adds no range."""
    if len(op.operands) != 2:
        return []
    out = []
    for q, s in (op.operands, op.operands[::-1]):
        made = producer.get(q.id)
        if (made is not None and made.kind == OpKind.ELEMENTWISE and made.fn == "//"
                and len(made.operands) == 2 and made.operands[1].id == s.id):
            out.append(made.operands[0])
    return out


def _decoded(op: Op, producer: Mapping[int, Op]) -> bool:
    return bool(_dividends(op, producer))


def _risky_products(ir: KernelIR) -> Iterator[tuple[Op, Value, bool, int]]:
    """Each risky product, its program-id operand, whether that operand is a program id itself (not a
    tile or index derived from one, such as `offs_m = pid * BLOCK + tl.arange(...)`), and how many runtime
    integers the product multiplies the index by (`i_b * T * H` is two at its last `*`)."""
    ops = [op for op, _ in ir.walk()]
    from_pid: set[int] = set()
    from_arg: set[int] = set()
    factors: dict[int, int] = {}   # int32 value → runtime integer arguments multiplied into it
    pid64: set[int] = set()   # int64 values made from a program id: a term the author widened
    users, producer = ir.users(), ir.producers()
    for op in ops:
        if op.result is None:
            continue
        if op.kind == OpKind.PROGRAM_ID:
            from_pid.add(op.result.id)
        elif op.kind == OpKind.PARAM and op.result.dtype in ("i32", "u32"):
            from_arg.add(op.result.id)
            factors[op.result.id] = 1
        elif op.result.dtype in ("i32", "u32"):
            if any(v.id in from_pid for v in op.operands):
                from_pid.add(op.result.id)
            if any(v.id in from_arg for v in op.operands):
                from_arg.add(op.result.id)
            counts = [factors.get(v.id, 0) for v in op.operands]
            fn = op.fn if op.kind == OpKind.ELEMENTWISE else None
            # a size added to a program-id index bounds it, it does not scale it: `state_len - (pid + 1) *
            # BLOCK_M + tl.arange(...)` is below state_len (causal-conv1d's per-batch state rows), so a
            # sum keeps the factors of its program-id terms only
            kept = [factors.get(v.id, 0) for v in op.operands if v.id in from_pid] or counts
            # `*` multiplies sizes in; `+`, `-`, `where` and non-arithmetic ops (casts, broadcasts) keep the
            # larger; `%`, `//` and the like make an index or a count again (`pid % num_pid_m` < M)
            factors[op.result.id] = (sum(counts) if fn == "*" else max(kept, default=0)
                                     if fn in (None, "+", "-", "where") else 0)
            # `bos * H` with a constexpr H: a flattened program-id index scaled again. A stride scaled by a
            # block size (`BH * stride_qh`, the stride of a block of BH heads) is still one stride
            if fn == "*" and _decoded(op, producer):
                factors[op.result.id] = max((factors.get(v.id, 0) for v in _dividends(op, producer)), default=0)
            if fn == "*" and _scaled(op) and any(factors.get(v.id, 0) >= 1 and v.id in from_pid
                                                 for v in op.operands):
                factors[op.result.id] += 1
        elif op.result.dtype in ("i64", "u64") and any(v.id in from_pid or v.id in pid64 for v in op.operands):
            pid64.add(op.result.id)

    def pointers_reached(start: int, seen: set[int] | None = None) -> list[int]:
        """The first pointer values (or the addresses of loads) the product flows into; `seen` collects the
        integer values on the way."""
        frontier, out = [start], []
        seen = seen if seen is not None else set()
        seen.add(start)
        while frontier:
            vid = frontier.pop()
            for op in users.get(vid, []):
                if op.kind == OpKind.LOAD:
                    out.append(op.operands[0].id if op.operands else vid)
                    continue
                for r in op.all_results():
                    if is_pointer(r.dtype):
                        out.append(r.id)
                    elif r.id not in seen:
                        seen.add(r.id)
                        frontier.append(r.id)
        return out

    def widened_elsewhere(pointer: int) -> bool:
        """Whether the address also adds an int64 program-id term: `x + tl.cast(i_b, tl.int64) * stride_n +
        o_d * stride_d`. The author widened the term they knew to be large; the int32 products beside it
        index within one row or tile (fla's causal_conv1d, liger's llama4_rope: 17 of the 23 false findings a
        review of the public corpus sampled were of this kind or bounded dims)."""
        def sources(vid: int) -> list[int]:
            op = producer.get(vid)
            if op is None or op.kind in (OpKind.LOAD, OpKind.PARAM, OpKind.FOR):
                return []
            # a value merged from `if` branches (IS_VARLEN ? bos : i_b): both count
            merged = [v.id for merge in op.merges if merge[0].id == vid for v in merge[1:] if hasattr(v, "id")]
            return merged + [v.id for v in op.operands]

        return any(vid in pid64 for vid in bounded_walk((pointer,), sources, key=lambda vid: vid, bound=256))

    def reaches_pointer(start: int) -> int | None:
        """None when the product reaches no pointer unwidened, else the most runtime factors an offset it
        flows into carries (`bos = i_b * T` flows into `(bos + i_t) * stride_t`: two)."""
        reached = pointers_reached(start)
        if not reached or all(widened_elsewhere(p) for p in reached):
            return None
        return scaled_along(start)

    def scaled_along(start: int) -> int:
        """The most runtime factors the product carries on its way to an address: its own, plus what each
        later `*` multiplies it by. A large term only added to it is not its own: in `base + offs_m * N`
        (`base = pid_b * M * N`, flagged on its own line) `offs_m * N` stays below one M x N matrix."""
        best = {start: factors.get(start, 0)}
        frontier = [start]
        while frontier:
            vid = frontier.pop()
            for op in users.get(vid, []):
                if op.kind == OpKind.LOAD:
                    continue
                fn = op.fn if op.kind == OpKind.ELEMENTWISE else None
                n = best[vid]
                if fn == "*":
                    n += sum(factors.get(v.id, 0) for v in op.operands if v.id != vid) + (1 if _scaled(op) else 0)
                elif fn not in (None, "+", "-", "where"):
                    n = 0     # `%`, `//`: an index again
                n = min(n, 8)  # a loop-carried product cannot grow it without end
                for r in op.all_results():
                    if r.dtype in ("i32", "u32") and n > best.get(r.id, -1):
                        best[r.id] = n
                        frontier.append(r.id)
        return max(best.values())

    for op in ops:
        if op.kind != OpKind.ELEMENTWISE or op.fn != "*" or op.result is None or len(op.operands) != 2:
            continue
        if op.result.dtype not in ("i32", "u32"):
            continue
        a, b = op.operands
        if ((a.id in from_pid and b.id in from_arg and b.id not in from_pid)
                or (b.id in from_pid and a.id in from_arg and a.id not in from_pid)):
            if _decoded(op, producer):
                continue   # (x // s) * s <= x
            pid = a if a.id in from_pid else b
            made = producer.get(pid.id)
            if (n := reaches_pointer(op.result.id)) is not None:
                yield op, pid, made is not None and made.kind == OpKind.PROGRAM_ID, n


class Int32OffsetOverflow(Rule):
    """A program id times a runtime stride is computed in int32 and can overflow on large tensors.

    ## What it does
    Follows values derived from `tl.program_id` and from integer kernel arguments through the dataflow
    graph and flags int32 products of the two that end up in pointer arithmetic. An address that also adds
    an int64 program-id term (`tl.cast(i_b, tl.int64) * stride_n`: the author widened the term they know to
    be large) is not flagged for the int32 products beside it, which index within that batch or row.

    A finding says the overflow is likely where it is plausible for a tensor a GPU can hold: the
    program-id index is multiplied by a runtime size and the offset it becomes is scaled again before it
    addresses memory (`bos = i_b * T`, then `(bos + i_t) * H * K`: a flattened batch-times-sequence index
    times a row, the int32 bug fla fixed across its ops; a 2³¹-element activation is 4 GiB in fp16). A single
    index times one stride (`row * stride`, `offs_m * stride_am`) overflows only when the one tensor it
    indexes has 2³¹ elements, and on real code it mostly indexes a buffer that never does (a split-K partial
    buffer, one chunk or segment, a per-head or scale tensor): it is reported as often bounded. `%` and `//` turn an
    offset back into an index (`pid % num_pid_m` is below M), so they do not count as scaling.

    ## Why is this bad?
    Program ids and integer arguments are 32-bit. `row * stride` wraps past 2³¹ elements (a
    [65536, 32768] fp16 tensor is 2³¹ elements), and the kernel then silently reads and writes the wrong
    memory. Triton only widens arguments it sees ≥ 2³¹ at launch, not products.

    ## Hardware
    None: 32-bit integer arithmetic semantics.

    ## Recommended fix
    Widen before multiplying: `row = tl.program_id(0).to(tl.int64)` (or `tl.cast(pid, tl.int64)`).

    ## Confidence
    Heuristic: whether the product can overflow depends on tensor sizes the source does not state. Info-level
    until it is precise: over flag-gems, gemlite and causal-conv1d, the products this rule called likely
    (program id times two or more sizes) were a whole tensor's flattened offset in 16 of 24 labelled
    findings (67 %, target 90 %); the rest had the same shape but index something small (a conv's channel
    group within one sample, a weight tensor, a histogram buffer, a kernel tap times its dilation), which the
    source does not tell apart (docs/finding-precision.md). The message still says which products look like
    a flattened batch offset.
    """

    CODE = "KL303"
    SEVERITY = Severity.INFO
    CONFIDENCE = Confidence.HEURISTIC
    VALID = [Case(_SAFE), Case(_WIDENED), Case(_BATCH_SAFE)]
    INVALID = [Case(_UNSAFE), Case(_HELPER), Case(_BATCH)]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        # one finding per line: a product in a @triton.jit helper is inlined into every kernel that calls it;
        # of `i_b * T * H * K` (three products on one line) the outermost, with the most factors, is reported
        # line → [factors, expression, what the program-id operand is, kernel names, first qualname]
        found: dict[int, list] = {}
        for k in ctx.kernels:
            for op, pid, direct, n in _risky_products(k.ir):
                expr = " * ".join(k.ir.describe(v) for v in op.operands)
                what = "a program id" if direct else f"`{k.ir.describe(pid)}` (derived from a program id)"
                entry = found.setdefault(op.line, [n, expr, what, [], k.jit.qualname])
                if n > entry[0]:
                    entry[:3] = [n, expr, what]
                if k.jit.name not in entry[3]:
                    entry[3].append(k.jit.name)
        for line, (n, expr, what, names, qualname) in sorted(found.items()):
            where = f"`{names[0]}`" if len(names) == 1 else \
                f"`{names[0]}` and {len(names) - 1} more kernel{'s' if len(names) > 2 else ''}"
            likely = n >= LIKELY_FACTORS
            size = (f"by a runtime integer in int32, and the offset is scaled by {n - 1} more size"
                    f"{'s' if n > 2 else ''} before it addresses memory (a flattened batch offset like "
                    "`i_b * T * H * K`): it overflows once the tensor passes 2**31 elements") if likely else (
                "by one runtime integer in int32; it overflows only if the tensor it indexes has 2**31 elements "
                "or more (a single index times its stride: often bounded, so info)")
            yield self.diagnostic(
                ctx, line, f"`{expr}` in {where} multiplies {what} {size} — cast the program id with "
                "`.to(tl.int64)` first", kernel=qualname, code=expr,
                severity=None)
