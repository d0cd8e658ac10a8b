"""Compile workers: ``python -m kernlint.calibrate.worker`` speaks JSON lines on stdin/stdout.

A worker is a separate interpreter so that (a) LLVM/ptxas state and crashes stay out of the CLI process,
(b) ``-j N`` compiles in parallel (compiles are single-threaded), and (c) ``--python`` can point at another
environment's interpreter (another Triton version) that has only Triton and the standard library: the
worker imports nothing from kernlint but this module and ``triton_compile``.

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


def _handle(req: dict[str, Any]) -> dict[str, Any]:
    from kernlint.calibrate import triton_compile as tc
    if req.get("op") == "env":
        try:
            return {"env": tc.environment()}
        except ImportError as exc:
            return {"error": f"triton-missing: {exc}"}
    try:
        fn = tc.unwrap(_load_kernel(req["module"], req["kernel"]))
    except BaseException as exc:  # a broken scratch module is reported per config, like a compile error
        if isinstance(exc, KeyboardInterrupt):
            raise
        out = dict.fromkeys(tc.RESULT_FIELDS)
        out["error"] = tc.error_line(exc)
        return out
    return tc.compile_jit(fn, req["args"], req["constexprs"], req["config"], int(req["cap"]),
                          int(req.get("timeout") or 0))


def main() -> None:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # native prints (LLVM, ptxas) must not corrupt the protocol: fd 1 now goes to stderr
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # 3.9's current default; silences its warning
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
    def __init__(self, python: str, env: dict[str, str]) -> None:
        self._err = tempfile.TemporaryFile(mode="w+")
        # own session: a terminal's Ctrl-C reaches only kernlint, which stops the workers itself (sharing the
        # process group, each worker died of the SIGINT, was taken for a crash and replaced, and the sweep went on)
        self.proc = subprocess.Popen([python, "-m", "kernlint.calibrate.worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._err, text=True, env=env, bufsize=1,
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
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parent.parent.parent)  # the directory that holds `kernlint/`
        env["PYTHONPATH"] = os.pathsep.join([root, *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
        env["TRITON_CACHE_DIR"] = triton_cache_dir or self._cache_tmp.name  # type: ignore[union-attr]
        self.env = env
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
                        w = _Worker(self.python, self.env)
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

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if __name__ == "__main__":
    main()
