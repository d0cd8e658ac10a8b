"""Recognise source written for another vendor's Triton backend (Ascend, Cambricon, Kunlunxin, ...).

Such code is compiled by that vendor's Triton fork for its own hardware: a non-power-of-two `tl.arange`, a
block that would spill an NVIDIA register file, or a shared-memory budget of an H100 says nothing about it.
kernlint does not judge it against NVIDIA targets unless `[tool.kernlint] vendor-backends = "check"`.

A file is recognised by how it is laid out or what it imports, never by what its kernels do:
- a directory or the file name (below the project root) names a vendor backend, as a word of the name
  split at `_`/`-`: a vendor's own name anywhere (`_ascend/`, `cambricon/`, fla's `triton_ascend.py`), or
  a generic device name (`amd`, `npu`, `xpu`, ...) when the name also says `triton` or `backend`, carries
  the leading underscore of a backend package (`_amd/`) or sits in a `backend(s)`/`vendor(s)`/`platforms`
  directory (flag-gems keeps one package per vendor under `flag_gems/runtime/backend/_<vendor>/`;
  flash-attn its ROCm kernels under `flash_attn/flash_attn_triton_amd/`);
- the module imports a vendor's PyTorch or Triton extension at module level (`import torch_npu`,
  `import triton.backends.mlu.driver`). An import inside a function or `try` is device dispatch that runs
  everywhere (flag-gems' `runtime/backend/device.py`), so only unindented imports count.
NVIDIA's own directories (`_nvidia/`, `cuda/`) are never matched.
"""
from __future__ import annotations

import re
from pathlib import Path, PurePath

# Names only ever used for one vendor's backend (flag-gems 5.0.2 `runtime/backend/_<name>/`, and the
# device names of their PyTorch extensions).
VENDOR_DIRS = frozenset({
    "ascend", "cambricon", "kunlunxin", "mthreads", "metax", "iluvatar", "hygon", "enflame", "tsingmicro",
    "sunrise", "aipu", "mlu", "musa", "maca", "corex", "gcu", "ptpu", "txda",
})
# Device names also used for ordinary directories: a backend only with `_` or under a backend directory.
GENERIC_DIRS = frozenset({"amd", "rocm", "hip", "arm", "npu", "xpu", "hpu", "dcu", "intel", "cpu"})
BACKEND_PARENTS = frozenset({"backend", "backends", "_backends", "vendor", "vendors", "platforms", "devices"})

# Module-level imports that only succeed on one vendor's stack.
_VENDOR_IMPORT = re.compile(
    r"^(?:import|from)\s+("
    r"torch_(?:npu|mlu|musa|gcu|txda|ptpu|dipu|xmlir|corex|maca)"
    r"|triton_(?:gcu|ascend|mlu|musa|xpu)"
    r"|triton\.backends\.(?!nvidia\b|amd\b|compiler\b|driver\b)\w+"
    r"|intel_extension_for_pytorch|habana_frameworks"
    r")\b", re.MULTILINE)


def vendor_backend(path: str, text: str | None, root: str | None = None) -> str | None:
    """Why `path` is code for another vendor's backend (for the report), or None. Only directories below
    `root` (the project's) are read: a checkout under `/home/ascend/` is not a backend package."""
    p = Path(path).absolute()
    if root is not None and p.is_relative_to(Path(root).absolute()):
        p = p.relative_to(Path(root).absolute())
    parts = list(p.parts if not p.is_absolute() else PurePath(path).parts)
    parts[-1] = PurePath(parts[-1]).stem if parts else ""
    for i, part in enumerate(parts):
        name = part.lower()
        words = set(re.split(r"[_\-.]+", name)) - {""}
        qualified = name.startswith("_") or bool(words & {"triton", "backend", "backends"}) or (
            i > 0 and parts[i - 1].lower() in BACKEND_PARENTS)
        if words & VENDOR_DIRS or (words & GENERIC_DIRS and qualified):
            return f"in `{part}`, named for another vendor's backend"
    if text is not None and (m := _VENDOR_IMPORT.search(text)):
        return f"imports `{m.group(1)}`"
    return None
