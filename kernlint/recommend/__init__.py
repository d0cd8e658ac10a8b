"""Config recommendations: search the space with the estimate model, rank by an explainable time model.

Lazy exports: importing the package stays cheap (`kernlint.recommend.cli` loads the search only when asked).
The config store's format is `kernlint.core.config_store`, shared with the shim, which never imports this package.
"""
from __future__ import annotations

from typing import Any

__all__ = ["Candidate", "Recommendation", "buckets_for", "minimax", "recommend"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from kernlint.recommend import core
        return getattr(core, name)
    raise AttributeError(name)
