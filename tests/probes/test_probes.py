"""Probe logic on device output recorded from a real H100 run
(tests/fixtures/h100/probe*.json, verify.json, native.toml, recorded by
tests/gpu/record_probe_run.sh): peaks, efficiency, flags, rendering, the saved
spec, residency counting, and the no-GPU exit. No GPU needed.

The recorded files hold only what the GPU and the driver said (samples, clock,
device attributes, the driver's occupancy answers, the blocks measured
resident) and the inputs they were asked with; every answer of the tool is
recomputed here by today's code, and `test_*_detects_an_engine_off_by_one`
shows the comparisons fail when the engine is wrong by one block."""

import functools
import gzip
import json
import math
import statistics
import sys

import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tuneadvise.cli.main import cli
from tuneadvise.probes.residency import max_resident_per_sm
from tuneadvise.probes.results import Measurement, device_document, measurements_from_document, recompute_document
from tuneadvise.specs.catalog import shipped_catalog

from ..helpers import ROOT, TESTS, assert_one_line_error

FIXTURES = TESTS / "fixtures"
H100 = FIXTURES / "h100"
LINT = FIXTURES / "lint"


def recorded(name="probe.json"):
    return json.loads((H100 / name).read_text())


def computed(name="probe.json"):
    """The probe document today's code makes from the recorded raw output."""
    return recompute_document(recorded(name), shipped_catalog())


def engine_one_block_fewer(monkeypatch):
    """Make the engine answer one block per SM fewer than it should (never below 0), for
    every caller: `occupancy` builds its result through the module's `occupancy_from`."""
    from tuneadvise.advisor.engine import occupancy as engine

    right = engine.occupancy_from

    def wrong(*args, **kwargs):
        result = right(*args, **kwargs)
        return result._replace(active_blocks_per_sm=max(result.active_blocks_per_sm - 1, 0))

    monkeypatch.setattr(engine, "occupancy_from", wrong)


def test_fixtures_store_no_answer_of_the_tool():
    """What the tool computes (peaks, efficiencies, flags, the engine's predictions, verdicts)
    must not be read back from a fixture: it would be compared with itself."""
    for name in ("probe.json", "probe_quick.json"):
        doc = recorded(name)
        assert not {"product", "failed", "above_peak"} & doc.keys()
        for r in doc["results"]:
            assert not {"value", "best", "spread", "peak", "peak_basis", "efficiency", "above_peak"} & r.keys(), r["name"]
            for c in r["details"].get("configs", ()):
                assert not {"engine", "match"} & c.keys()
    assert all(k.keys() == {"name", "attributes"} for k in recorded("verify.json")["kernels"])


def test_device_matches_h100_sxm_product():
    assert computed()["product"] == "h100-sxm"


def test_peaks_and_efficiency_computed_from_samples():
    doc = computed()
    by_name = {r["name"]: r for r in doc["results"]}
    fp32 = by_name["fp32_fma"]
    assert fp32["peak"] == pytest.approx(67.0 * fp32["details"]["sm_clock_mhz"] / 1980)
    assert fp32["efficiency"] >= 0.90  # the target, met on the recorded run
    shared = by_name["shared_read"]
    assert shared["peak"] == pytest.approx(132 * 32 * 4 * doc["sm_clock_mhz"] / 1e3)
    assert shared["efficiency"] >= 0.85
    assert by_name["dram_triad"]["peak"] == 3350.0
    assert by_name["dram_triad"]["efficiency"] == pytest.approx(by_name["dram_triad"]["value"] / 3350.0)
    assert not doc["above_peak"] and not doc["failed"]


def residency_mismatches(name):
    """Recorded residency configurations where today's engine disagrees with the GPU."""
    occupancy = next(r for r in computed(name)["results"] if r["name"] == "occupancy_empirical")
    return [c for c in occupancy["details"]["configs"] if not c["match"]], occupancy


@pytest.mark.parametrize("name", ["probe.json", "probe_quick.json"])
def test_engine_equals_measured_residency_and_the_driver(name):
    mismatches, occupancy = residency_mismatches(name)
    configs = occupancy["details"]["configs"]
    assert not mismatches
    assert occupancy["value"] == occupancy["details"]["total"] == len(configs) == (75 if name == "probe.json" else 8)
    launched = [c for c in configs if c["measured"] is not None]
    assert all(c["measured"] == c["engine"] == c["driver"] for c in launched)
    assert all(c["sms_seen"] == 132 and c["measured_min"] == c["measured"] for c in launched)
    if name == "probe.json":
        refused = [c for c in configs if c["measured"] is None]
        assert len(launched) == 67 and len({c["measured"] for c in launched}) > 4
        # 127 registers x 768 or 1024 threads exceed the register file: not launched, and both say 0.
        assert all(c["engine"] == c["driver"] == 0 and c["registers"] * c["block_size"] > 65536 for c in refused)
        assert len({c["registers"] for c in configs}) == 3


