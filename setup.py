"""Ships the top-level `rules/` folder as the package `kernlint.rules` (metadata lives in pyproject.toml)."""
from setuptools import find_packages, setup

rule_packages = ["kernlint.rules", *(f"kernlint.rules.{p}" for p in find_packages("rules"))]
setup(
    packages=[*find_packages(include=["kernlint", "kernlint.*"]), *rule_packages],
    package_dir={"kernlint.rules": "rules"},
)
