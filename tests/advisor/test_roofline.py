"""Roofline and pyramid: the V100 note's figures, measured ceilings from a
recorded H100 probe run, JSON keys with units, bad input."""

import json
import statistics

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.roofline import machine_from_product, place
from tuneadvise.cli.main import cli
from tuneadvise.probes.results import recompute_document
from tuneadvise.specs.catalog import shipped_catalog

from ..helpers import TESTS, assert_one_line_error

PROBE = TESTS / "fixtures" / "h100" / "probe.json"


def run(*args):
    return CliRunner().invoke(cli, ["roofline", *args])


def roofline_json(*args):
    result = run(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_reproduces_the_v100_note():
    """Rough-n-Ready Roofline, V100 edition: 900 GB/s theoretical, 790 GB/s
    measured copy, 12.748 TB/s shared+L1 at the 1.245 GHz base clock, 7 TFLOP/s
    FP64, and a kernel at 6 bytes/FLOP capped just over 2 TFLOP/s."""
    doc = roofline_json("--arch", "v100-pcie", "--precision", "fp64", "--intensity", "20", "--shared-bytes-per-flop", "6")
    assert doc["theoretical_memory_bandwidth_bytes_per_s"] == 900e9
    assert doc["memory_bandwidth_bytes_per_s"] == 790e9
    assert doc["shared_l1_bandwidth_bytes_per_s"] == pytest.approx(12.7488e12)
    assert doc["peak_flop_per_s"] == 7e12
    cap = doc["kernel"]["pyramid_cap_flop_per_s"]
    assert 2.0e12 < cap < 2.2e12 and cap == pytest.approx(12.7488e12 / 6)
    assert doc["kernel"]["bound"] == "shared-memory/L1"
    assert {"shared_bytes_per_flop": 6, "attainable_flop_per_s": cap} in doc["pyramid"]


def test_memory_and_compute_bound_verdicts():
    low = roofline_json("--arch", "v100-pcie", "--flops", "1T", "--bytes", "1T")
    assert low["kernel"]["bound"] == "memory" and low["kernel"]["ceiling_flop_per_s"] == pytest.approx(790e9)
    high = roofline_json("--arch", "v100-pcie", "--intensity", "100", "--achieved", "3.5T")
    assert high["kernel"]["bound"] == "compute" and high["kernel"]["headroom_ratio"] == pytest.approx(2.0)
    assert high["ridge_intensity_flop_per_byte"] == pytest.approx(7e12 / 790e9)


def test_measured_ceilings_from_a_probe_run_say_so(tmp_path):
    # The fixture holds the run's raw samples; `probe --format json` is what today's code makes of them.
    recorded = json.loads(PROBE.read_text())
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps(recompute_document(recorded, shipped_catalog())))
    doc = roofline_json("--arch", "h100-sxm", "--probe", str(probe), "--precision", "fp32", "--intensity", "4")
    medians = {r["name"]: statistics.median(r["samples"]) for r in recorded["results"] if r.get("samples")}
    assert doc["memory_bandwidth_bytes_per_s"] == pytest.approx(medians["dram_copy"] * 1e9)
    assert doc["peak_flop_per_s"] == pytest.approx(medians["fp32_fma"] * 1e12)
    assert doc["memory_bandwidth_basis"].startswith("measured: probe dram_copy")
    assert doc["theoretical_memory_bandwidth_bytes_per_s"] == 3350e9


def test_json_keys_name_their_units():
    doc = roofline_json("--arch", "h100-sxm", "--intensity", "1")
    numeric = [k for k, v in doc.items() if isinstance(v, float)] + list(doc["kernel"])
    for key in numeric:
        assert key.endswith(("_flop_per_s", "_bytes_per_s", "_flop_per_byte", "_ratio", "bound", "_ceiling")), key


