"""Registers of matmul-family (dot) kernels whose operands reach the dot through constructs the tile model
must see through. Expected numbers are ptxas register counts of Triton 3.9 compiles recorded in
benchmarks/truth/triton-3.9.json, or hand arithmetic written next to them."""
from __future__ import annotations

from conftest import ROOT

from kernlint.pipeline.api import Settings, lint_paths

BMM_ARGS = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32",
            "stride_ab": "i32", "stride_am": "i32", "stride_ak": "1", "stride_bb": "i32", "stride_bk": "i32",
            "stride_bn": "1", "stride_cb": "i32", "stride_cm": "i32", "stride_cn": "1"}


def _estimate(path: str, kernel: str, target: str, config: dict, args: dict):
    result = lint_paths([str(ROOT / path)], Settings(targets=(target,), cli_configs=(config,), arg_types=args))
    k = next(k for f in result.files for k in f.kernels if k.jit.name == kernel)
    return next(e for e in k.estimates if e.config.origin == "cli")


def test_operands_loaded_under_constexpr_if_are_pipelined_views() -> None:
    """examples/batched_matmul.py loads A and B under `if EVEN_K:` / `else:`. Triton resolves the constexpr
    branch and pipelines both loads into shared memory (sm_90 TTGIR: ttg.async_copy_global_to_local into
    4 buffers, warp_group_dot reads them), so the if-merged values are views of shared memory, not two
    register tiles. ptxas (benchmarks/truth/triton-3.9.json, h100): 64×64×64 w4 s4 → 64 registers,
    128×128×64 w8 s3 → 116, 64×128×64 w4 s3 → 118. Before the rule kernlint counted both 64×64 bf16 tiles
    (16 words per thread each, × 0.95) on top: 102 / 141 / 164."""
    for config, ptxas in (({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "num_warps": 4, "num_stages": 4}, 64),
                          ({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3}, 116),
                          ({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 3}, 118)):
        est = _estimate("examples/batched_matmul.py", "bmm_kernel", "h100", {**config, "EVEN_K": True}, BMM_ARGS)
        (dot,) = est.dots
        # estimates use the kernel lowered for the config (KernelIR.specialise): the constexpr `if` is resolved
        # before placement, so the dot reads the loads themselves rather than if-merged views of them
        assert len(dot.pipelined_operands) == 2 and not dot.register_pipelined
        assert abs(est.registers.allocated - ptxas) <= 0.2 * ptxas, (config, est.registers.allocated, ptxas)


def test_operands_loaded_in_the_else_branch_are_found() -> None:
    """With EVEN_K false only the masked loads of the else-branch are lowered: the dot's operands are still
    the pipelined loads (same shared memory as the then-branch: 4 × (64·64 + 64·64) × 2 B = 65,536 B on
    sm_90 with 4 stages, wgmma reads num_stages buffers). Measured (Triton 3.9, sm_90, EVEN_K=False):
    shared 65,536 B, 64 registers."""
    config = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "num_warps": 4, "num_stages": 4}
    taken = _estimate("examples/batched_matmul.py", "bmm_kernel", "h100", {**config, "EVEN_K": False}, BMM_ARGS)
    (dot,) = taken.dots
    assert len(dot.pipelined_operands) == 2
    assert taken.smem.total == 4 * (64 * 64 + 64 * 64) * 2
    assert abs(taken.registers.allocated - 64) <= 0.2 * 64, taken.registers.allocated


def _truth_pairs(kernel: str, file: str, target: str, configs: list[dict]) -> list:
    import json
    from benchmarks import accuracy
    records = json.loads((ROOT / "benchmarks/truth/triton-3.9.json").read_text())["records"]
    chosen = [r for r in records if r["kernel"] == kernel and r["file"] == file and r["config"] in configs]
    return [(r, e) for r, e in accuracy.estimate_records(chosen) if e.target.key == target]


