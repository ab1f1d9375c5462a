"""The occupancy document: one layout (docs/json-schema.md), one serialization."""

import re

import pytest

from tuneadvise.advisor.engine.occupancy import occupancy
from tuneadvise.advisor.launch import LaunchConfig
from tuneadvise.advisor.report import resolved_document
from tuneadvise.specs.catalog import shipped_catalog

from ..helpers import ROOT, TESTS

CATALOG = shipped_catalog()
SCHEMA_PAGE = ROOT / "docs" / "json-schema.md"


def documented_keys() -> list[str]:
    """The keys of the `occupancy --format json` table in docs/json-schema.md, in order."""
    section = SCHEMA_PAGE.read_text().split("## `occupancy --format json`", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `(\w+)` \|", section, re.M)


def test_the_document_has_the_documented_keys_in_order():
    resolved = CATALOG.resolve("volta")
    keys = list(resolved_document(resolved, occupancy(resolved.arch, LaunchConfig(registers=64, block_size=256))))
    # only on request: curves (--graphs), clusters (--cluster-size), memory_parallelism (--bytes-in-flight)
    # and on batch lines only: id
    assert keys == [key for key in documented_keys() if key not in ("curves", "clusters", "memory_parallelism", "id")]


@pytest.mark.parametrize("arch, cluster, error", [("sm_90", 32, "exceeds sm_90's maximum of 16"),
                                                  ("sm_80", 2, "need compute capability 9.0 or later"),
                                                  ("sm_90", 16, None), ("sm_80", 1, None)])
def test_a_cluster_the_hardware_refuses_is_a_launch_error(arch, cluster, error):
    resolved = CATALOG.resolve(arch)
    result = occupancy(resolved.arch, LaunchConfig(registers=32, block_size=256, cluster_size=cluster))
    document = resolved_document(resolved, result)
    if error is None:
        assert document["launchable"] and document["errors"] == []
    else:
        assert document["launchable"] is False and document["active_blocks_per_sm"] == 0
        [entry] = document["errors"]
        assert entry["code"] == "cluster-size" and entry["field"] == "cluster_size" and error in entry["message"]


def test_the_document_keeps_the_block_shape_and_product():
    resolved = CATALOG.resolve("h100-sxm")
    result = occupancy(resolved.arch, LaunchConfig(registers=40, block_size=96, block_dims=(32, 3)))
    document = resolved_document(resolved, result)
    assert document["input"]["block_dims"] == [32, 3] and document["product"] == "h100-sxm"


def test_provenance_names_the_driver_when_the_driver_gave_the_value():
    # With --arch native (or a spec saved by probe --save) a value the driver gave is the
    # driver's, not the spec's: the document says where each limit came from.

    from tuneadvise.advisor.report import occupancy_document
    from tuneadvise.specs.models import load_user_spec

    native = TESTS / "fixtures" / "h100" / "native.toml"
    _, [arch] = load_user_spec(native)
    assert arch.sources["max_warps_per_sm"].startswith("driver#")
    doc = occupancy_document(occupancy(arch, LaunchConfig(registers=32, block_size=256)))
    assert doc["provenance"]["max_warps_per_sm"] == "driver"
    shipped = occupancy_document(occupancy(shipped_catalog().resolve("sm_90").arch, LaunchConfig(registers=32, block_size=256)))
    assert shipped["provenance"]["max_warps_per_sm"] == "spec"


@pytest.mark.parametrize("arch, registers, block, static, opt_in", [
    ("volta", 64, 256, 12288, False), ("h100-sxm", 32, 256, 0, True), ("sm_80", 128, 128, 4096, False),
    ("sm_120", 40, 512, 0, False), ("sm_35", 32, 192, 0, False)])
def test_the_dynamic_shared_memory_budget_is_what_max_dynamic_smem_answers(arch, registers, block, static, opt_in):
    """The occupancy document's budget for its own blocks per SM is `max-dynamic-smem`'s answer
    (cudaOccAvailableDynamicSMemPerBlock, held to NVIDIA's header by the differential tests),
    and with that much dynamic shared memory the kernel keeps those blocks."""
    import json

    from click.testing import CliRunner

    from tuneadvise.cli.main import cli

    shape = ["--arch", arch, "--registers", str(registers), "--block-size", str(block), "--shared-mem", str(static),
             *(["--opt-in"] if opt_in else []), "--format", "json"]
    document = json.loads(CliRunner().invoke(cli, ["occupancy", *shape]).output)
    blocks, budget = document["active_blocks_per_sm"], document["dynamic_shared_mem_budget"]
    answer = json.loads(CliRunner().invoke(cli, ["max-dynamic-smem", *shape, "--blocks-per-sm", str(blocks)]).output)
    assert budget == {key: answer[key] for key in ("max_dynamic_shared_mem", "limiter", "blocks_per_sm_at_max")}
    kept = json.loads(CliRunner().invoke(cli, ["occupancy", *shape, "--dynamic-shared-mem",
                                               str(budget["max_dynamic_shared_mem"])]).output)
    assert kept["active_blocks_per_sm"] == budget["blocks_per_sm_at_max"] >= blocks


def test_no_budget_where_nothing_launches():
    result = occupancy(CATALOG.resolve("sm_90").arch, LaunchConfig(registers=64, block_size=2048 // 2, static_shared_mem=1 << 20))
    assert not result.launchable
    assert resolved_document(CATALOG.resolve("sm_90"), result)["dynamic_shared_mem_budget"] is None