def test_table_has_chart_and_verdict():
    result = run("--arch", "v100-pcie", "--intensity", "0.5", "--achieved", "1.5T", "--format", "table")
    assert result.exit_code == 0
    assert "memory-bound" in result.output and "FLOP/byte" in result.output and "o" in result.output
    assert "above the ceiling" in result.output


@pytest.mark.parametrize("args, message", [
    (["--arch", "volta", "--intensity", "1"], "--arch: 'volta' is an architecture, not a product"),
    (["--arch", "v100-pcie", "--flops", "1T"], "--flops and --bytes"),
    (["--arch", "v100-pcie", "--intensity", "-3"], "--intensity: expected a positive number (e.g. 2.5e12 or 2.5T), got '-3'"),
    (["--arch", "v100-pcie", "--intensity", "lots"], "--intensity: expected a positive number (e.g. 2.5e12 or 2.5T), got 'lots'"),
    (["--arch", "v100-pcie", "--precision", "fp16", "--intensity", "1", "--achieved", "1e999"], "--achieved"),
    (["--arch", "v100-pcie", "--probe", __file__], "--probe:"),
])
def test_bad_input_is_one_line_exit_2(args, message):
    assert_one_line_error(run(*args), message)


@settings(max_examples=200, deadline=None)
@given(st.floats(1e-4, 1e4), st.floats(0.01, 64))
def test_ceiling_never_above_either_roof(intensity, shared_bytes):
    machine = machine_from_product(shipped_catalog().products["v100-pcie"], 32, "fp64")
    placement = place(machine, intensity, shared_bytes)
    assert placement.ceiling <= machine.peak.value
    assert placement.ceiling <= intensity * machine.memory.value * (1 + 1e-12)
    assert placement.ceiling <= machine.shared_l1.value / shared_bytes * (1 + 1e-12)


# -- malformed probe documents and figures at the edge of floats ---------------------------

def _probe_with(tmp_path, change) -> str:
    doc = recompute_document(json.loads(PROBE.read_text()), shipped_catalog())
    change(doc)
    path = tmp_path / "probe.json"
    path.write_text(json.dumps(doc))  # NaN and Infinity as Python's json writes them (and reads them back)
    return str(path)


def _set_value(name, value):
    def change(doc):
        for result in doc["results"]:
            if result["name"] == name:
                result["value"] = value
    return change


@pytest.mark.parametrize("change, message", [
    (lambda d: d.__setitem__("results", [1]), "--probe: results[0]: expected an object with name and value, got 1"),
    (lambda d: d.__setitem__("results", {"dram_copy": 1}), "--probe: results: expected a list of probe results"),
    (lambda d: d["results"][0].pop("name"), "--probe: results[0].name: expected a probe's name (a string), got None"),
    (lambda d: d["results"][2].__setitem__("name", [1] * 100_000), "--probe: results[2].name: expected a probe's "
                                                                  "name (a string), got a list"),
    (lambda d: d["device"].__setitem__("name", 5), "--probe: device.name: expected the device's name"),
    (lambda d: d.__setitem__("device", []), "--probe: device.name: expected the device's name"),
    (lambda d: d["results"][0].__setitem__("above_peak", "no"), "--probe: results[0].above_peak ('fp32_fma'): "
                                                                "expected true or false"),
    (_set_value("dram_copy", -2900.0), "results[5].value ('dram_copy'): must be a number from 1e-100 to 1e+100, got -2900.0"),
    (_set_value("dram_copy", 0), "results[5].value ('dram_copy'): must be a number"),
    (_set_value("dram_copy", float("nan")), "results[5].value ('dram_copy'): must be a number"),
    (_set_value("fp64_fma", float("inf")), "results[1].value ('fp64_fma'): must be a number"),
    (_set_value("fp64_fma", 10 ** 400), "results[1].value ('fp64_fma'): must be a number"),
    (_set_value("fp64_fma", "33"), "results[1].value ('fp64_fma'): expected a number from 1e-100 to 1e+100, got '33'"),
    (_set_value("fp64_fma", True), "results[1].value ('fp64_fma'): expected a number"),
    (_set_value("latency_l2", "slow"), "results[11].value ('latency_l2'): expected a number or null, got 'slow'"),
])
def test_malformed_probe_results_are_one_line_naming_the_field(tmp_path, change, message):
    path = _probe_with(tmp_path, change)
    for fmt in ("json", "table"):
        assert_one_line_error(run("--arch", "h100-sxm", "--probe", path, "--intensity", "2", "--format", fmt), message)