def test_tmem_epilogue_holds_the_landed_fragment() -> None:
    """sm_100: the epilogue's tcgen05.ld lands the whole fragment (up to 128 words per thread) at once;
    nvdisasm --print-life-ranges of bmm 128×128×32 w4 s4 shows LDTM.x128 take the live registers from 37
    to 165 (ptxas 185). Hand arithmetic: 128 fp32 words + 16 store addresses × 2 (128×128 bf16 / 128
    threads / 8 per 16-byte vector) + base 8 = 168 (the earlier 0.75 share gave 136, −26 %)."""
    config = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 4, "num_stages": 4}
    ((record, est),) = _truth_pairs("bmm_kernel", "examples/batched_matmul.py", "b200", [config])
    assert record["regs"] == 185
    assert est.registers.allocated >= 128 + 2 * 16 + 8
    assert abs(est.registers.allocated - 185) <= 0.2 * 185


def test_loop_carrying_the_tmem_accumulator_reads_nothing() -> None:
    """The K loop's init of a TMEM accumulator (tl.zeros) is a tcgen05.st from the zero register (STTM.x128
    tmem, RZ), not a read into registers: matmul 128×128×128 w4 s5 peaks at the epilogue (LDTM: 16 → 143
    live, ptxas 156), not at the loop entry where the model used to add 0.75 × 128 words to the A and B
    pointer tiles (178)."""
    config = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128, "GROUP_M": 8, "num_warps": 4, "num_stages": 5}
    ((record, est),) = _truth_pairs("matmul_kernel", "examples/matmul.py", "b200", [config])
    assert record["regs"] == 156
    assert est.registers.peak_line >= 55  # the epilogue (`c = accumulator.to(tl.float16)` and after)
    assert abs(est.registers.allocated - 156) <= 0.2 * 156


def test_large_tmem_fragment_is_narrowed_piece_by_piece() -> None:
    """matmul 256×256 w8 on sm_100: 256 fp32 words per thread, read as four tcgen05.ld.32x32b.x64 and
    narrowed to f16x2 as they land; ptxas allocates 222-255 registers without spilling. Hand arithmetic for
    the read: 128 landed words + 128 × ½ narrowed = 192; the store's layout conversion then holds the 128
    narrowed words and ¾ of their converted copy, 224 (register_tmem.CONVERT_DESTINATION_SHARE): under the
    255 budget with the store addresses, so no spill is predicted; 256×256 w4 (512 words: 128 + 384 × ½ =
    320) does spill (1,324 B)."""
    w8 = {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 4}
    w4 = {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 3}
    by_warps = {r["config"]["num_warps"]: (r, e) for r, e in _truth_pairs("matmul_kernel", "examples/matmul.py",
                                                                            "b200", [w8, w4])}
    record, est = by_warps[8]
    assert record["spill_store"] == 0 and est.registers.demand <= est.registers.budget
    record, est = by_warps[4]
    assert record["spill_store"] > 0 and est.registers.demand > est.registers.budget



def test_fp32_store_of_a_tmem_accumulator_holds_the_converted_copy_too() -> None:
    """splitk_matmul_kernel with SPLIT_K=1 stores its fp32 accumulator unconverted: on sm_100 the TTGIR reads
    it from TMEM and converts its layout (#linear -> #blocked) for the store. ptxas
    (benchmarks/truth/suite-triton-3.9.json, b200): 64×64×32 w4 → 65 registers, 128×256×64 w8 → 234.
    Hand arithmetic: 32 / 128 fp32 words per thread (64·64/128, 128·256/256) landed + ¾ of them converted =
    56 / 224, plus addressing; the landed read alone (the model before) gave 40 / 136, −38 % / −42 %."""
    import json
    from benchmarks import accuracy
    records = json.loads((ROOT / "benchmarks/truth/suite-triton-3.9.json").read_text())["records"]
    chosen = [r for r in records if r["kernel"] == "splitk_matmul_kernel" and r["cap"] == 100
              and r["config"]["SPLIT_K"] == 1]
    pairs = accuracy.estimate_records(chosen)
    assert sorted(r["regs"] for r, _ in pairs) == [65, 234]
    for record, est in pairs:
        words = record["config"]["BLOCK_M"] * record["config"]["BLOCK_N"] // (32 * record["config"]["num_warps"])
        assert est.registers.allocated >= 1.75 * words
        assert abs(est.registers.allocated - record["regs"]) <= 0.1 * record["regs"], (record["config"], est.registers)