@pytest.mark.parametrize("name", ["probe.json", "probe_quick.json"])
def test_residency_detects_an_engine_off_by_one(monkeypatch, name):
    engine_one_block_fewer(monkeypatch)
    mismatches, occupancy = residency_mismatches(name)
    # Every configuration that launched now disagrees with what the GPU held resident (the refused
    # ones stay at 0, which is the driver's answer too).
    launched = [c for c in occupancy["details"]["configs"] if c["measured"] is not None]
    assert launched and mismatches == launched
    assert occupancy["value"] < occupancy["details"]["total"]


def test_above_peak_is_flagged_not_reported_as_fact():
    m = Measurement("dram_copy", "memory", "GB/s", samples=[3500.0], peak=3350.0)
    assert m.above_peak
    assert not Measurement("dram_copy", "memory", "GB/s", samples=[3400.0], peak=3350.0).above_peak  # within 3 %
    assert Measurement("latency_l2", "latency", "cycles", samples=[300.0, 290.0]).efficiency is None


def test_document_round_trip_and_schema():
    doc = computed()
    again = device_document(doc["device"], shipped_catalog().products["h100-sxm"], doc["sm_clock_mhz"],
                     measurements_from_document(doc), doc["quick"])
    assert again["schema_version"] == 1
    assert again["results"] == doc["results"]


def test_table_rendering_names_every_probe():
    from rich.console import Console

    from tuneadvise.cli.probe_render import render_probe

    console = Console(record=True, width=200, no_color=True)
    render_probe(console, computed(), shipped_catalog().products["h100-sxm"])
    text = console.export_text()
    for name in ("fp32_fma", "dram_triad", "shared_read", "latency_dram", "launch_sync", "occupancy_empirical"):
        assert name in text
    assert "75/75" in text


def test_failed_probe_is_reported_beside_the_others():
    from rich.console import Console

    from tuneadvise.cli.probe_render import render_probe

    doc = computed()
    doc["results"].append(Measurement("l2", "failed", "", error="OutOfMemoryError: out of memory").as_dict())
    console = Console(record=True, width=200, no_color=True)
    render_probe(console, doc, None)
    text = console.export_text()
    assert "OutOfMemoryError" in text and "fp32_fma" in text and "No shipped product spec" in text


# -- verify: the driver's attributes and answers for lint_sm_90.cubin ------------------
#
# verify.json holds the attributes the driver reported for each kernel of
# lint_sm_90.cubin; lint_driver.json holds the driver's occupancy answers for
# the same cubin (recorded as lint_kernels_sm_90.cubin) over a sweep of block
# sizes and dynamic shared memory at the default carveout.

def lint_driver_sweeps():
    doc = json.loads((LINT / "lint_driver.json").read_text())
    return {row["name"]: row["sweep"] for row in doc["kernels"] if row["cubin"] == "lint_kernels_sm_90.cubin"}


def replayed_verify(monkeypatch):
    """`verify_module` on lint_sm_90.cubin with CuPy and the driver replaced by what the
    driver reported: its attributes (verify.json) and occupancy answers (lint_driver.json)."""
    from tuneadvise.probes import driver, verify

    attributes = {k["name"]: k["attributes"] for k in recorded("verify.json")["kernels"]}
    sweeps = lint_driver_sweeps()
    answers = {(name, block, dynamic): blocks for name, sweep in sweeps.items() for block, dynamic, blocks in sweep}

    class Module:
        def __init__(self, path):
            self.path = path

        def get_function(self, name):
            return name

    class CuPy:
        RawModule = Module

    monkeypatch.setattr(driver, "kernel_attributes", lambda name: attributes[name])
    monkeypatch.setattr(driver, "set_launch_attributes", lambda *args: None)
    monkeypatch.setattr(driver, "active_blocks", lambda cupy, name, block, dynamic: answers[(name, block, dynamic)])
    # The recorded sweep: the default carveout, and dynamic sizes whose total stays within the
    # default 48 KB per block, where verify's opt-in changes no answer.
    monkeypatch.setattr(verify, "CARVEOUTS", (-1,))
    monkeypatch.setattr(verify, "DYNAMIC_BYTES", (0, 1000, 4096, 12288, 40000))
    cubin = LINT / "lint_sm_90.cubin"
    arch = shipped_catalog().archs["9.0"]
    return verify.verify_module(CuPy(), cubin, arch, verify.entry_points(cubin))


