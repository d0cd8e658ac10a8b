"""Typed op attributes (kernlint/ir/attributes.py): every kind has a frozen class, `Lowerer.emit` rejects an
attribute its kind does not declare, readers get the class of the op's kind, and ops stay hashable and
picklable with their attributes."""
from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path
from types import SimpleNamespace

import pytest

from kernlint.ir.attributes import ATTRIBUTES, ElementwiseAttrs, ForAttrs, OpAttrs, make_attrs
from kernlint.ir.nodes import Op, OpKind, Value
from kernlint.lowering.lower import Lowerer
from kernlint.pipeline.api import Settings, lint_paths

ROOT = Path(__file__).resolve().parents[2]


def test_every_kind_has_a_frozen_slotted_attribute_class() -> None:
    assert set(ATTRIBUTES) == set(OpKind)
    for kind, cls in ATTRIBUTES.items():
        assert issubclass(cls, OpAttrs), kind
        attrs = cls()                                   # every field has a default
        assert not hasattr(attrs, "__dict__"), kind     # slots
        with pytest.raises(dataclasses.FrozenInstanceError):
            attrs.multiple_of = 4                       # type: ignore[misc]


def test_make_attrs_builds_the_class_of_the_kind() -> None:
    attrs = make_attrs(OpKind.ELEMENTWISE, {"fn": "+", "scalar_first": True})
    assert isinstance(attrs, ElementwiseAttrs) and attrs.fn == "+" and attrs.scalar_first and attrs.scalar is None
    assert type(make_attrs(OpKind.CAST, {})) is OpAttrs


def test_make_attrs_rejects_an_undeclared_key_naming_kind_and_key() -> None:
    with pytest.raises(ValueError, match=r"load op the attribute 'fn'"):
        make_attrs(OpKind.LOAD, {"fn": "exp"})
    with pytest.raises(ValueError, match=r"for op the attribute 'carry'"):
        make_attrs(OpKind.FOR, {"carry": ()})           # a typo of `carried`


def test_emit_rejects_an_undeclared_attribute() -> None:
    lo = SimpleNamespace(next_id=0, call_site=None, blocks=[[]])
    value = Value(1, (), "i32")
    assert Lowerer.emit(lo, OpKind.ELEMENTWISE, (), 3, value, fn="exp") is value   # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"cast op the attribute 'fn'"):
        Lowerer.emit(lo, OpKind.CAST, (value,), 4, Value(2, (), "fp32"), fn="exp")   # type: ignore[arg-type]
    op = lo.blocks[-1][0]
    assert len(lo.blocks[-1]) == 1 and op.elementwise_attrs().fn == "exp" and op.fn == "exp"


def test_typed_accessors_assert_the_kind() -> None:
    op = Op(1, OpKind.LOAD, Value(1, (), "fp16"), (), 1, make_attrs(OpKind.LOAD, {"masked": True}))
    assert op.load_attrs().masked
    with pytest.raises(TypeError, match="ForAttrs asked of a load op"):
        op.for_attrs()
    assert op.fn is None and op.carried == () and op.merges == ()


def test_attributes_do_not_take_part_in_hash_or_equality() -> None:
    a = Op(1, OpKind.ELEMENTWISE, None, (), 1, make_attrs(OpKind.ELEMENTWISE, {"fn": "+"}))
    b = dataclasses.replace(a, attrs=a.attrs.with_hint("multiple_of", 16))
    assert a == b and hash(a) == hash(b) and b.attrs.multiple_of == 16 and a.attrs.multiple_of is None
    with pytest.raises(ValueError):
        a.attrs.with_hint("fn", "*")


def test_lowered_graph_has_typed_attributes_and_pickles() -> None:
    result = lint_paths([str(ROOT / "examples" / "matmul.py")], Settings(targets=("h100",)))
    ir = next(k.ir for f in result.files for k in f.kernels)
    ops = [op for op, _ in ir.walk()]
    for op in ops:
        assert type(op.attrs) is ATTRIBUTES[op.kind], op
    loop = next(op for op in ops if op.kind == OpKind.FOR)
    assert isinstance(loop.attrs, ForAttrs) and [c.name for c in loop.carried][:1] and loop.for_attrs().loop == "range"
    back = pickle.loads(pickle.dumps(ops))
    assert back == ops and [o.attrs for o in back] == [o.attrs for o in ops]


def test_a_hint_is_recorded_on_the_producing_op(tmp_path: Path) -> None:
    src = tmp_path / "hinted.py"
    src.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def hinted(x_ptr, BLOCK: tl.constexpr):\n"
        "    offs = tl.max_contiguous(tl.multiple_of(tl.arange(0, BLOCK), BLOCK), BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs))\n")
    ir = next(k.ir for f in lint_paths([str(src)], Settings(targets=("h100",))).files for k in f.kernels)
    arange = next(op for op, _ in ir.walk() if op.kind == OpKind.ARANGE)
    assert arange.attrs.multiple_of is not None and arange.attrs.max_contiguous is not None
    assert all(op.attrs.multiple_of is None for op, _ in ir.walk() if op is not arange)
