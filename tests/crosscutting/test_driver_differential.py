"""The engine against the CUDA driver's own occupancy API, recorded on a real GPU.

tests/fixtures/h100/driver_occupancy.json.gz was written by
tests/gpu/record_driver_fixture.py on an H100 (driver 580, CUDA 13.0): 105
kernels compiled with different register caps, static shared memory and named
barriers, each queried with cuOccupancyMaxActiveBlocksPerMultiprocessor over
block sizes, dynamic shared memory, carveouts and opt-in. CI re-checks every
recorded answer.
"""

import gzip
import json

import pytest

from tuneadvise.advisor.engine.occupancy import occupancy
from tuneadvise.advisor.launch import LaunchConfig
from tuneadvise.specs.catalog import shipped_catalog

from ..helpers import TESTS

FIXTURE = TESTS / "fixtures" / "h100" / "driver_occupancy.json.gz"


@pytest.fixture(scope="module")
def recorded():
    with gzip.open(FIXTURE, "rt") as handle:
        return json.load(handle)


def test_device_attributes_match_the_spec(recorded):
    device = recorded["device"]
    arch = shipped_catalog().resolve(f"{device['major']}.{device['minor']}").arch
    assert (device["max_threads_per_multiprocessor"], device["max_blocks_per_multiprocessor"],
            device["registers_per_multiprocessor"], device["registers_per_block"],
            device["shared_mem_per_multiprocessor"], device["shared_mem_per_block"],
            device["shared_mem_per_block_optin"], device["reserved_shared_mem_per_block"],
            device["max_threads_per_block"], device["warp_size"]) == (
        arch.max_threads_per_sm, arch.max_blocks_per_sm, arch.registers_per_sm, arch.registers_per_block,
        arch.shared_mem_per_sm, arch.shared_mem_per_block, arch.shared_mem_per_block_optin,
        arch.reserved_shared_mem_per_block, arch.max_threads_per_block, arch.warp_size)
    product = shipped_catalog().resolve("h100-sxm").product
    assert device["multiprocessor_count"] == product.get("sm_count")


def test_every_recorded_driver_answer_equals_the_engine(recorded):
    device = recorded["device"]
    arch = shipped_catalog().resolve(f"{device['major']}.{device['minor']}").arch
    total, mismatches = 0, []
    for kernel in recorded["kernels"]:
        attrs = kernel["attributes"]
        for opt_in, carveout, block, dynamic, status, blocks in kernel["rows"]:
            assert status == 0
            result = occupancy(arch, LaunchConfig(registers=attrs["num_regs"], block_size=block,
                                            static_shared_mem=attrs["shared_size_bytes"], dynamic_shared_mem=dynamic,
                                            carveout=carveout, opt_in=bool(opt_in), barriers=attrs["ptxas_barriers"]))
            total += 1
            if result.active_blocks_per_sm != blocks:
                mismatches.append((attrs["num_regs"], attrs["shared_size_bytes"], opt_in, carveout, block, dynamic,
                                   blocks, result.active_blocks_per_sm))
    assert total == 604800
    assert not mismatches, f"{len(mismatches)} of {total} differ from the driver; first: {mismatches[:5]}"


def test_recorded_sweep_is_varied(recorded):
    """Guard against a fixture that could not catch anything."""
    regs = {k["attributes"]["num_regs"] for k in recorded["kernels"]}
    barriers = {k["attributes"]["ptxas_barriers"] for k in recorded["kernels"]}
    answers = {row[5] for k in recorded["kernels"] for row in k["rows"]}
    assert len(regs) >= 10 and {0, 1, 16} <= barriers
    assert 0 in answers and 32 in answers and len(answers) > 20
