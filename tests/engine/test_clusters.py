"""Cluster occupancy against the driver: tests/fixtures/h100/clusters.json holds
what an H100 answered (cuOccupancyMaxActiveClusters over cluster sizes 1..16,
non-portable sizes allowed, at several block shapes; the driver's blocks per SM
for each shape; the GPC layout measured from %smid of launched clusters). Today's
engine and cluster model recompute every answer from the recorded inputs."""

from __future__ import annotations

import json

import pytest

from tuneadvise.advisor.engine import clusters
from tuneadvise.advisor.engine.clusters import cluster_occupancy
from tuneadvise.probes.clusters import gpc_layout
from tuneadvise.probes.results import judge_clusters
from tuneadvise.specs.catalog import shipped_catalog

from ..helpers import TESTS

RECORD = json.loads((TESTS / "fixtures" / "h100" / "clusters.json").read_text())
HOPPER = shipped_catalog().archs.get("9.0")


def test_model_over_the_measured_layout_equals_every_driver_answer():
    judged = judge_clusters(HOPPER, RECORD)
    assert judged["total"] == 16 * len(RECORD["shapes"]) >= 96
    assert judged["mismatches"] == []
    # The shapes cover different blocks per SM, and sizes past the portable 8 were answered.
    assert len({s["driver_blocks_per_sm"] for s in RECORD["shapes"]}) >= 4
    assert all(s["max_active_clusters"]["16"]["clusters"] > 0 for s in RECORD["shapes"])


def test_engine_blocks_per_sm_equal_the_drivers_for_every_recorded_shape():
    from tuneadvise.advisor.engine.occupancy import occupancy
    from tuneadvise.probes.driver import engine_kernel

    for shape in RECORD["shapes"]:
        kernel = engine_kernel(shape, shape["block_size"], shape["dynamic_shared_mem"], opt_in=True)
        assert occupancy(HOPPER, kernel).active_blocks_per_sm == shape["driver_blocks_per_sm"], shape


def test_measured_layout_covers_every_sm_once():
    sms = sorted(sm for group in RECORD["gpc_sms"] for sm in group)
    assert sms == list(range(RECORD["sm_count"])) and [len(g) for g in RECORD["gpc_sms"]] == RECORD["gpc_sizes"]


def test_a_uniform_layout_of_the_same_sm_count_disagrees_with_the_driver():
    """The answers depend on this chip's GPCs, not only on its SM count: eight GPCs of
    16-18 SMs (132 SMs, the nominal shape) get sizes 9..16 wrong."""
    nominal = {**RECORD, "gpc_sizes": [18, 18, 16, 16, 16, 16, 16, 16]}
    wrong = judge_clusters(HOPPER, nominal)["mismatches"]
    assert wrong and {m["cluster_size"] for m in wrong} >= {9, 16}


def test_without_the_clustered_blocks_per_sm_cap_the_model_fails(monkeypatch):
    monkeypatch.setattr(clusters, "CLUSTER_BLOCKS_PER_SM", 32)
    wrong = judge_clusters(HOPPER, RECORD)["mismatches"]
    assert wrong and all(m["blocks_per_sm"] > 8 for m in wrong)


def test_a_gpc_smaller_than_the_cluster_holds_none():
    assert cluster_occupancy(HOPPER, [16, 2], 8, 3).per_gpc == (42, 0)
    assert cluster_occupancy(HOPPER, [16, 2], 8, 2).per_gpc == (64, 8)
    assert cluster_occupancy(HOPPER, [18], 1, 16).non_portable and not cluster_occupancy(HOPPER, [18], 1, 8).non_portable
    with pytest.raises(ValueError, match="1..16"):
        cluster_occupancy(HOPPER, [18], 1, 17)


def test_cluster_sizes_come_from_the_architecture():
    """Portable and non-portable limits are the spec's (8 and 16 on 9.0), none before clusters."""
    portable = HOPPER._replace(max_cluster_size_portable=4, max_cluster_size_nonportable=8)
    assert cluster_occupancy(portable, [18], 1, 8).non_portable
    with pytest.raises(ValueError, match="1..8"):
        cluster_occupancy(portable, [18], 1, 16)
    ampere = shipped_catalog().resolve("sm_80").arch
    with pytest.raises(ValueError, match="1..1"):
        cluster_occupancy(ampere, [16], 1, 2)


def test_gpc_layout_joins_sms_that_shared_a_cluster():
    assert gpc_layout([[0, 1], [1, 2], [4, 5]], 6) == [[0, 1, 2], [4, 5], [3]]


