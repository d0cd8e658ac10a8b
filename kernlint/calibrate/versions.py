"""Which Triton version the model assumes, and what is known about each (issue 3, item 6).

The register and shared-memory constants (kernlint/analysis/registers.py MODELS, smem.py rules) were fitted
on Triton 3.9 truth. Triton 3.6 (the H200 machine's version) was recorded on the same 183 reference
configs (benchmarks/truth/triton-3.6.json) to see whether it needs its own constants. It does not:
  * shared memory: identical to 3.9 on 183/183 configs, so the smem rules hold unchanged;
  * registers: median ptxas(3.6)/ptxas(3.9) = 1.00 on every target; the differences are per kernel
    (sm_80 layernorm −8 %, softmax +11 %), not a per-architecture scale or base a table could carry;
  * static median abs error on the same configs, 3.9 → 3.6: sm_80 7.7 → 8.0 %, sm_90 7.7 → 10.0 %,
    sm_100 11.0 → 12.9 %; one anchor compile (anchor.py) takes 3.6 to 7.0 / 8.0 / 8.9 %.
So every known version maps to the same parameters; the table exists to say which one was assumed and on
what evidence, and to be the place where a version that does differ gets its own entry.
"""
from __future__ import annotations

from dataclasses import dataclass

CALIBRATED_ON = "3.9"


@dataclass(frozen=True)
class VersionInfo:
    version: str            # major.minor
    parameters: str         # whose fitted constants apply
    truth: str              # where the evidence is recorded
    note: str


KNOWN: dict[str, VersionInfo] = {
    "3.9": VersionInfo("3.9", "3.9", "benchmarks/truth/triton-3.9.json",
                       "the constants were fitted on this version"),
    "3.6": VersionInfo("3.6", "3.9", "benchmarks/truth/triton-3.6.json",
                       "3.9 constants: shared memory identical, registers median ratio 1.00 (per-kernel noise)"),
}


def major_minor(version: str) -> str:
    parts = version.strip().split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else version.strip()


def newest_known() -> str:
    return max(KNOWN, key=lambda v: tuple(int(x) for x in v.split(".")))


def assumed(requested: str | None, installed: str | None) -> tuple[VersionInfo, str]:
    """(entry, one line saying what is assumed and why): --triton-version, else the compiling Triton, else
    the newest known version."""
    source = "--triton-version" if requested else "installed" if installed else "newest known"
    raw = requested or installed or newest_known()
    mm = major_minor(raw)
    info = KNOWN.get(mm)
    if info is None:
        info = KNOWN[newest_known()]
        return info, (f"Triton {raw} ({source}) has no recorded truth: assuming {info.version}'s parameters "
                      f"(the newest known); the compiled truth in this table checks it (--anchor: add --verify)")
    return info, f"model assumes Triton {mm} ({source}): {info.note}"
