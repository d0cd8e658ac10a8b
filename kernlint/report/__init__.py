"""Output formats; each module renders a LintResult and nothing else."""
from __future__ import annotations

FORMATS = ("full", "concise", "json")