def test_verify_reads_what_the_driver_reports():
    from tuneadvise.advisor.readers.cubin import read_cubin

    attributes = {k["name"]: k["attributes"] for k in recorded("verify.json")["kernels"]}
    read = {k.name: k for k in read_cubin((LINT / "lint_sm_90.cubin").read_bytes())}
    assert len(attributes) == 7 and attributes.keys() <= read.keys()
    for name, attrs in attributes.items():
        assert (read[name].registers, read[name].shared_mem, read[name].frame_bytes) == \
            (attrs["registers"], attrs["static_shared_mem"], attrs["local_bytes"]), name


def test_verify_finds_no_disagreement_with_the_driver(monkeypatch):
    verdicts = replayed_verify(monkeypatch)
    assert len(verdicts) == 7 and sum(v.checked for v in verdicts) > 700
    assert [(v.name, v.disagreements[:3]) for v in verdicts if v.disagreements] == []


def test_verify_detects_an_engine_off_by_one(monkeypatch):
    engine_one_block_fewer(monkeypatch)
    verdicts = replayed_verify(monkeypatch)
    assert all(v.disagreements for v in verdicts)


# -- the saved native spec ----------------------------------------------------------

@functools.cache
def driver_kernels():
    with gzip.open(H100 / "driver_occupancy.json.gz", "rt") as handle:
        return json.load(handle)["kernels"]


def driver_answer(registers, static_shared_mem, block, dynamic):
    """The driver's recorded answer (driver_occupancy.json.gz) at the default carveout without opt-in."""
    for kernel in driver_kernels():
        attrs = kernel["attributes"]
        if (attrs["num_regs"], attrs["shared_size_bytes"], attrs["ptxas_barriers"]) == (registers, static_shared_mem, 1):
            return next(r[5] for r in kernel["rows"] if r[:4] == [0, -1, block, dynamic])
    raise LookupError((registers, static_shared_mem))


