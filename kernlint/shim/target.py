"""Which kernlint target the running program is on: $KERNLINT_TARGET (resolved like `--target`), else the
current GPU identified by its exact model token, compute capability and SM count.

A wrong answer applies configs computed for another GPU, so anything not clearly one of kernlint's targets
(an "RTX A1000", a GH200, an H100 PCIe with 114 SMs, a MIG slice) gives None with a sentence saying why;
KERNLINT_TARGET chooses the entries explicitly. Imports torch only when asked, never triton.
"""
from __future__ import annotations

import logging
import os
import re

from kernlint.hardware.specs import SPECS, UnknownTarget, resolve_target

log = logging.getLogger("kernlint.shim")
ENV_TARGET = "KERNLINT_TARGET"

# The model token(s) each target's device name must contain, as whole tokens: a substring test mapped
# "NVIDIA RTX A1000 Laptop GPU" to a100 and "NVIDIA GH200 480GB" to h200.
_TOKENS: dict[str, tuple[frozenset[str], ...]] = {
    "h100": (frozenset({"h100"}),),
    "h200": (frozenset({"h200"}),),
    "b200": (frozenset({"b200"}),),
    "a100": (frozenset({"a100"}),),
    "l40s": (frozenset({"l40s"}),),
    "rtx4090": (frozenset({"rtx", "4090"}), frozenset({"geforce", "4090"})),
    "rtx5090": (frozenset({"rtx", "5090"}), frozenset({"geforce", "5090"})),
}


def env_target() -> str | None:
    """$KERNLINT_TARGET as a target key ("sm_90" → "h100", " H200 " → "h200"), None when unset or blank.
    Raises UnknownTarget for a value `--target` would reject (one target only: the shim applies one)."""
    raw = os.environ.get(ENV_TARGET, "").strip()
    return resolve_target(raw).key if raw else None


def target_for_device(name: str, capability: tuple[int, int] | None = None,
                      sms: int | None = None) -> tuple[str | None, str]:
    """(target key or None, why) for a device name as torch reports it; capability and SM count, when
    given, must match the target's too."""
    tokens = set(re.findall(r"[a-z0-9]+", name.lower()))
    keys = [k for k, alts in _TOKENS.items() if any(alt <= tokens for alt in alts)]
    if len(keys) != 1:
        known = ", ".join(sorted(SPECS))
        return None, f"{name!r} is not one of kernlint's targets ({known})"
    key = keys[0]
    spec = SPECS[key]
    if capability is not None and capability[0] * 10 + capability[1] != spec.capability:
        return None, (f"{name!r} reports compute capability {capability[0]}.{capability[1]}, "
                      f"not the {key} target's {spec.arch}")
    if sms is not None and sms != spec.sms:
        # an H100 PCIe (114 SMs) or a MIG slice: the waves the ranking counted would be wrong
        return None, f"{name!r} has {sms} SMs, the {key} target {spec.sms}"
    return key, f"{name!r} is the {key} target"


def describe_target() -> tuple[str | None, str]:
    """(target key or None, why): $KERNLINT_TARGET, else the current CUDA device."""
    try:
        key = env_target()
    except UnknownTarget as exc:
        return None, f"{ENV_TARGET}: {exc}"
    if key is not None:
        return key, f"{ENV_TARGET}={os.environ[ENV_TARGET].strip()}"
    try:
        import torch
        if not torch.cuda.is_available():
            return None, "no CUDA GPU (torch.cuda.is_available() is False) and KERNLINT_TARGET is unset"
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        name = str(props.name)
        cap = (int(props.major), int(props.minor))
        sms = int(props.multi_processor_count)
    except Exception as exc:  # noqa: BLE001 - no torch or no driver: no target, entries are ignored
        return None, f"no GPU found ({type(exc).__name__}: {str(exc)[:80]}) and KERNLINT_TARGET is unset"
    key, why = target_for_device(name, cap, sms)
    return key, why if key else f"{why}; set KERNLINT_TARGET to choose the entries"


def detect_target() -> str | None:
    """The kernlint target key of the current GPU ("h200"), or None: no GPU (CPU, interpreter), a GPU that is
    not exactly one of kernlint's targets, or an unknown $KERNLINT_TARGET (logged as an error)."""
    key, why = describe_target()
    if key is None and why.startswith(ENV_TARGET):
        log.error("kernlint: %s; no target, so no recommendation is applied", why)
    return key