def test_occupancy_cli_reports_clusters_from_the_nominal_layout_labelled_nominal():
    from click.testing import CliRunner

    from tuneadvise.cli.main import cli

    result = CliRunner().invoke(cli, ["occupancy", "--arch", "h100-sxm", "--registers", "18", "--block-size", "128",
                                      "--dynamic-shared-mem", "200K", "--opt-in", "--cluster-size", "9",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)["clusters"]
    # The recorded driver answered 9 for this shape (1 block per SM) at size 9 on the chip the layout came from.
    shape = next(s for s in RECORD["shapes"] if s["block_size"] == 128 and s["dynamic_shared_mem"] == 200 * 1024)
    assert doc["max_active_clusters"] == shape["max_active_clusters"]["9"]["clusters"] == 9
    assert doc["non_portable"] and doc["layout_basis"].startswith("nominal")
    table = CliRunner().invoke(cli, ["occupancy", "--arch", "h100-sxm", "--registers", "18", "--block-size", "128",
                                     "--cluster-size", "16", "--format", "table"])
    assert "Clusters of 16 (non-portable size): 58 active" in " ".join(table.output.split())


def test_occupancy_cli_without_a_layout_says_why_and_keeps_the_occupancy():
    from click.testing import CliRunner

    from tuneadvise.cli.main import cli

    result = CliRunner().invoke(cli, ["occupancy", "--arch", "hopper", "--registers", "18", "--block-size", "128",
                                      "--cluster-size", "4", "--format", "json"])
    doc = json.loads(result.output)
    assert result.exit_code == 0 and doc["clusters"]["max_active_clusters"] is None
    assert "probe --only cluster" in doc["clusters"]["why_not"] and doc["active_blocks_per_sm"] == 16
    plain = json.loads(CliRunner().invoke(cli, ["occupancy", "--arch", "hopper", "--registers", "18", "--block-size",
                                                "128", "--format", "json"]).output)
    assert "clusters" not in plain


def test_verify_cluster_check_replays_the_recorded_driver_answers(monkeypatch):
    """`verify`'s cluster comparison (probes/verify._check_clusters) with the driver replaced by
    what it answered for the cluster probe's own kernel; a wrong layout is caught."""
    from tuneadvise.probes import clusters as probe_clusters
    from tuneadvise.probes import driver, verify

    answers = {(s["block_size"], s["dynamic_shared_mem"]): s["max_active_clusters"] for s in RECORD["shapes"]}
    shape = RECORD["shapes"][0]
    attrs = {k: shape[k] for k in ("registers", "static_shared_mem", "max_threads_per_block")}
    monkeypatch.setattr(verify, "CLUSTER_BLOCKS", (64, 128, 256, 512, 1024))
    monkeypatch.setattr(verify, "CLUSTER_DYNAMIC", (0,))
    monkeypatch.setattr(driver, "set_launch_attributes", lambda *args: None)
    monkeypatch.setattr(probe_clusters, "allow_non_portable", lambda kernel: None)
    monkeypatch.setattr(probe_clusters, "max_active_clusters",
                        lambda kernel, block, dynamic, size: (answers[(block, dynamic)][str(size)]["clusters"], 0))

    verdict = verify.KernelVerdict("cluster_where", attrs)
    verify._check_clusters(None, attrs, 1, HOPPER, RECORD["gpc_sizes"], verdict)
    assert verdict.clusters_checked == 5 * 16 and verdict.disagreements == []
    wrong = verify.KernelVerdict("cluster_where", attrs)
    verify._check_clusters(None, attrs, 1, HOPPER, [18, 18, 16, 16, 16, 16, 16, 16], wrong)
    assert wrong.disagreements and all("cluster_size" in d for d in wrong.disagreements)


def test_arch_native_models_clusters_over_the_layout_it_measured():
    """`occupancy --arch native --cluster-size N`: the native spec is the recorded H100's driver
    limits, its product the shipped one it is (h100-sxm: same compute capability, SM count and
    name), and its GPC layout the one measured on it; every driver answer follows."""
    from tuneadvise.advisor.engine.clusters import cluster_document
    from tuneadvise.advisor.engine.occupancy import occupancy
    from tuneadvise.probes.driver import engine_kernel
    from tuneadvise.probes.native import LAYOUT_HOW, native_catalog

    device = json.loads((TESTS / "fixtures" / "h100" / "probe.json").read_text())["device"]
    assert device["name"] == RECORD["device"]["name"] and device["attributes"]["sm_count"] == RECORD["sm_count"]
    shipped = shipped_catalog().products["h100-sxm"]

    plain = native_catalog(device).resolve("native")
    assert plain.product.get("memory_bandwidth_gbs") == shipped.get("memory_bandwidth_gbs")
    assert plain.product.sources["memory_bandwidth_gbs"] == shipped.sources["memory_bandwidth_gbs"]
    assert cluster_document(plain, 8, 2)["why_not"].startswith("no GPC layout")  # nothing nominal

    native = native_catalog(device, {"gpc_sms": (RECORD["gpc_sizes"], LAYOUT_HOW)}).resolve("native")
    answers = 0
    for shape in RECORD["shapes"]:
        kernel = engine_kernel(shape, shape["block_size"], shape["dynamic_shared_mem"], opt_in=True)
        blocks = occupancy(native.arch, kernel).active_blocks_per_sm
        for size, answer in shape["max_active_clusters"].items():
            document = cluster_document(native, blocks, int(size))
            assert document["max_active_clusters"] == answer["clusters"], (shape["block_size"], size)
            assert document["layout_basis"] == f"measured on this device (measured#{LAYOUT_HOW})"
            answers += 1
    assert answers == 16 * len(RECORD["shapes"])