def native_occupancy(spec_file, *args):
    result = CliRunner().invoke(cli, ["occupancy", "--spec-file", str(spec_file), "--arch", "native", *args,
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def native_spec(tmp_path):
    """The spec `probe --save` writes, made by today's code from the recorded device."""
    from tuneadvise.probes.native import saved_spec, to_toml

    path = tmp_path / "native.toml"
    path.write_text(to_toml(saved_spec(computed(), shipped_catalog())))
    return path


@pytest.mark.parametrize("which", ["saved earlier", "made today"])
def test_native_spec_gives_the_drivers_answers(tmp_path, which):
    """native.toml, written by `probe --save` on the H100, still loads; it and the spec made
    today give the driver's answers."""
    path = H100 / "native.toml" if which == "saved earlier" else native_spec(tmp_path)
    for registers, static, block, dynamic in ((64, 12288, 256, 0), (64, 0, 256, 0), (64, 40960, 256, 0), (24, 0, 1024, 0)):
        doc = native_occupancy(path, "-r", str(registers), "-b", str(block), "--shared-mem", str(static),
                               "--dynamic-shared-mem", str(dynamic))
        assert (doc["compute_capability"], doc["product"]) == ("9.0", "native")
        assert doc["active_blocks_per_sm"] == driver_answer(registers, static, block, dynamic), (registers, static, block)


def test_native_spec_detects_an_engine_off_by_one(tmp_path, monkeypatch):
    engine_one_block_fewer(monkeypatch)
    doc = native_occupancy(native_spec(tmp_path), "-r", "64", "-b", "256", "--shared-mem", "12288")
    assert doc["active_blocks_per_sm"] != driver_answer(64, 12288, 256, 0)


def test_native_document_validates(tmp_path):
    from tuneadvise.specs.models import validate_family_document

    validated = validate_family_document(native_spec(tmp_path))
    assert validated["product"][0]["memory_bandwidth_gbs"]["source"].startswith("measured#")


@pytest.mark.parametrize("command", [["probe"], ["probe", "--quick", "--format", "json"],
                                     ["verify", __file__], ["occupancy", "--arch", "native", "-r", "32", "-b", "64"]])
@pytest.mark.parametrize("driver, expected", [
    ((13, 0), ("needs CuPy", "pip install 'tuneadvise[gpu-cuda13]'", "'.[gpu-cuda13]'", "cupy-cuda13x")),
    ((12, 8), ("needs CuPy", "pip install 'tuneadvise[gpu]'", "cupy-cuda12x", "CUDA 12.8")),
    ((11, 4), ("CUDA 11.4", "update the NVIDIA driver")),
    (None, ("no NVIDIA driver",)),
])
def test_without_cupy_one_sentence_and_exit_3(monkeypatch, command, driver, expected):
    """The driver is looked for first: CuPy is suggested only where a driver can run it, the
    build that matches the CUDA the driver runs."""
    from tuneadvise.probes import gpu

    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy -> ImportError
    monkeypatch.setattr(gpu, "driver_cuda_version", lambda: driver)
    result = CliRunner().invoke(cli, command)
    assert_one_line_error(result, *expected, exit_code=3)
    assert (driver is not None and driver >= (12, 0)) == ("pip install" in result.stderr)


def test_each_suggested_cupy_extra_is_declared():
    from tuneadvise.probes.gpu import CUPY_EXTRAS
    from tuneadvise.specs.files import read_toml

    extras = read_toml(ROOT / "pyproject.toml")["project"]["optional-dependencies"]
    for extra, wheel in CUPY_EXTRAS.values():
        assert [d.split(">")[0] for d in extras[extra]] == [wheel]


def test_unknown_probe_name_is_bad_input():
    result = CliRunner().invoke(cli, ["probe", "--only", "dram,warp"])
    assert result.exit_code == 2 and "--only: unknown probe 'warp'" in result.output


# -- residency counting ----------------------------------------------------------

def brute_force(records):
    """Most intervals containing a common instant, per SM, by checking every start."""
    result = {}
    for sm in {r[0] for r in records}:
        mine = [r for r in records if r[0] == sm]
        result[sm] = max(sum(1 for _, s, e in mine if s <= t < e) for _, t, _ in mine)
    return result


intervals = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1000), st.integers(1, 500)), min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(intervals)
def test_sweep_equals_brute_force(raw):
    records = [(sm, start, start + length) for sm, start, length in raw]
    assert max_resident_per_sm(records) == brute_force(records)


def test_margin_ignores_touching_waves():
    wave = [(0, 0, 200_000)] * 4
    next_wave = [(0, 200_000 - 50, 400_000)] * 4  # the timer makes the next wave seem to start 50 ns early
    assert max_resident_per_sm(wave + next_wave) == {0: 8}
    assert max_resident_per_sm(wave + next_wave, margin_ns=20_000) == {0: 4}


def test_entry_points_read_barriers_from_cubin_and_names_from_ptx(tmp_path):
    from tuneadvise.probes.verify import entry_points

    lint = TESTS / "fixtures" / "lint"
    kernels = entry_points(lint / "lint_sm_90.cubin")
    assert kernels["producer_consumer"] == 4 and kernels["_Z12tiled_matmulPKfS0_Pfi"] == 1
    assert kernels["_Z5heavyPKdPdi"] == 1  # 0 barriers: the one the occupancy API assumes
    assert entry_points(lint / "barriers_sm_90.cubin") == {"pressure": 5}
    ptx = tmp_path / "k.ptx"
    ptx.write_text(".visible .entry saxpy(\n.param .u64 a\n)\n{ ret; }\n.visible .entry _Z3fooi(\n)")
    assert entry_points(ptx) == {"saxpy": 1, "_Z3fooi": 1}


def test_save_leaves_no_partial_file(tmp_path):
    from tuneadvise.cli.fileio import write_atomically

    write_atomically(tmp_path / "spec.toml", b"family = 'x'\n")
    assert [p.name for p in tmp_path.iterdir()] == ["spec.toml"]
    with pytest.raises(OSError):
        write_atomically(tmp_path / "missing" / "spec.toml", b"x")
    assert [p.name for p in tmp_path.iterdir()] == ["spec.toml"]


