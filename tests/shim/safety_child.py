"""Run by test_shim_safety.py in a Python with Triton: the shim's failure paths on Triton's real runtime path
(same fake driver as runtime_child.py). argv[1] is a folder of stores written by the test. Prints one `@@{json}`
line: scenario → launches, exceptions, the shim's `log` and every `kernlint.shim` logging record."""
from __future__ import annotations

import json
import logging
import sys
import threading
from pathlib import Path

import triton
from triton.runtime.jit import MockTensor

import kernlint.shim as shim
import runtime_child as RC
import runtime_kernels as K

RECORDS: list[list[str]] = []


class _Capture(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        RECORDS.append([record.levelname, str(args[0]) if args else "", record.getMessage()])


def _triton_untouched() -> bool:
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction
    return not any(hasattr(c.__dict__["run"], "__wrapped__") for c in (JITFunction, Autotuner))


AUTHOR_CONFIGS = K.add_kernel_autotuned.configs


def _clear_caches() -> None:
    for f in (K.add_kernel, K.row_sum_kernel, K.add_kernel_autotuned.fn):
        getattr(f, "device_caches", {}).clear()
    # uninstall() restores the autotuner's own configs: no scenario resets them (they used to leak)
    assert K.add_kernel_autotuned.configs is AUTHOR_CONFIGS, K.add_kernel_autotuned.configs


def main() -> None:
    stores = Path(sys.argv[1])
    n = 4096
    x, y, out, rows = (MockTensor(RC._F32) for _ in range(4))
    logger = logging.getLogger("kernlint.shim")
    logger.addHandler(_Capture())
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    driver, saved = RC._with_driver(max_shared=0)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    add = lambda: K.add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024, num_warps=4)  # noqa: E731
    auto = lambda: K.add_kernel_autotuned[grid](x, y, out, n)  # noqa: E731
    rowsum = lambda: K.row_sum_kernel[(8,)](rows, out, 64, BLOCK=64, num_warps=1)  # noqa: E731
    result: dict = {"triton": triton.__version__}

    def scenario(name: str, store: str, launch, repeat: int = 3, threads: int = 1) -> None:
        RC.LAUNCHES.clear()
        RECORDS.clear()
        _clear_caches()
        errors: list[str] = []
        s = shim.install(str(stores / store), target="h100")
        untouched = _triton_untouched()
        try:
            if threads == 1:
                for _ in range(repeat):
                    try:
                        launch()
                    except Exception as exc:  # noqa: BLE001
                        errors.append(f"{type(exc).__name__}: {exc}"[:300])
            else:
                old = sys.getswitchinterval()
                sys.setswitchinterval(1e-6)      # switch threads as often as possible: widen every race
                barrier = threading.Barrier(threads)

                def worker() -> None:
                    try:
                        barrier.wait()
                        launch()
                    except Exception as exc:  # noqa: BLE001
                        errors.append(f"{type(exc).__name__}: {exc}"[:300])
                ts = [threading.Thread(target=worker) for _ in range(threads)]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                sys.setswitchinterval(old)
        finally:
            s.uninstall()
        result[name] = {"launches": list(RC.LAUNCHES), "errors": errors, "log": [list(e) for e in s.log],
                        "records": list(RECORDS), "untouched_while_installed": untouched,
                        "restored": _triton_untouched()}

    try:
        for bad in ("not_json.json", "wrong_schema.json", "list.json", "bad_entry.json", "missing.json",
                    "entries_int.json", "estimate_str.json", "deep.json", "warps_bool.json",
                    "huge_int.json", "kwargs_list.json", "kwargs_object.json", "warps_huge.json", "kernel_int.json",
                    "bucket_list.json", "truncated.json", "huge_file.json", "fifo.json"):
            scenario("corrupt:" + bad, bad, add)
        scenario("stale", "stale.json", add)
        scenario("compile_fail_plain", "failing.json", add)
        scenario("compile_fail_autotune", "failing.json", auto)
        scenario("out_of_resources", "fresh.json", rowsum)
        scenario("threads_applied", "fresh.json", add, threads=2)
        scenario("threads_fallback", "failing.json", add, threads=2)
        scenario("threads_stale", "stale.json", add, threads=2)
        scenario("threads_autotune", "fresh.json", auto, threads=2)
    finally:
        driver.__dict__.clear()
        driver.__dict__.update(saved)
    print("@@" + json.dumps(result, default=str))


if __name__ == "__main__":
    main()