PM_ARGS = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_ak": "1", "stride_bk": "i32", "stride_bn": "1", "stride_cm": "i32",
           "stride_cn": "1"}


def test_clamped_offset_vectors_hold_one_register_per_element() -> None:
    """examples/persistent_matmul.py clamps its row/column offsets with tl.where and widens them to int64, then
    reads them in every K iteration. Triton 3.9 TTGIR (64×64×64 w4, all targets): offs_bn is
    tensor<64xi64, #ttg.slice<{dim = 0, parent = #blocked}>> with #blocked sizePerThread [1, 8], threadsPerWarp
    [4, 8], warpsPerCTA [4, 1]: 64 / 8 lanes = 8 columns per thread → 8 × 2 = 16 registers; offs_am is the
    dim-1 slice of A's tile of the same layout: 64 rows / (4 lanes × 4 warps) = 4 per thread → 8 registers."""
    import kernlint.analysis.estimate as estimate_module
    from kernlint.analysis.register_offsets import non_affine_offset_costs

    seen: dict = {}
    original = estimate_module.estimate_registers

    def spy(live, dots, env, spec, num_warps, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen["costs"] = non_affine_offset_costs(live, env, num_warps)
        seen["names"] = {v.id: v for v in live.values.values()}
        return original(live, dots, env, spec, num_warps, *args, **kwargs)

    estimate_module.estimate_registers = spy
    try:
        config = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "NUM_SMS": 132, "num_warps": 4, "num_stages": 3}
        _estimate("examples/persistent_matmul.py", "persistent_matmul_kernel", "b200", config, PM_ARGS)
    finally:
        estimate_module.estimate_registers = original
    by_dtype = sorted((seen["names"][vid].dtype, cost) for vid, cost in seen["costs"].items())
    assert by_dtype == [("i64", 8.0), ("i64", 16.0)], by_dtype


def test_element_loaded_b_is_not_pipelined() -> None:
    """The clamped B tile is loaded element by element (under 4 contiguous bytes per thread): Triton's
    AssignLatencies (isSmallLoad) leaves it out of the pipeline, so the TTGIR has one tt.load of B per
    iteration in the MMA's stage at num_stages 3 and 4 (no loads of B ahead of the loop), not num_stages − 1
    in flight. ptxas (benchmarks/truth/triton-3.9.json) 64×64×64 w4: b200 126 / 130, h100 162 / 162 at
    num_stages 3 / 4."""
    for target, truths in (("b200", {3: 126, 4: 130}), ("h100", {3: 162, 4: 162})):
        for stages, ptxas in truths.items():
            config = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "NUM_SMS": 132, "num_warps": 4,
                      "num_stages": stages}
            est = _estimate("examples/persistent_matmul.py", "persistent_matmul_kernel", target, config, PM_ARGS)
            (dot,) = est.dots
            assert len(dot.element_loaded) == 1
            assert abs(est.registers.allocated - ptxas) <= 0.2 * ptxas, (target, stages, est.registers.allocated)


GG_ARGS = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "B": "i32", "M": "i32", "N": "i32", "K": "i32"}


def test_tma_descriptors_are_one_scalar_address() -> None:
    """sm_90: tl.make_tensor_descriptor writes a 128-byte tensormap to global scratch and the kernel keeps its
    address (uniform registers: UTMALDG / UTMACCTL.IV [UR14] in the SASS). ptxas for suite
    bmm_descriptor_kernel (benchmarks/truth/suite-triton-3.9.json, h100): 128×128×64 w8 s3 → 90 and
    64×64×64 w4 s4 → 58; the model charged 8 registers per descriptor (108 and 70, +20 %)."""
    for config, ptxas in (({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3}, 90),
                          ({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "num_warps": 4, "num_stages": 4}, 58)):
        est = _estimate("tests/truth/suite_kernels/grouped_gemm.py", "bmm_descriptor_kernel", "h100", config, GG_ARGS)
        descriptors = [t for t in est.registers.peak_tiles if t.dtype.startswith("desc<")]
        assert descriptors and all(t.registers == 2.0 for t in descriptors)
        assert abs(est.registers.allocated - ptxas) <= 0.2 * ptxas, (config, est.registers.allocated)
