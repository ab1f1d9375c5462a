"""Roofline and pyramid: the V100 note's figures, measured ceilings from a
recorded H100 probe run, JSON keys with units, bad input."""

import json
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import assert_one_line_error
from tuneadvise.advisor.roofline import machine_from_product, place
from tuneadvise.cli.main import cli
from tuneadvise.probes.results import recompute_document
from tuneadvise.specs.catalog import shipped_catalog

PROBE = Path(__file__).parent / "fixtures" / "h100" / "probe.json"


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
