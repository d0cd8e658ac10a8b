"""An author's autotuned config stays first unless the model predicts a gain above its error (ranking.MODEL_ERROR)."""
from __future__ import annotations

from dataclasses import replace

from kernlint.pipeline.api import Settings, lint_paths
from kernlint.hardware.specs import SPECS
from kernlint.recommend import core, ranking

from conftest import ROOT


def _swiglu():  # type: ignore[no-untyped-def]
    res = lint_paths([str(ROOT / "examples/swiglu.py")], Settings(targets=("h200",)))
    return next(k for f in res.files for k in f.kernels if k.jit.name == "swiglu_fwd_kernel")


def test_tuned_author_config_is_kept_when_the_modelled_gain_is_small() -> None:
    rec = core.recommend(_swiglu(), SPECS["h200"], {"n_rows": 4096, "n_cols": 14336})
    assert rec.author_tuned and rec.author is not None
    top = rec.ranked[0]
    if rec.kept_author:
        assert (top.constexprs, top.num_warps, top.num_stages) == \
            (rec.author.constexprs, rec.author.num_warps, rec.author.num_stages)
    else:  # the search found a config modelled more than the kind's error faster than the author's
        assert top.score.time_us < rec.author_floor_us * (1 - ranking.MODEL_ERROR[rec.kind])


def test_finish_keeps_author_only_within_the_margin() -> None:
    base = core.recommend(_swiglu(), SPECS["h200"], {"n_rows": 4096, "n_cols": 4096})
    author = base.author
    assert author is not None
    other = next(c for c in base.ranked if (c.constexprs, c.num_warps) != (author.constexprs, author.num_warps))
    t = author.score.time_us
    # hand arithmetic: 3% faster than the author is inside the 7% error of a dot kernel (the Recommendation's
    # default kind), 20% faster is outside
    for factor, kept in ((0.97, True), (0.80, False)):
        cand = replace(other, score=replace(other.score, time_us=t * factor))
        rec = core.Recommendation("k", "h200", {}, author=author, author_tuned=True)
        ranking.finish(rec, [cand, author], top_k=3)
        assert (rec.ranked[0] is author) == kept, factor
        assert (rec.kept_author is not None) == kept