def test_quick_run_figures_that_disagree_are_flagged_unstable_not_reported():
    """The recorded --quick run (old sizing) had L2 reads spread 29% over five repeats: the
    document must not print a value for it, in JSON or in the table."""
    from rich.console import Console

    from tuneadvise.cli.probe_render import render_probe

    doc = computed("probe_quick.json")
    by_name = {r["name"]: r for r in doc["results"]}
    l2 = by_name["l2_read"]
    assert l2["unstable"] and l2["value"] is None and l2["best"] is None and l2["efficiency"] is None
    assert l2["stability_spread"] > 0.10 and "l2_read" in doc["unstable"]
    assert not by_name["fp32_fma"]["unstable"] and by_name["fp32_fma"]["value"] is not None
    assert set(doc["unstable"]) == {r["name"] for r in doc["results"] if r["unstable"]}
    console = Console(record=True, width=250, no_color=True)
    render_probe(console, doc, shipped_catalog().products["h100-sxm"])
    row = next(line for line in console.export_text().splitlines() if "l2_read" in line)
    assert "unstable" in row and f"{statistics.median(l2['samples']):,.0f}" not in row


def test_stability_ignores_one_stray_repeat_in_many_but_not_in_few():
    steady = [10.0] * 19 + [30.0]  # one host hiccup in twenty
    assert not Measurement("launch_sync", "launch", "us", samples=steady, higher_is_better=False).unstable
    assert Measurement("dram_copy", "memory", "GB/s", samples=[3000.0, 2000.0, 3000.0]).unstable
    assert not Measurement("dram_copy", "memory", "GB/s", samples=[3000.0, 2950.0, 3010.0]).unstable


def test_differs_most_names_the_device_farthest_from_its_siblings():
    from tuneadvise.probes.results import differs_most

    base = computed()
    slow = json.loads(json.dumps(base))
    for r in slow["results"]:
        if r["name"] == "dram_triad":
            r["value"] *= 0.8
    third = json.loads(json.dumps(base))
    for i, doc in enumerate((base, slow, third)):
        doc["device"] = {**doc["device"], "index": i}
    rows = {row["name"]: row for row in differs_most([base, slow, third])}
    assert rows["dram_triad"]["device"] == 1 and rows["dram_triad"]["difference"] == pytest.approx(-0.2)
    assert rows["fp32_fma"]["difference"] == 0.0
    assert "launch_sync" not in rows  # unstable in the recorded run: no figure to compare


@pytest.mark.parametrize("device", ["0,x", "1", "0,,0", "-1", "\u00b2", "0,\u0663"])
def test_device_list_rejects_what_is_not_an_index_below_the_count(device):
    from tuneadvise.advisor.queries.probe import device_indices
    from tuneadvise.specs.errors import InputError

    with pytest.raises(InputError) as refused:
        device_indices(device, 1)
    assert refused.value.as_option().startswith("--device: ")
    assert device_indices("0,0", 1) == [0, 0] and device_indices("all", 2) == [0, 1]


class FakeCupy:
    """What the probe command asks of CuPy before it measures: how many devices there are."""

    def __init__(self, count: int):
        self.cuda = type("cuda", (), {"runtime": type("runtime", (), {"getDeviceCount": staticmethod(lambda: count)})})


def recorded_devices(monkeypatch, failed_on=()):
    """measure_device answering each index with the recorded H100 run (tests/fixtures/h100/probe.json)
    as measured there, its results recomputed by today's code; a probe named failed on the devices
    in `failed_on`. Returns the calls it was asked, in order."""
    from tuneadvise.probes import suite

    calls = []

    def measure(cupy, index, names, quick=False, tiny=False, run=None):
        calls.append((index, tuple(names), quick, tiny))
        doc = computed()
        doc["device"] = {**doc["device"], "index": index}
        if index in failed_on:
            doc["failed"] = ["dram"]
        return doc, shipped_catalog().products["h100-sxm"]

    monkeypatch.setattr(suite, "measure_device", measure)
    return calls


