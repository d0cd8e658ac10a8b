"""The committed corpus-scale truth (benchmarks/truth/corpus/*.json.gz, benchmarks/corpus_truth.py): its
structure, and docs/corpus-truth.md regenerated from it byte for byte. No compile, no download."""
from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path

import pytest

from benchmarks import corpus_truth as ct

ROOT = Path(__file__).resolve().parents[2]

DOCS = ct.load_all()
KERNEL_STATUS = {"derived", "scratch module", "scratch refused", "not analysed", "dtype unknown", "no config"}


def test_truth_is_committed_and_compact() -> None:
    files = sorted(ct.TRUTH_DIR.glob("*.json.gz"))
    assert files, "no corpus truth committed"
    assert sum(f.stat().st_size for f in files) < 5 * 2**20
    for f in files:
        data = f.read_bytes()
        assert data[4:8] == b"\0\0\0\0", f"{f.name}: gzip mtime is not fixed (the file would churn)"
        assert json.loads(gzip.decompress(data))["project"] == f.name.removesuffix(".json.gz")


@pytest.mark.parametrize("doc", DOCS, ids=[d["project"] for d in DOCS])
def test_structure(doc: dict) -> None:
    assert doc["schema"] == ct.SCHEMA and doc["project"] in ct.PROJECTS
    assert doc["caps"] == list(ct.CAPS) and doc["triton_version"]
    assert doc["launched"] >= len(doc["kernels"]) and doc["vendor_apart"] >= 0
    kernels = {(k["file"], k["kernel"]): k for k in doc["kernels"]}
    assert len(kernels) == len(doc["kernels"]), "a kernel recorded twice"
    keys = set()
    for k in doc["kernels"]:
        assert k["status"] in KERNEL_STATUS, k
        assert not k["file"].startswith(".corpus"), "files are named relative to the package root"
        assert (k["status"] == "derived") == (k["config_origin"] is not None) == (k["detail"] is None), k
        assert len(k["source_sha256"]) == 64
    for r in doc["records"]:
        k = kernels[(r["file"], r["kernel"])]
        assert k["status"] == "derived" and r["source_sha256"] == k["source_sha256"]
        assert r["cap"] in ct.CAPS and r["triton"] == doc["triton_version"]
        key = ct.record_key(r)
        assert key not in keys, "a compile recorded twice"
        keys.add(key)
        assert r["outcome"] in ("compiled", "failed")
        if r["outcome"] == "compiled":
            assert r["reason"] is None and isinstance(r["regs"], int) and 0 < r["regs"] <= 255
            assert r["shared"] >= 0 and r["spill_store"] >= 0 and r["spill_load"] >= 0
        else:
            assert r["reason"] in ct.REASONS and r["detail"], r
        if r["est"] is not None:
            assert set(r["est"]) == {"regs", "demand", "budget", "shared", "tmem", "data", "acc", "index", "serial",
                                     "complete"}
            assert 0 < r["est"]["budget"] <= 255
    for k in doc["kernels"]:   # a derived kernel has one record per target (or none yet: budget ran out)
        if k["status"] == "derived":
            n = sum((r["file"], r["kernel"]) == (k["file"], k["kernel"]) for r in doc["records"])
            assert n in (0, len(ct.CAPS)), k


def test_report_regenerates_identically() -> None:
    assert ct.DOC.read_text(encoding="utf-8") == ct.render(DOCS), \
        "docs/corpus-truth.md is stale: python benchmarks/corpus_truth.py --report"


def test_representative_sizes_at_the_launch_site() -> None:
    src = ("def launch(x, state_len, dim):\n"
           "    BLOCK_M = min(triton.next_power_of_2(state_len), 16)\n"
           "    BLOCK_N = min(triton.next_power_of_2(dim * 3), 256)\n"
           "    W = x.shape[-1]\n"
           "    k[grid](x, W, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=triton.next_power_of_2(W) // 3,\n"
           "            FLAG=x.is_contiguous, G=triton.cdiv(W, 5))\n")
    launches = ct.launch_expressions(src, "k", ["x_ptr", "N"])
    assert [sorted(a) for a, _ in launches] == [["BLOCK_K", "BLOCK_M", "BLOCK_N", "FLAG", "G", "N", "x_ptr"]]
    assert ct.representative("BLOCK_M", launches, block=True) == 16
    assert ct.representative("BLOCK_N", launches, block=True) == 256
    assert ct.representative("BLOCK_K", launches, block=True) is None      # 341: not a power of two
    assert ct.representative("BLOCK_K", launches, block=False) == 341
    assert ct.representative("G", launches, block=False) == 205
    assert ct.representative("N", launches, block=True) == ct.REPR_SIZE
    # a bare size bound to a non-block constexpr (a flag, eps, a problem size) is left to the stated defaults
    assert ct.representative("N", launches, block=False) is None
    assert ct.representative("FLAG", launches, block=False) is None
    assert ct.representative("MISSING", launches, block=False) is None
    with pytest.raises(ct._Unknown):
        ct.repr_value(ast.parse("'fp16'", mode="eval").body, {})
