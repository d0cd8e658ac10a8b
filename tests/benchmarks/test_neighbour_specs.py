"""benchmarks/truth_specs_neighbours.py builds what the neighbourhood truth files were recorded from: each
kernel's centre config first, then configs one knob and one step away. The recorded files must match it."""
from __future__ import annotations

import importlib.util
import json
import math

from conftest import ROOT


def _specs(name: str) -> list[dict]:
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.SPECS


def _one_step(centre: dict, other: dict) -> bool:
    moved = [k for k in centre if centre[k] != other.get(k)]
    if len(moved) != 1 or set(other) != set(centre):
        return False
    k = moved[0]
    if k == "num_stages":
        return abs(other[k] - centre[k]) == 1
    return other[k] > 0 and abs(math.log2(other[k] / centre[k])) == 1.0


def test_every_neighbour_moves_one_knob_one_step() -> None:
    for name in ("truth_specs_neighbours", "truth_specs_neighbours_b"):
        specs = _specs(name)
        assert len(specs) >= 30, name            # the whole development suite, minus kernels with no centre
        for spec in specs:
            centre, *rest = spec["configs"]
            assert rest, (name, spec["kernel"])
            for cfg in rest:
                assert _one_step(centre, cfg), (name, spec["kernel"], centre, cfg)


def test_recorded_files_follow_the_specs() -> None:
    pairs = (("truth_specs_neighbours", "neighbours-triton-3.9.json"),
             ("truth_specs_neighbours_b", "neighbours-b-triton-3.9.json"))
    for name, truth in pairs:
        wanted = {(s["file"], s["kernel"], json.dumps(c, sort_keys=True), cap)
                  for s in _specs(name) for c in s["configs"] for cap in s["caps"]}
        records = json.loads((ROOT / "benchmarks/truth" / truth).read_text())["records"]
        got = {(r["file"], r["kernel"], json.dumps(r["config"], sort_keys=True), r["cap"]) for r in records}
        assert got == wanted, (truth, len(got ^ wanted))
        # the centre comes first in each (kernel, target) group: accuracy.py anchors on the first usable record
        first: dict[tuple[str, str, int], dict] = {}
        for r in records:
            first.setdefault((r["file"], r["kernel"], r["cap"]), r["config"])
        centres = {(s["file"], s["kernel"]): s["configs"][0] for s in _specs(name)}
        for (file, kernel, _cap), cfg in first.items():
            assert cfg == centres[(file, kernel)], (truth, kernel)
