"""Probes on a real GPU. Skipped cleanly where CuPy or a device is missing
(as in CI); tests/probes/test_probes.py covers the same logic on recorded output."""

import json

import pytest
from click.testing import CliRunner

from tuneadvise.cli.main import cli

from ..helpers import TESTS

cupy = pytest.importorskip("cupy")
try:
    if cupy.cuda.runtime.getDeviceCount() == 0:
        pytest.skip("no CUDA device", allow_module_level=True)
except Exception:  # no driver
    pytest.skip("no CUDA driver", allow_module_level=True)

FIXTURES = TESTS / "fixtures" / "lint"


def run_json(*args):
    result = CliRunner().invoke(cli, [*args, "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.output)


def test_empirical_occupancy_equals_engine():
    code, doc = run_json("probe", "--quick", "--only", "occupancy")
    configs = doc["results"][0]["details"]["configs"]
    assert code == 0 and configs and all(c["match"] for c in configs)


def test_quick_suite_reports_every_probe_without_failures():
    code, doc = run_json("probe", "--quick")
    assert code == 0 and not doc["failed"] and not doc["above_peak"]
    assert {r["name"] for r in doc["results"]} >= {"fp32_fma", "dram_triad", "shared_read", "latency_l2", "launch_async"}


def test_verify_real_cubin_for_this_device():
    major, minor = cupy.cuda.Device().compute_capability[:-1], cupy.cuda.Device().compute_capability[-1]
    cubin = FIXTURES / f"lint_sm_{major}{minor}.cubin"
    if not cubin.exists():
        pytest.skip(f"no recorded cubin for sm_{major}{minor}")
    code, doc = run_json("verify", str(cubin))
    assert code == 0 and all(not k["disagreements"] for k in doc["kernels"])


def test_cluster_model_equals_the_driver_on_this_device():
    if cupy.cuda.Device().compute_capability < "90":
        pytest.skip("clusters need compute capability 9.0")
    code, doc = run_json("probe", "--quick", "--only", "cluster")
    result = doc["results"][0]
    assert code == 0 and result["details"]["mismatches"] == [] and result["value"] == result["details"]["total"]
    assert sum(result["details"]["gpc_sizes"]) == doc["device"]["attributes"]["sm_count"]


def test_one_device_listed_twice_runs_the_several_device_path():
    code, doc = run_json("probe", "--device", "0,0", "--only", "shared,launch")
    assert code == 0 and [d["device"]["index"] for d in doc["devices"]] == [0, 0]
    assert {row["name"] for row in doc["differs_most"]} >= {"shared_read", "launch_graph"}
