"""Compile workers: ``python -I .../kernlint/calibrate/worker.py`` speaks JSON lines on stdin/stdout.

A worker is a separate interpreter so that (a) LLVM/ptxas state and crashes stay out of the CLI process,
(b) ``-j N`` compiles in parallel (compiles are single-threaded), and (c) ``--python`` can point at another
environment's interpreter (another Triton version) that has only Triton and the standard library: the
worker imports nothing from kernlint but this module, ``triton_compile`` and ``sandbox`` (loaded by path).
Each worker starts isolated, in its own temporary directory, and compiles under the audit hook of
``sandbox.py``: a refused event fails that config with "refused by calibrate's sandbox: ...".

Requests: {"op": "env"} → {"env": {...versions...}} or {"error": "triton-missing: ..."};
{"op": "compile", "module": PATH, "kernel": NAME, "args": {}, "constexprs": {}, "config": {}, "cap": 90,
"timeout": S} → the ``triton_compile.RESULT_FIELDS``. The module is a scratch module written by
``kernlint.calibrate.scratch`` (only triton imports, constants, jit functions), never the user's file.
"""
from __future__ import annotations

import importlib.util
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

_MODULES: dict[str, Any] = {}


def _load_kernel(module_path: str, kernel: str) -> Any:
    mod = _MODULES.get(module_path)
    if mod is None:
        name = "_kernlint_scratch_" + Path(module_path).stem
        spec = importlib.util.spec_from_file_location(name, module_path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load scratch module {module_path}")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # Triton resolves a JITFunction's globals through its module
        spec.loader.exec_module(mod)
        _MODULES[module_path] = mod
    obj = mod
    for part in kernel.split("."):
        obj = getattr(obj, part)
    return obj


_BOX: Any = None   # the worker's sandbox.Sandbox, installed by main()


def _sibling(name: str) -> Any:
    if __package__:    # imported as kernlint.calibrate.worker (tests, the client side)
        import importlib
        return importlib.import_module(f"{__package__}.{name}")
    sandbox = sys.modules.get("_kernlint_sandbox")
    if sandbox is None:
        import importlib.util
        spec = importlib.util.spec_from_file_location("_kernlint_sandbox", Path(__file__).resolve().parent / "sandbox.py")
        assert spec is not None and spec.loader is not None
        sandbox = importlib.util.module_from_spec(spec)
        sys.modules["_kernlint_sandbox"] = sandbox
        spec.loader.exec_module(sandbox)
    return sandbox if name == "sandbox" else sandbox.load_sibling(name, __file__)


def _handle(req: dict[str, Any]) -> dict[str, Any]:
    tc = _sibling("triton_compile")
    if req.get("op") == "env":
        try:
            return {"env": tc.environment()}
        except ImportError as exc:
            return {"error": f"triton-missing: {exc}"}
    if _BOX is not None:
        _BOX.take()
    try:
        fn = tc.unwrap(_load_kernel(req["module"], req["kernel"]))
    except BaseException as exc:  # a broken scratch module is reported per config, like a compile error
        if isinstance(exc, KeyboardInterrupt):
            raise
        out = dict.fromkeys(tc.RESULT_FIELDS)
        out["error"] = tc.error_line(exc)
    else:
        out = tc.compile_jit(fn, req["args"], req["constexprs"], req["config"], int(req["cap"]),
                             int(req.get("timeout") or 0))
    refused = _BOX.take() if _BOX is not None else None
    if refused:   # even when Triton caught the refusal and raised something else
        out.update(dict.fromkeys(("regs", "spill_store", "spill_load", "stack", "shared", "tmem")), error=refused)
    return out


def _start_sandbox() -> None:
    """Import Triton's compiler, then install the audit hook: before any scratch module is loaded."""
    global _BOX
    sandbox = _sibling("sandbox")
    sys.dont_write_bytecode = True   # the scratch module's directory is not writable under the hook
    try:
        import triton.backends.nvidia.compiler  # noqa: F401
        import triton.compiler  # noqa: F401
        # `warnings` imports tracemalloc (and it pickle) the first time it formats a warning, which some
        # compiles emit: imported here, before the hook, so that import is not refused mid-compile
        import tracemalloc  # noqa: F401
        tools = sandbox.ptxas_tools()
    except ImportError:
        return    # no Triton: every request answers "triton-missing"
    # the client sets HOME (which holds TMPDIR) to the worker's own directory
    writable = [os.environ.get("TRITON_CACHE_DIR", ""), os.environ.get("HOME", "")]
    _BOX = sandbox.install([w for w in writable if w and w != os.sep], tools)


def main() -> None:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # native prints (LLVM, ptxas) must not corrupt the protocol: fd 1 now goes to stderr
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # 3.9's current default; silences its warning
    _start_sandbox()
    for line in sys.stdin:
        if not line.strip():
            continue
        proto.write(json.dumps(_handle(json.loads(line))) + "\n")


# ---------------------------------------------------------------------------------------------------
# Client side (the CLI process)
# ---------------------------------------------------------------------------------------------------

class WorkerCrashed(RuntimeError):
    pass


class TritonMissing(RuntimeError):
    pass


class _Worker:
    def __init__(self, python: str, extra_env: dict[str, str], parent: str) -> None:
        from kernlint.calibrate import sandbox
        self._err = tempfile.TemporaryFile(mode="w+")
        self.home = tempfile.mkdtemp(prefix="worker_", dir=parent)   # cwd, HOME and TMPDIR of this worker
        # own session: a terminal's Ctrl-C reaches only kernlint, which stops the workers itself (sharing the
        # process group, each worker died of the SIGINT, was taken for a crash and replaced, and the sweep went on)
        self.proc = subprocess.Popen(sandbox.isolated_command(python, Path(__file__).resolve()), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._err, text=True, cwd=self.home,
                                     env=sandbox.isolated_env(self.home, extra_env), bufsize=1,
                                     start_new_session=True)

    def request(self, req: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            code = self.proc.wait()
            self._err.seek(0)
            tail = [ln for ln in self._err.read().splitlines() if ln.strip()][-1:]
            raise WorkerCrashed(f"compile worker died (exit code {code}){': ' + tail[0] if tail else ''}"[:400])
        return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._err.close()


class WorkerPool:
    """``jobs`` worker processes, started on demand; a crashed worker is replaced and the run goes on."""

    def __init__(self, python: str | None = None, jobs: int = 2, triton_cache_dir: str | None = None) -> None:
        self.python = python or sys.executable
        self.jobs = max(1, jobs)
        self._cache_tmp = None if triton_cache_dir else tempfile.TemporaryDirectory(prefix="kernlint_triton_")
        self._homes = tempfile.TemporaryDirectory(prefix="kernlint_workers_")
        self.env = {"TRITON_CACHE_DIR": triton_cache_dir or self._cache_tmp.name}  # type: ignore[union-attr]
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._all: list[_Worker] = []
        self._lock = threading.Lock()
        self._stopping = False

    def _get(self) -> _Worker:
        while True:
            if self._stopping:
                raise WorkerCrashed("interrupted")
            try:
                return self._idle.get_nowait()
            except queue.Empty:
                with self._lock:
                    if len(self._all) < self.jobs:
                        w = _Worker(self.python, self.env, self._homes.name)
                        self._all.append(w)
                        return w
                try:
                    return self._idle.get(timeout=0.2)
                except queue.Empty:
                    continue

    def request(self, req: dict[str, Any]) -> dict[str, Any]:
        w = self._get()
        try:
            return w.request(req)
        except WorkerCrashed:
            with self._lock:
                self._all.remove(w)
            w.close()
            raise
        finally:
            if w in self._all:
                self._idle.put(w)

    def environment(self) -> dict[str, Any]:
        resp = self.request({"op": "env"})
        if "error" in resp:
            raise TritonMissing(resp["error"])
        return resp["env"]

    def run(self, requests: Iterable[dict[str, Any]],
            done: Callable[[int, dict[str, Any]], None]) -> None:
        """Run compile requests in parallel; ``done(index, result)`` is called as each finishes."""
        reqs = list(requests)
        with ThreadPoolExecutor(max_workers=self.jobs) as ex:
            futs = {ex.submit(self.request, {"op": "compile", **r}): i for i, r in enumerate(reqs)}
            try:
                for fut in as_completed(futs):
                    try:
                        res = fut.result()
                    except WorkerCrashed as exc:  # e.g. a segfault in LLVM: this config fails, the rest go on
                        res = {"error": str(exc)}
                    done(futs[fut], res)
            except KeyboardInterrupt:
                # stop now: nothing new starts, queued compiles are dropped, running workers are killed (their
                # threads then return at once), and the interrupt goes on to the command
                self._stopping = True
                for fut in futs:
                    fut.cancel()
                for w in list(self._all):
                    w.proc.kill()
                raise

    def close(self) -> None:
        for w in self._all:
            w.close()
        self._all.clear()
        if self._cache_tmp is not None:
            self._cache_tmp.cleanup()
        self._homes.cleanup()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if __name__ == "__main__":
    main()
