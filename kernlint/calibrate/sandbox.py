"""The compile and verify workers' own sandbox: an isolated start and a Python audit hook.

Triton evaluates Python while it compiles a kernel (names, attributes and calls in the body run in the
worker), so a worker must assume that a hostile body gets past the scratch module's checks. Two layers,
both set up by the worker itself:

  * ``isolated_command``/``isolated_env``: ``python -I`` (no PYTHONPATH, no user site, no script or
    current directory on ``sys.path``) started in a fresh temporary directory with a minimal environment,
    and this file and the worker's own files loaded by path, so a ``json.py`` or ``queue.py`` in the
    directory kernlint runs from is never imported;
  * ``install``: a ``sys.addaudithook`` hook, installed after Triton (and torch for --verify) is imported
    and before the scratch module is loaded, that refuses process creation other than the ptxas binaries,
    file writes and deletions outside the worker's cache and temporary directories, sockets, and imports
    outside an allow-list.

This is defence in depth, not a true sandbox: native code (Triton's own extension, ctypes) does not raise
audit events. Only the standard library at import time: the worker may run in another interpreter.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REFUSED = "refused by calibrate's sandbox"

# Process creation events (https://docs.python.org/3/library/audit_events.html): all refused unless the
# executable is an allowed tool
_SPAWN = frozenset({"subprocess.Popen", "os.posix_spawn", "os.spawn", "os.exec", "os.system", "os.fork",
                    "os.forkpty", "os.startfile", "pty.spawn", "os.kill", "os.killpg"})
# Events whose first argument is a path the event changes
_PATH_WRITES = frozenset({"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown",
                          "os.link", "os.symlink", "os.truncate", "os.utime", "os.chflags", "os.lchflags",
                          "shutil.rmtree", "shutil.copyfile", "shutil.copymode", "shutil.copystat",
                          "shutil.copytree", "shutil.move", "shutil.chown", "os.mkfifo", "os.mknod"})
# Top-level modules a compile may import lazily besides triton (measured with Triton 3.9: a compile for
# sm_90/sm_100 imports only triton.* submodules once triton, triton.compiler and the NVIDIA backend are
# loaded; the rest are pure-Python stdlib modules Triton's optional paths use)
_IMPORTS = frozenset({"triton", "torch", "numpy", "_kernlint_scratch", "kernlint_verify_scratch",
                      "typing_extensions", "functools", "itertools", "math", "operator", "dataclasses",
                      "enum", "re", "json", "hashlib", "collections", "contextlib", "warnings", "textwrap",
                      "inspect", "ast", "copy", "numbers", "string", "abc", "types", "typing", "weakref",
                      "struct", "bisect", "heapq", "fractions", "decimal", "difflib", "pprint", "zlib",
                      "base64", "binascii", "uuid", "random", "statistics", "traceback", "linecache",
                      "tokenize", "token", "keyword", "dis", "opcode", "sympy", "mpmath", "filelock",
                      "_contextvars", "contextvars", "annotationlib", "encodings", "codecs"})


def _own_child(pid: object) -> bool:
    """Whether `pid` is a child of this process (Linux: the parent field of /proc/<pid>/stat); False where
    that cannot be read."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
        return int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid()
    except (OSError, ValueError, IndexError):
        return False


class SandboxRefusal(PermissionError):
    """Raised by the audit hook; the worker reports it as the config's error."""


def isolated_env(home: str, extra: dict[str, str]) -> dict[str, str]:
    """The worker's environment: PATH, a locale, HOME and TMPDIR in the worker's own directory, the
    explicit ptxas overrides, and what kernlint sets (``extra``); PYTHONPATH and the rest are dropped."""
    env = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH")
           if k in os.environ}
    tmp = str(Path(home) / "tmp")
    os.makedirs(tmp, exist_ok=True)
    env.update(HOME=home, TMPDIR=tmp, TRITON_HOME=home, TRITON_DEFAULT_FP_FUSION="1", **extra)
    return env


def isolated_command(python: str, script: Path) -> list[str]:
    """``python -I`` running ``script`` by path: only the standard library and site-packages are importable."""
    return [python, "-I", str(script)]


def load_sibling(name: str, here: str) -> Any:
    """Import kernlint/calibrate/<name>.py by path (the worker's sys.path holds no kernlint directory)."""
    import importlib.util
    key = f"_kernlint_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, Path(here).resolve().parent / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[key] = mod
    spec.loader.exec_module(mod)
    return mod


class Sandbox:
    """The audit hook's policy. ``refusals`` keeps every refused event, so a refusal that Triton catches
    and turns into another error is still reported."""

    def __init__(self, writable: Iterable[str], tools: Iterable[str]) -> None:
        self.writable = tuple(os.path.realpath(p) for p in writable if p)
        self.tools = frozenset(os.path.realpath(t) for t in tools if t)
        self.refusals: list[str] = []
        self.active = False

    def _inside(self, path: Any) -> bool:
        if isinstance(path, int):
            return True    # an already open descriptor (the protocol pipe): opening it was checked
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        real = os.path.realpath(str(path))
        return any(real == w or real.startswith(w + os.sep) for w in self.writable)

    def _refuse(self, event: str, args: tuple[Any, ...]) -> None:
        shown = ", ".join(repr(a)[:120] for a in args[:3])
        message = f"{REFUSED}: {event} {shown}"
        self.refusals.append(message)
        raise SandboxRefusal(message)

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event == "os.kill" and args and _own_child(args[0]):
            return   # Triton stops a ptxas that outlives its timeout: a child this worker spawned as a tool
        if event in _SPAWN:
            exe = args[0] if args else None
            if event in ("subprocess.Popen", "os.posix_spawn", "os.exec", "os.spawn") and exe is not None:
                if isinstance(exe, bytes):
                    exe = os.fsdecode(exe)
                if os.path.realpath(str(exe)) in self.tools:
                    return
            self._refuse(event, args)
        elif event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                (isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND))
            if writing and not self._inside(path):
                self._refuse(event, args)
        elif event in _PATH_WRITES:
            for path in args[:2] if event in ("os.rename", "os.link", "os.symlink", "shutil.copyfile",
                                                "shutil.copytree", "shutil.move") else args[:1]:
                if not self._inside(path):
                    self._refuse(event, args)
        elif event.startswith("socket.") or event in ("ctypes.dlopen", "ctypes.dlsym", "ctypes.call_function",
                                                       "sys.settrace", "sys.setprofile", "sys.addaudithook",
                                                       "webbrowser.open", "urllib.Request"):
            self._refuse(event, args)
        elif event == "import":
            name = str(args[0]) if args else ""
            if name.split(".")[0] not in _IMPORTS and name not in sys.modules:
                self._refuse(event, args[:1])

    def take(self) -> str | None:
        """The first refusal since the last call (None when nothing was refused)."""
        first = self.refusals[0] if self.refusals else None
        self.refusals.clear()
        return first


def install(writable: Iterable[str], tools: Iterable[str]) -> Sandbox:
    """Install the hook (it cannot be removed: it lasts for the worker's life)."""
    box = Sandbox(writable, tools)
    sys.addaudithook(box.hook)
    box.active = True
    return box


def ptxas_tools() -> list[str]:
    """The ptxas binaries a compile may run: Triton's bundled ones and the explicit overrides."""
    import triton.backends.nvidia as nv
    bindir = Path(nv.__file__).parent / "bin"
    found = [str(bindir / n) for n in ("ptxas", "ptxas-blackwell")]
    return found + [os.environ[k] for k in ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH") if k in os.environ]