def test_probe_query_measures_each_device_in_turn_and_saves_the_first(monkeypatch, tmp_path):
    from tuneadvise.advisor.queries.probe import probe_query
    from tuneadvise.probes.suite import PROBES
    from tuneadvise.specs.models import load_user_spec

    calls = recorded_devices(monkeypatch, failed_on=(2,))
    shown = []
    answer = probe_query(FakeCupy(3), ["dram", "l2"], "2,0", quick=True, save=True,
                         measured=lambda doc, product: shown.append((doc["device"]["index"], product.name)))
    assert calls == [(2, ("dram", "l2"), True, False), (0, ("dram", "l2"), True, False)]
    assert shown == [(2, "h100-sxm"), (0, "h100-sxm")]
    assert [d["device"]["index"] for d in answer.document["devices"]] == [2, 0]
    assert answer.document["differs_most"] and answer.failed
    saved = tmp_path / "native.toml"
    saved.write_text(answer.saved)
    native = load_user_spec(str(saved))[0].products["native"]  # what the driver reported on the recorded H100
    recorded = computed()["device"]
    assert (native.get("sm_count"), native.cc) == (recorded["attributes"]["sm_count"], recorded["compute_capability"])
    one = probe_query(FakeCupy(1), None, "all")
    assert calls[-1] == (0, tuple(PROBES), False, False)
    assert one.document["device"]["index"] == 0 and one.saved is None and not one.failed


def test_probe_command_renders_and_saves_the_query_answer(monkeypatch, tmp_path):
    from tuneadvise.probes import gpu
    from tuneadvise.specs.models import load_user_spec

    recorded_devices(monkeypatch, failed_on=(1,))
    monkeypatch.setattr(gpu, "load_cupy", lambda what: FakeCupy(2))
    saved = tmp_path / "native.toml"
    result = CliRunner().invoke(cli, ["probe", "--device", "0,1", "--only", "l2,dram", "--format", "json",
                                      "--save", str(saved)])
    assert result.exit_code == 1, result.output  # a probe failed on device 1
    doc = json.loads(result.stdout)
    assert [d["device"]["index"] for d in doc["devices"]] == [0, 1] and doc["differs_most"]
    catalog, _ = load_user_spec(str(saved))
    assert "native" in catalog.products
    text = CliRunner().invoke(cli, ["probe", "--device", "all"], env={"COLUMNS": "100"})
    assert text.exit_code == 1 and text.stdout.count("fp32_fma ") == 2, text.output
    assert "Across devices, the one that differs most" in text.stdout
    assert_one_line_error(CliRunner().invoke(cli, ["probe", "--device", "2"]),
                          "--device: '2' is not a device index below 2")
    assert_one_line_error(CliRunner().invoke(cli, ["probe", "--only", "l2,x\ny"]), "--only: unknown probe 'x\\ny'")


def saved_with_measured_extras(tmp_path):
    """The spec `probe --save` writes from a recorded run holding the curve, the DRAM latency
    and the cluster probe (tests/fixtures/h100/probe_memory.json)."""
    from tuneadvise.probes.native import saved_spec, to_toml

    doc = recompute_document(recorded("probe_memory.json"), shipped_catalog())
    path = tmp_path / "native.toml"
    path.write_text(to_toml(saved_spec(doc, shipped_catalog())))
    return path, doc


def test_save_keeps_the_curve_the_latency_and_the_gpc_layout(tmp_path):
    from tuneadvise.specs.models import load_user_spec

    path, doc = saved_with_measured_extras(tmp_path)
    _, added = load_user_spec(str(path))
    catalog, _ = load_user_spec(str(path))
    product = catalog.products["native"]
    curve = next(r for r in doc["results"] if r["name"] == "dram_read_vs_occupancy")["details"]["curve"]
    assert len(product.get("read_bandwidth_curve")) == len([p for p in curve if p["ilp"] != "once"]) == 24
    assert sum(product.get("gpc_sms")) == 132 and product.sources["gpc_sms"].startswith("measured#")
    assert 300 < product.get("dram_latency_ns") < 400


def test_bytes_in_flight_reads_the_measured_curve_then_falls_back_to_the_model(tmp_path):
    path, doc = saved_with_measured_extras(tmp_path)
    curve = next(r for r in doc["results"] if r["name"] == "dram_read_vs_occupancy")["details"]["curve"]
    # 256 threads x 64 registers: 4 blocks, 32 warps per SM; 8 bytes per thread = the ILP 1 line.
    result = CliRunner().invoke(cli, ["occupancy", "--spec-file", str(path), "--arch", "native", "-r", "64", "-b", "256",
                                      "--bytes-in-flight", "8", "--format", "json"])
    memory = json.loads(result.output)["memory_parallelism"]
    point = next(p for p in curve if p["ilp"] == 1 and p["warps_per_sm"] == 32)
    assert memory["basis"] == "measured" and memory["gbs"] == pytest.approx(point["gbs"], rel=1e-3)
    best = max(p["gbs"] for p in curve if p["ilp"] != "once")
    assert memory["fraction"] == pytest.approx(point["gbs"] / best, rel=1e-3)
    enough = min(p["warps_per_sm"] for p in curve if p["ilp"] == 1 and p["gbs"] >= 0.9 * best)
    assert memory["warps_for_target"] == enough
    model = json.loads(CliRunner().invoke(cli, ["occupancy", "--arch", "h100-sxm", "-r", "64", "-b", "256",
                                                "--bytes-in-flight", "8", "--format", "json"]).output)
    assert model["memory_parallelism"]["basis"].startswith("model")
    # Little's law: 32 warps x 32 threads x 8 B x 132 SMs against 3,350 GB/s x 354.3 ns.
    assert model["memory_parallelism"]["fraction"] == pytest.approx(32 * 32 * 8 * 132 / (3350 * 354.3), rel=1e-6)


