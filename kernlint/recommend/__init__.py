"""Config recommendations: search the space with the estimate model, rank by an explainable time model.

Lazy exports: `kernlint.recommend.store` must import without libcst or the analysis (the shim uses it).
"""
from __future__ import annotations

from typing import Any

__all__ = ["Candidate", "Recommendation", "buckets_for", "minimax", "recommend"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from kernlint.recommend import core
        return getattr(core, name)
    raise AttributeError(name)