def test_probe_results_the_roofline_does_not_read_may_be_anything_numeric(tmp_path):
    path = _probe_with(tmp_path, _set_value("latency_l2", -1))  # not a ceiling: not the roofline's to judge
    assert roofline_json("--arch", "h100-sxm", "--probe", path, "--intensity", "2")["memory_bandwidth_basis"] \
        .startswith("measured: probe dram_copy")


@pytest.mark.parametrize("args, message", [
    (["--flops", "1e308", "--bytes", "1e-308"], "--flops / --bytes (FLOP per byte): must be a number from 1e-100 "
                                                "to 1e+100, got inf"),
    (["--flops", "1e-308", "--bytes", "1e308"], "--flops / --bytes (FLOP per byte): must be a number"),
    (["--intensity", "1e308"], "--intensity (FLOP per byte): must be a number from 1e-100 to 1e+100, got 1e+308"),
    (["--intensity", "1e-320"], "--intensity (FLOP per byte): must be a number"),
    (["--intensity", "2", "--achieved", "1e-320"], "--achieved: must be a number"),
    (["--intensity", "2", "--achieved", "1e300"], "--achieved: must be a number"),
    (["--intensity", "2", "--shared-bytes-per-flop", "1e300"], "--shared-bytes-per-flop: must be a number"),
])
def test_figures_that_would_overflow_are_one_line(args, message):
    for fmt in ("json", "table"):
        assert_one_line_error(run("--arch", "h100-sxm", "--format", fmt, *args), message)


def test_kernels_file_figures_that_would_overflow_are_one_line(tmp_path):
    config = tmp_path / "kernels.toml"
    config.write_text('[[kernels]]\nname = "k"\nroofline = {flops = 1e300, bytes = 1e-300}\n')
    assert_one_line_error(run("--arch", "h100-sxm", "--kernels", str(config), "--format", "json"),
                          "--kernels: 'k': intensity (FLOP per byte): must be a number")


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(["1e-100", "1e100", "3e-50", "7e60"]), st.sampled_from(["1e-100", "1e100", "1"]),
       st.sampled_from(["1e-100", "1e100", "0.5"]))
def test_figures_at_the_range_edges_stay_finite_in_json_and_the_chart(intensity, achieved, shared):
    args = ("--arch", "h100-sxm", "--intensity", intensity, "--achieved", achieved, "--shared-bytes-per-flop", shared)
    result = run(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    assert "Infinity" not in result.output and "NaN" not in result.output
    json.loads(result.output, parse_constant=lambda token: pytest.fail(f"non-finite {token} in the JSON"))
    table = run(*args, "--format", "table")
    assert table.exit_code == 0 and "FLOP/byte" in table.output, table.output


@pytest.mark.parametrize("args, named", [
    (["--achieved", "1T"], "--achieved"),
    (["--shared-bytes-per-flop", "3"], "--shared-bytes-per-flop"),
    (["--flops", "2T", "--bytes", "1T", "--intensity", "5"], "--intensity and --flops/--bytes"),
])
def test_a_kernel_figure_without_the_kernel_or_two_intensities_are_refused(args, named):
    """Each was dropped without a word: the machine's roofs printed, exit 0, as if not given."""
    result = CliRunner().invoke(cli, ["roofline", "--arch", "h100-sxm", *args])
    assert_one_line_error(result, named)