def test_cluster_layout_from_probe_save_is_labelled_measured(tmp_path):
    path, _ = saved_with_measured_extras(tmp_path)
    result = CliRunner().invoke(cli, ["occupancy", "--spec-file", str(path), "--arch", "native", "-r", "18", "-b", "128",
                                      "--cluster-size", "16", "--format", "json"])
    clusters = json.loads(result.output)["clusters"]
    assert clusters["layout_basis"].startswith("measured") and clusters["max_active_clusters"] == 58


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=12))
def test_device_option_answers_any_text_with_a_list_or_one_line_error(text):
    from tuneadvise.advisor.queries.probe import device_indices
    from tuneadvise.specs.errors import InputError

    try:
        devices = device_indices(text, 2)
    except InputError as exc:
        assert exc.as_option().startswith("--device: ") and "\n" not in str(exc)
    else:
        assert devices and all(0 <= d < 2 for d in devices)


def _finite_number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


@settings(max_examples=40, deadline=None)
@given(st.one_of(st.text(max_size=8), st.floats(allow_nan=True)))
@example("nan")
@example("inf")
@example("-inf")
@example("1e400")
@example("0")
@example("-1")
def test_bytes_in_flight_and_cluster_size_reject_bad_values_with_exit_2(value):
    """What is not a finite number of at least 1 (NaN, infinities, text, zero, negatives) is
    refused with exit 2 and one line naming the option; anything accepted gives a document."""
    for option in ("--bytes-in-flight", "--cluster-size"):
        result = CliRunner().invoke(cli, ["occupancy", "--arch", "h100-sxm", "-r", "32", "-b", "256", option, str(value),
                                          "--format", "json"])
        number = _finite_number(str(value))
        if number is None or number < 1:
            assert result.exit_code == 2, (option, value, result.output)
        if result.exit_code == 2:
            assert result.output.startswith(f"tuneadvise: error: {option}: ") and result.output.count("\n") == 1
        else:
            assert result.exit_code in (0, 1) and json.loads(result.output)["arch"] == "sm_90", result.output


def test_recorded_quick_run_is_within_5_percent_of_the_full_run_or_flagged():
    """One H100 run of both (tests/fixtures/h100/probe_quick_vs_full.json, raw samples): every
    figure --quick reports as a result is within 5% of the full run's median; the others are
    flagged unstable by today's code."""
    runs = json.loads((H100 / "probe_quick_vs_full.json").read_text())
    quick, full = (recompute_document(runs[mode], shipped_catalog()) for mode in ("quick", "full"))
    assert quick["quick"] and not full["quick"]
    full_medians = {r["name"]: statistics.median(r["samples"]) for r in full["results"] if r["samples"]}
    reported = [r for r in quick["results"] if r["value"] is not None]
    assert len(reported) >= 14
    for r in reported:
        assert abs(r["value"] / full_medians[r["name"]] - 1) <= 0.05, r["name"]
    assert {r["name"] for r in quick["results"] if r["value"] is None} == set(quick["unstable"]) <= {
        "launch_async", "launch_sync"}


def test_only_naming_no_probe_runs_every_probe():
    # `--only ""` (a script's empty variable) ran every probe before the query took it over, as no --only does.
    from tuneadvise.advisor.queries.probe import probe_names
    from tuneadvise.probes.suite import PROBES

    assert probe_names("", "only") == probe_names(" , ", "only") == list(PROBES)
    assert probe_names("l2,dram", "only") == [n for n in PROBES if n in ("l2", "dram")]
