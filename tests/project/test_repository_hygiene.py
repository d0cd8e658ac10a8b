"""The repository cites nothing outside itself and dates its history by version and date, not by work rounds.

Scans every file git would ship (tracked, plus untracked files that are not ignored) for citations of files
that are not in the repository (a design document or reference notes kept beside it) and for history dated
by work rounds ("the twelfth stop", "session 20", "(… helper h4)").
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_ORDINALS = ("first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|"
             "fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|twenty-[a-z]+|"
             "thirtieth|[0-9]+(?:st|nd|rd|th)")
OUTSIDE = re.compile(r"(?:\.\./)?shared/reference\b|\.\./shared\b|(?<![\w/.-])DESIGN\.md")
ROUNDS = re.compile(rf"\b(?:{_ORDINALS})[ -]stops?\b|\bsession [0-9]+\b|\bhelper [a-z]*[0-9][a-z0-9]*\)"
                    r"|\bhelper (?:sessions?|h[0-9]+)\b", re.IGNORECASE)
SKIP_SUFFIXES = {".json", ".jsonl", ".png", ".whl", ".gz"}   # recorded data, not prose


def _shipped_files() -> list[Path]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    return [ROOT / n for n in listed if n and (ROOT / n).is_file() and Path(n).suffix not in SKIP_SUFFIXES
            and n != "tests/project/test_repository_hygiene.py"]


def _hits(pattern: re.Pattern[str]) -> list[str]:
    hits = []
    for path in _shipped_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    return hits


def test_no_citation_of_files_outside_the_repository() -> None:
    assert _hits(OUTSIDE) == []


def test_history_is_dated_by_version_not_by_work_rounds() -> None:
    assert _hits(ROUNDS) == []


@pytest.mark.parametrize("text", ["see DESIGN.md §5", "shared/reference/triton_truth.md", "../shared/x.py"])
def test_the_citation_pattern_catches(text: str) -> None:
    assert OUTSIDE.search(text)


@pytest.mark.parametrize("text", ["State at the twentieth stop", "(session 18, helper h4)", "the 21st stop",
                                  "Four helper sessions", "(session 20, helper b200ln)"])
def test_the_dating_pattern_catches(text: str) -> None:
    assert ROUNDS.search(text)


@pytest.mark.parametrize("text", ["any command stops quietly", "shared/tensor memory", "(stop - start) / step",
                                  "docs/design.md", "a jit helper (fla)", "helper line"])
def test_the_patterns_leave_ordinary_words(text: str) -> None:
    assert not OUTSIDE.search(text) and not ROUNDS.search(text)
