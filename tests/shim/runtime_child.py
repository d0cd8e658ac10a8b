"""Run by test_shim_runtime.py in a Python with Triton (no torch needed): launches go through
`JITFunction.run` / `Autotuner.run` and compile for real (sm_90, bundled ptxas), against a fake driver whose
launcher only records what it would launch. Prints one `@@{json}` line: scenario → launches + shim log."""
from __future__ import annotations

import json
import sys

import triton
from triton.backends.compiler import GPUTarget
from triton.runtime.jit import MockTensor

import kernlint.shim as shim
import runtime_kernels as K

LAUNCHES: list[dict] = []


class _Float32:
    """What Triton's binder reads of a torch dtype: its name."""

    def __str__(self) -> str:
        return "torch.float32"


_F32 = _Float32()


class _Launcher:
    def __init__(self, src, metadata) -> None:
        self.src, self.md = src, metadata

    def __call__(self, gx, gy, gz, *rest) -> None:
        names = self.src.fn.arg_names
        consts = {}
        for key, value in dict(self.src.constants).items():   # 3.9: {(index,): v}; older: {index | name: v}
            k = key[0] if isinstance(key, tuple) and len(key) == 1 else key
            consts[names[k] if isinstance(k, int) else str(k)] = value
        LAUNCHES.append({"kernel": self.src.fn.__name__, "grid": [gx, gy, gz], "num_warps": self.md.num_warps,
                         "num_stages": self.md.num_stages, "shared": self.md.shared,
                         "constexprs": {k: v for k, v in consts.items() if isinstance(v, int)}})


class _Utils:
    def __init__(self, max_shared: int) -> None:
        self.max_shared = max_shared

    def get_device_properties(self, device):
        return {"max_shared_mem": self.max_shared, "multiprocessor_count": 132, "max_num_regs": 65536,
                "warpSize": 32, "sm_clock_rate": 1, "mem_clock_rate": 1, "mem_bus_width": 1}

    def load_binary(self, name, kernel, shared, device):
        return object(), object(), 32, 0, 1024          # module, function, n_regs, n_spills, max threads

    def unload_module(self, module) -> None:
        pass


class FakeDriver:
    """Stands in for `triton.runtime.driver.active`: a Hopper target, device 0, a recording launcher."""

    def __init__(self, max_shared: int) -> None:
        self.target = GPUTarget("cuda", 90, 32)
        self.utils = _Utils(max_shared)
        self.launcher_cls = _Launcher

    def get_current_target(self):
        return self.target

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_benchmarker(self):
        def no_bench(*a, **k):
            raise RuntimeError("the fake driver cannot benchmark")
        return no_bench


def _jit(k):
    while not hasattr(k, "device_caches") and hasattr(k, "fn"):   # Autotuner → Heuristics → JITFunction
        k = k.fn
    return k


def _with_driver(max_shared: int):
    from triton.runtime.driver import driver
    saved = dict(driver.__dict__)
    driver.set_active(FakeDriver(max_shared))
    for f in (K.add_kernel, K.row_sum_kernel, K.add_kernel_autotuned, K.scale_even_autotuned, K.scale_even,
              K.add_kernel_commented, K.local_add):
        getattr(_jit(f), "device_caches", {}).clear()       # binder caches remember the target
    return driver, saved


def _fake_bench(at) -> None:
    """The fake driver cannot time: each benchmarked config is launched (recorded) once, timings in order."""
    t = iter(range(1, 1000))
    at.__dict__["do_bench"] = lambda fn, quantiles: (fn(), [float(next(t))] * 3)[1]


def main() -> None:
    fresh, other, narrowed = sys.argv[1], sys.argv[2], sys.argv[3]
    n = 4096
    # Triton's own stand-in tensor (a data_ptr of 0): nothing is launched, so no torch is needed
    x, y, out, rows = (MockTensor(_F32) for _ in range(4))
    # max_shared 0: any config that needs shared memory raises Triton's own OutOfResources at load
    driver, saved = _with_driver(max_shared=0)
    result: dict = {"triton": triton.__version__}
    try:
        def scenario(name, fn, store=fresh, mode="replace") -> None:
            LAUNCHES.clear()
            with shim.install(store, target="h100", mode=mode) as s:
                fn()
                result[name] = {"launches": list(LAUNCHES), "log": [list(e) for e in s.log]}

        grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
        scenario("callable_grid", lambda: K.add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024, num_warps=4))
        scenario("fixed_grid", lambda: K.add_kernel[(4,)](x, y, out, n, BLOCK_SIZE=1024, num_warps=4))
        scenario("fixed_grid_same_blocks", lambda: K.add_kernel[(16,)](x, y, out, n, BLOCK_SIZE=256, num_warps=4))
        scenario("autotune", lambda: K.add_kernel_autotuned[grid](x, y, out, n))
        scenario("out_of_resources", lambda: K.row_sum_kernel[(8,)](rows, out, 64, BLOCK=64, num_warps=1))
        scenario("stale", lambda: K.add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024, num_warps=4), other)
        scenario("compile_error", lambda: K.add_kernel_autotuned[grid](x, y, out, n), other)
        scenario("narrowed", lambda: K.add_kernel_autotuned[grid](x, y, out, n), narrowed)
        # @triton.heuristics under the autotuner, and alone (n = 33 * 128: EVEN for 128, not for 256 or 512)
        m = 4224
        grid_b = lambda meta: (triton.cdiv(m, meta["BLOCK"]),)  # noqa: E731
        _fake_bench(K.scale_even_autotuned)
        scenario("heur_autotune_replace", lambda: K.scale_even_autotuned[grid_b](x, y, m))
        scenario("heur_autotune_seed", lambda: K.scale_even_autotuned[grid_b](x, y, m), mode="seed")
        scenario("heur_other_blocks", lambda: K.scale_even[grid_b](x, y, m, BLOCK=128))
        scenario("heur_same_blocks", lambda: K.scale_even[grid_b](x, y, m, BLOCK=512))
        scenario("trailing_comments", lambda: K.add_kernel_commented[grid](x, y, out, n, BLOCK_SIZE=1024))
        scenario("local_kernel", lambda: K.local_add[grid](x, y, out, n, BLOCK_SIZE=1024))
        # uninstall restores the autotuner: its own configs, and no tuning-cache entry of the shim's config
        at = K.add_kernel_autotuned
        author = [str(c) for c in at.configs]
        _fake_bench(at)
        scenario("leak", lambda: at[grid](x, y, out, n), mode="seed")
        LAUNCHES.clear()
        at[grid](x, y, out, n)
        result["leak"].update(author=author, after=[str(c) for c in at.configs], launch_after=list(LAUNCHES))
        LAUNCHES.clear()
        try:   # no shim: the recommended row_sum config really needs shared memory this device lacks
            K.row_sum_kernel[(8,)](rows, out, 64, BLOCK=64, num_warps=8)
            result["row_sum_w8_unshimmed"] = "launched"
        except Exception as exc:  # noqa: BLE001
            result["row_sum_w8_unshimmed"] = type(exc).__name__
    finally:
        driver.__dict__.clear()
        driver.__dict__.update(saved)
    print("@@" + json.dumps(result, default=str))


if __name__ == "__main__":
    main()
