"""Lower a Helion kernel's device loops into the same KernelIR as a Triton kernel.

Helion turns the outermost `hl.tile`/`hl.grid` loop into the launch grid and nested `hl.tile` loops into
`tl.range` loops; tensor subscripts become pointer loads/stores (`indexing="pointer"`, Helion's
default). A tile's shape is its block-size symbol: `block_size_<i>` for the i-th `hl.tile` dimension
without a fixed `block_size=` (Helion allocates block ids in the order `hl.tile` is first traced —
`CompileEnvironment.allocate_block_size` uses `len(self.block_sizes)` and `TileIndexType.allocate`
appends the matching `BlockSizeSpec`, helion/_compiler/compile_environment.py and type_info.py), so
`helion.Config.block_sizes[i]` binds `block_size_<i>`. A full-extent slice `x[tile, :]` becomes a
reduction dimension `rdim_<j>`: `next_power_of_2(extent)` wide when persistent, `reduction_loops[j]` wide
when Helion loops over it. Host code is read only for extents, allocations and block-size registration.
"""
from __future__ import annotations

from typing import Any

import libcst as cst

from kernlint.frontend.helion import HelionKernel
from kernlint.lowering import tl_calls, tl_dispatch
from kernlint.lowering.helion_host import HelionHostCode
from kernlint.ir.helion_types import GRID_FN, TILE_FN, TORCH_DTYPES, HelionIR, HTensor, HTile, RDim, Slot
from kernlint.lowering.helion_ops import device_call
from kernlint.lowering.lower import CV, DT, Lowerer, ModuleRef, Tup
from kernlint.ir.nodes import OpKind, Region, Value
from kernlint.ir.symbolic import Const, Expr, Sym, Unknown

def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


