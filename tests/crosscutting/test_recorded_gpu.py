"""The GPU recordings agree with themselves and with the engine: every launch of the
six-section exports (tests/fixtures/ncu/sections) is read and is the launch its program
logged; the advice outcome table (benchmarks/recorded/advice-outcomes-*.json) timed the
builds that Nsight Compute profiled, its register caps were obeyed, and the driver
launched exactly the variants the engine calls launchable."""

import gzip
import io
import json
import math

import pytest

from tuneadvise.advisor.engine.occupancy import occupancy
from tuneadvise.advisor.launch import LaunchConfig
from tuneadvise.advisor.readers.ncu import read_lines
from tuneadvise.specs.resolve import resolve_arch

from ..helpers import ROOT, TESTS

NCU = TESTS / "fixtures" / "ncu"
SECTIONS = NCU / "sections"
OUTCOMES = sorted((ROOT / "benchmarks" / "recorded").glob("advice-outcomes-*.json"))
LOGGED = ("ncu_clusters", "ncu_smem_config", "ncu_sweep", "ncu_tails", "ncu_smem", "ncu_imbalance", "ncu_templates")
EVERY = LOGGED + ("ncu_cupy", "ncu_torch", "ncu_torch_nn", "ncu_triton", "ncu_torch_model")


def _launches(path):
    with gzip.open(path, "rt", encoding="utf-8", newline="") as handle:
        text = handle.read()
    result = read_lines(io.StringIO(text), path.name)
    assert not result.problems, result.problems[:3]
    return text, result.launches


def _log(name):
    rows = []
    for line in (SECTIONS / f"{name}.log").read_text().splitlines():
        _program, kernel, *fields = line.split()
        rows.append({"kernel": kernel, **{k: int(v) for k, v in (f.split("=") for f in fields)}})
    return rows


@pytest.mark.parametrize("name", EVERY)
def test_every_launch_of_a_section_export_is_read_with_the_new_sections(name):
    text, launches = _launches(SECTIONS / f"{name}.csv.gz")
    assert len(launches) == text.count('"Achieved Occupancy"') > 0
    for section in ("GPU Speed Of Light Throughput", "Warp State Statistics", "Scheduler Statistics",
                    "Memory Workload Analysis"):  # as the export names them
        assert name == "ncu_smem_config" or f'"{section}"' in text


@pytest.mark.parametrize("name", LOGGED)
def test_each_launch_is_the_one_its_program_logged(name):
    _, launches = _launches(SECTIONS / f"{name}.csv.gz")
    log = _log(name)
    assert len(launches) == len(log)
    for launch, logged in zip(launches, log):
        # the log names a template instance by its own word (config<4>: config_live4)
        assert logged["kernel"].startswith(launch.kernel.split("(")[0].split("<")[0].removeprefix("void "))
        assert math.prod(launch.block) == logged["block"]
        assert math.prod(launch.grid) == logged["grid"]
        assert launch.metrics["dynamic_shared_mem"] == logged["dynamic"]
        assert max(launch.metrics["cluster_size"], 1) == logged["cluster"]


def _rows():
    for path in OUTCOMES:
        doc = json.loads(path.read_text())
        yield from ((doc, row) for row in doc["kernels"])


def test_the_outcome_table_is_recorded():
    rows = [row for _, row in _rows()]
    assert rows, "no benchmarks/recorded/advice-outcomes-*.json"
    timed = [v for row in rows for v in row["variants"] if "median_us" in v]
    assert len(timed) >= 25
    assert len({r["kernel"] for r in rows if r["origin"]["suite"] == "PolyBench-ACC"}) >= 10
    for row in rows:
        assert len(row["baseline"]["median_us"]) == 2  # timed at the start and at the end


def test_register_caps_were_obeyed_by_the_build_that_was_timed():
    caps = [(row, v) for _, row in _rows() for v in row["variants"] if v["change"]["kind"] == "register_cap"]
    assert caps
    for row, variant in caps:
        assert variant["ptxas"]["registers"] <= variant["change"]["value"] < row["baseline"]["ptxas"]["registers"]


def test_the_driver_launched_exactly_what_the_engine_calls_launchable():
    for doc, row in _rows():
        arch = resolve_arch("sm_" + doc["device"]["cc"].replace(".", ""))
        for variant in row["variants"]:
            ptxas, block = variant["ptxas"], math.prod(variant["launch"]["block"])
            result = occupancy(arch, LaunchConfig(registers=ptxas["registers"], block_size=block,
                                                  static_shared_mem=ptxas["smem"]))
            assert result.launchable == ("median_us" in variant), (row["kernel"], variant["change"])


def test_nsight_compute_profiled_the_builds_that_were_timed():
    profiled = {}
    for path in sorted((NCU / "advice").glob("*.csv.gz")):
        for launch in _launches(path)[1]:
            profiled[launch.kernel.split("(")[0].removeprefix("void ")] = launch
    for _, row in _rows():
        launch = profiled[row["kernel"]]
        # ncu reports at least 16 registers a thread (recorded: ptxas 12 and 14, ncu 16)
        assert launch.metrics["registers"] == max(16, row["baseline"]["ptxas"]["registers"]), row["kernel"]
        assert launch.metrics["static_shared_mem"] == row["baseline"]["ptxas"]["smem"], row["kernel"]
        assert list(launch.block[:len(row["baseline"]["launch"]["block"])]) == row["baseline"]["launch"]["block"]
