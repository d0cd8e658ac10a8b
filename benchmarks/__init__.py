"""Benchmarks and accuracy tools, run as scripts (`python benchmarks/accuracy.py`); a package so tests import
them as `benchmarks.<module>` (pytest puts the repository root on the path: `pythonpath` in pyproject.toml)."""