class HelionLowerer(HelionHostCode, Lowerer):
    def __init__(self, kernel: HelionKernel, module: ModuleRef, arg_types: dict[str, str],
                 default_pointee: str = "fp16") -> None:
        super().__init__(kernel, module, {}, arg_types, default_pointee)
        self.kernel = kernel
        self.slots: list[Slot] = []
        self.rdims: dict[str, RDim] = {}
        self.rdim_alias: dict[str, str] = {}            # extent text → the extent text of its rdim
        self.like: dict[str, HTensor] = {}              # `empty_like(x)` allocations → x
        self.extents: dict[str, Expr] = {}
        self.dims: dict[str, dict[int, Expr]] = {}      # tensor name → known extents per dim
        self.ranks: dict[str, int] = {}
        self.specialized: set[str] = set()
        self.index_cache: dict[tuple[int, int], tuple[Value, Value, list[Any]]] = {}
        self.device = 0
        self.tiles = 0

    # -- symbols ------------------------------------------------------------------------------------
    def new_slot(self, line: int, extent: str, fixed: int | None = None) -> Expr:
        index = len([s for s in self.slots if s.fixed is None])
        symbol = f"block_size_{index}" if fixed is None else f"fixed_{len(self.slots)}"
        self.slots.append(Slot(symbol, line, extent, fixed))
        return Const(fixed) if fixed is not None else Sym(symbol)

    def extent_sym(self, name: str) -> Expr:
        self.extents.setdefault(name, Sym(name))
        return self.extents[name]

    def rdim_for(self, extent: Expr, line: int) -> Expr:
        text = str(extent)
        text = self.rdim_alias.get(text, text)
        if text not in self.rdims:
            # Helion gives full slices of equal size one reduction dimension (the size comparison in
            # CompileEnvironment.allocate_reduction_dimension), and a slice stored into or combined with
            # another must have its size. A size the host code never names (`weight[:]`'s `weight.size(0)`,
            # an output allocated before its input's sizes were read) therefore joins the kernel's one
            # reduction dimension; a named one takes over a lone unnamed one.
            (only,) = self.rdims.values() if len(self.rdims) == 1 else (None,)
            if only is not None and _unnamed(text):
                self.rdim_alias[text] = only.extent_text
                return Sym(only.symbol)
            if only is not None and _unnamed(only.extent_text):
                self.rdim_alias[only.extent_text] = text
                self.rdims = {text: RDim(only.symbol, extent, text, only.line)}
                return Sym(only.symbol)
            self.rdims[text] = RDim(f"rdim_{len(self.rdims)}", extent, text, line)
        return Sym(self.rdims[text].symbol)

    def norm_axis(self, t: HTensor, axis: int) -> int:
        rank = self.ranks.get(t.name)
        return axis + rank if axis < 0 and rank is not None else axis

    def tensor_dim(self, t: HTensor, axis: int) -> Expr:
        axis = self.norm_axis(t, axis)
        dims = self.dims.setdefault(t.name, {})
        rank = self.ranks.get(t.name)
        if axis not in dims and rank is not None and axis - rank in dims:  # set as size(-1) before the rank was known
            dims[axis] = dims[axis - rank]
        like = self.like.get(t.name)
        if axis not in dims and like is not None:  # `torch.empty_like(x)`: x's sizes, read before or after
            return self.tensor_dim(like, axis)
        if axis not in dims:
            dims[axis] = self.extent_sym(f"{t.name}.size({axis})")
        return dims[axis]

    # -- entry ----------------------------------------------------------------------------------------
    def lower(self) -> HelionIR:
        env: dict[str, Any] = {}
        for p in self.kernel.params:
            ann = p.annotation or ""
            if ann in ("int", "builtins.int"):
                env[p.name] = CV(self.extent_sym(p.name))
            elif ann in ("float", "bool"):
                env[p.name] = self.emit(OpKind.PARAM, (), self.kernel.line,
                                        self.new_value((), "fp32" if ann == "float" else "i1", p.name), index=p.index)
            elif "Callable" in ann:
                env[p.name] = Unknown(f"callable argument `{p.name}`")
            else:
                env[p.name] = self.new_tensor(p.name, self.kernel.line, None)
        self.run_host(self.kernel.node.body, env)
        if not self.tiles:
            self.note(self.kernel.line, "a Helion kernel without an `hl.tile`/`hl.grid` device loop")
        self.unmodelled.sort(key=lambda u: u.line)
        symbols = tuple(dict.fromkeys([s.symbol for s in self.slots if s.fixed is None]
                                      + [r.symbol for r in self.rdims.values()]))
        pointers = {k: v for k, v in self.pointer_types.items()}
        return HelionIR(self.kernel.qualname, Region(tuple(self.blocks[0])), symbols, pointers,
                        tuple(dict.fromkeys(self.assumptions)), tuple(self.unmodelled), self.next_id,
                        dict(self.value_names), slots=tuple(self.slots), rdims=tuple(self.rdims.values()),
                        extents=tuple(self.extents), specialized=frozenset(self.specialized))

    pointer_types: dict[str, str]

    def loop_kind(self, it: cst.BaseExpression) -> str | None:
        if isinstance(it, cst.Call):
            names = self.module.names.qualnames(it.func)
            if TILE_FN in names or "helion.language.loops.tile" in names:
                return "tile"
            if GRID_FN in names or "helion.language.loops.grid" in names:
                return "grid"
        return None

    def loop_targets(self, stmt: cst.For, env: dict[str, Any]) -> list[Any]:
        """Allocate the tiles (or grid indices) of `for a, b in hl.tile([m, n], block_size=...)`."""
        call = stmt.iter
        assert isinstance(call, cst.Call)
        kind = self.loop_kind(call)
        positional = [a for a in call.args if a.keyword is None]
        block_kw = next((a.value for a in call.args if a.keyword and a.keyword.value == "block_size"), None)
        if len(positional) >= 3 and block_kw is None:
            block_kw = positional[2].value
        ends = positional[1].value if len(positional) >= 2 else positional[0].value if positional else None
        end_nodes = list(ends.elements) if isinstance(ends, (cst.List, cst.Tuple)) else [ends]
        blocks: list[Any] = []
        if block_kw is not None:
            bk = self.expr(block_kw, env)
            blocks = list(bk.items) if isinstance(bk, Tup) else [bk]
        out: list[Any] = []
        line = self.line(stmt)
        for i, el in enumerate(end_nodes):
            node = el.value if isinstance(el, cst.Element) else el
            text = _code(node) if node is not None else "?"
            if kind == "grid":
                out.append(self.emit(OpKind.PROGRAM_ID, (), line, self.new_value((), "i32", text)))
                continue
            given = blocks[i] if i < len(blocks) else blocks[0] if len(blocks) == 1 else None
            fixed = given.expr.evaluate({}) if isinstance(given, CV) else None
            if isinstance(given, CV) and isinstance(given.expr, Sym):
                block: Expr = given.expr  # a block size from hl.register_block_size
            elif isinstance(fixed, int) and not isinstance(fixed, bool):
                block = self.new_slot(line, text, fixed)
            else:
                if given is not None and not isinstance(given, CV) and not (isinstance(given, CV)):
                    self.note(line, f"`block_size={_code(block_kw)}` not understood")  # type: ignore[arg-type]
                block = self.new_slot(line, text)
            self.tiles += 1
            out.append(HTile(self.tiles, block, text))
        return out

    def bind_targets(self, target: cst.BaseExpression, items: list[Any], env: dict[str, Any]) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for el, item in zip(target.elements, items):
                if isinstance(el.value, cst.Name):
                    env[el.value.value] = item
        elif isinstance(target, cst.Name):
            env[target.value] = items[0] if len(items) == 1 else Tup(tuple(items))

    def grid_loop(self, stmt: cst.For, env: dict[str, Any]) -> None:
        """The outermost device loop is the launch grid: its body is the kernel body, not a loop."""
        body_env = dict(env)
        tiles = self.loop_targets(stmt, body_env)
        self.bind_targets(stmt.target, tiles, body_env)
        for t in tiles:
            if isinstance(t, HTile):  # Helion computes a grid tile's indices and mask at kernel entry
                self.tile_index(t, self.line(stmt))
        self.device += 1
        try:
            self.run_body(stmt.body, body_env)
        finally:
            self.device -= 1

    def for_statement(self, stmt: cst.For, env: dict[str, Any]) -> None:
        if self.loop_kind(stmt.iter) is None:
            super().for_statement(stmt, env)
            return
        self.bind_targets(stmt.target, self.loop_targets(stmt, env), env)
        self.loop(stmt, env, None, stmt.body, kind="tl.range", num_stages=None, bounds=[])

    # -- device expressions ---------------------------------------------------------------------------
    def expr(self, node: cst.BaseExpression, env: dict[str, Any]) -> Any:
        if isinstance(node, cst.Subscript):
            base = self.expr(node.value, env)
            if isinstance(base, HTensor):
                return self.load(base, node, env)
            if isinstance(base, Tup) or isinstance(base, Value):
                return tl_dispatch.subscript(self, node, env)
            return Unknown("subscript")
        if isinstance(node, cst.Call):
            return device_call(self, node, env)
        if isinstance(node, cst.Attribute):
            obj = self.expr(node.value, env) if _rooted_in(node, env) else None
            attr = node.attr.value
            if isinstance(obj, HTensor):
                return DT(obj.dtype) if attr == "dtype" else Unknown(f"tensor attribute .{attr}")
            if isinstance(obj, HTile):
                if attr == "index":
                    return self.tile_index(obj, self.line(node))[0]
                return CV(obj.block) if attr == "block_size" else self.emit(
                    OpKind.ELEMENTWISE, (), self.line(node), self.new_value((), "i32", f"{obj.name}.{attr}"), fn=attr)
        return super().expr(node, env)

    def global_name(self, node: cst.BaseExpression) -> Any:
        for qn in self.module.names.qualnames(node):
            if qn.startswith("torch.") and qn[6:] in TORCH_DTYPES:
                return DT(TORCH_DTYPES[qn[6:]])
        return super().global_name(node)

    def tile_index(self, t: HTile, line: int) -> tuple[Value, Value, list[Any]]:
        """`indices = offset + tl.arange(0, BLOCK)` and `mask = indices < extent`, once per region."""
        for block in reversed(self.blocks):  # computed once where the tile is defined, reused inside loops
            if (t.key, id(block)) in self.index_cache:
                return self.index_cache[(t.key, id(block))]
        key = (t.key, id(self.blocks[-1]))
        if key not in self.index_cache:
            ar = tl_calls.tile(self, OpKind.ARANGE, (), line, (t.block,), "i32", start=Const(0), end=t.block)
            # the tile's offset is left out of the operands: `varies` keeps the index from looking loop-invariant
            offs = tl_calls.tile(self, OpKind.ELEMENTWISE, (ar,), line, (t.block,), "i32", fn="+", varies=True)
            mask = tl_calls.tile(self, OpKind.ELEMENTWISE, (offs,), line, (t.block,), "i1", fn="<")
            self.value_names.setdefault(offs.id, f"indices_{t.name}")
            self.index_cache[key] = (offs, mask, self.blocks[-1])  # keeps the list alive: ids stay unique
        return self.index_cache[key]

    def address(self, t: HTensor, node: cst.Subscript, env: dict[str, Any]) -> tuple[Value, Value | None, tuple[Expr, ...]] | None:
        """Pointer and mask tiles of `t[...]`, built the way Helion's pointer indexing writes them."""
        line = self.line(node)
        vectors: list[tuple[Value, Value]] = []
        scalars: list[Value] = []
        self.ranks.setdefault(t.name, len(node.slice))
        for axis, el in enumerate(node.slice):
            sl = el.slice
            if isinstance(sl, cst.Slice):
                rdim = self.rdim_for(self.tensor_dim(t, axis), line)
                vectors.append(self.tile_index(HTile(-1 - len(self.rdims), rdim, str(rdim)), line)[:2])
                continue
            if isinstance(sl, cst.Index) and isinstance(sl.value, cst.Name) and sl.value.value == "None":
                continue
            idx = self.expr(sl.value, env) if isinstance(sl, cst.Index) else None
            if isinstance(idx, HTile):
                vectors.append(self.tile_index(idx, line)[:2])
            elif isinstance(idx, Value) and not idx.shape:
                scalars.append(idx)
            elif isinstance(idx, CV):
                continue
            else:
                self.note(line, f"index `{_code(sl)}` of tensor `{t.name}`")
                return None
        shape = tuple(v[0].shape[0] for v in vectors)
        rank = len(vectors)
        ptr: Value = t.ptr
        mask: Value | None = None
        for j, (offs, m) in enumerate(vectors):
            view = tuple(offs.shape[0] if k == j else Const(1) for k in range(rank))
            o = tl_calls.tile(self, OpKind.VIEW, (offs,), line, view, "i32")
            mv = tl_calls.tile(self, OpKind.VIEW, (m,), line, view, "i1")
            full = tuple(shape[k] if k <= j else Const(1) for k in range(rank))
            # the generated code scales each index by its stride, left out here (`unscaled`: the offsets say
            # nothing about the alignment, axis_divisibility.py)
            ptr = tl_calls.tile(self, OpKind.ELEMENTWISE, (ptr, o, *scalars), line, full, f"ptr<{t.dtype}>", fn="+",
                                unscaled=True)
            mask = mv if mask is None else tl_calls.tile(self, OpKind.ELEMENTWISE, (mask, mv), line, full, "i1", fn="&")
            scalars = []
        if scalars:
            ptr = tl_calls.tile(self, OpKind.ELEMENTWISE, (ptr, *scalars), line, (), f"ptr<{t.dtype}>", fn="+",
                                unscaled=True)
        return ptr, mask, shape

    def load(self, t: HTensor, node: cst.Subscript, env: dict[str, Any]) -> Any:
        found = self.address(t, node, env)
        if found is None:
            return Unknown("load")
        ptr, mask, shape = found
        operands = (ptr,) if mask is None else (ptr, mask)
        return tl_calls.tile(self, OpKind.LOAD, operands, self.line(node), shape, t.dtype, block_ptr=False,
                             masked=mask is not None)

    def bind(self, target: cst.BaseExpression, value: Any, env: dict[str, Any]) -> None:
        if isinstance(target, cst.Subscript):
            base = self.expr(target.value, env)
            if isinstance(base, HTensor):
                self.store(base, target, value, env)
                return
        super().bind(target, value, env)

    def store(self, t: HTensor, node: cst.Subscript, value: Any, env: dict[str, Any]) -> None:
        found = self.address(t, node, env)
        if found is None:
            return
        ptr, mask, shape = found
        line = self.line(node)
        if isinstance(value, Value) and value.dtype != t.dtype:
            value = tl_calls.tile(self, OpKind.CAST, (value,), line, value.shape, t.dtype)  # Helion casts on store
        operands = tuple(v for v in (ptr, value, mask) if isinstance(v, Value))
        self.emit(OpKind.STORE, operands, line, None)


def _unnamed(extent_text: str) -> bool:
    """A size only the lowering names (`weight.size(0)`, `alloc@12.size(1)`), never the host code."""
    return ".size(" in extent_text


def _rooted_in(node: cst.Attribute, env: dict[str, Any]) -> bool:
    root: cst.BaseExpression = node
    while isinstance(root, cst.Attribute):
        root = root.value
    return not isinstance(root, cst.Name) or root.value in env
