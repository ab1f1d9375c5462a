"""The spec's per-compute-capability values against what real devices report
(tests/fixtures/devices/device_query.toml). The reference-header differential
test feeds the spec's own values to cuda_occupancy.h, so it cannot catch a
wrong spec value; this test can: it is how 5.2's and 6.2's registers per block,
once swapped, are held right."""

import sys

import pytest

from tuneadvise.specs.catalog import shipped_catalog

from ..helpers import TESTS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DUMPS = tomllib.loads((TESTS / "fixtures" / "devices" / "device_query.toml").read_text())

# deviceQuery's name -> how the spec holds the same value.
FIELDS = {
    "regs_per_block": lambda a: a.registers_per_block,
    "regs_per_multiprocessor": lambda a: a.registers_per_sm,
    "shared_mem_per_block": lambda a: a.shared_mem_per_block,
    "shared_mem_per_block_optin": lambda a: a.shared_mem_per_block_optin,
    "shared_mem_per_multiprocessor": lambda a: a.shared_mem_per_sm,
    "max_threads_per_block": lambda a: a.max_threads_per_block,
    "max_threads_per_multiprocessor": lambda a: a.max_warps_per_sm * a.warp_size,
    "max_blocks_per_multiprocessor": lambda a: a.max_blocks_per_sm,
    "reserved_shared_mem_per_block": lambda a: a.reserved_shared_mem_per_block,
}


@pytest.mark.parametrize("dump", DUMPS["device"], ids=lambda d: d["cc"])
def test_spec_agrees_with_the_device(dump):
    arch = shipped_catalog().archs[dump["cc"]]
    wrong = {field: (dump[field], spec(arch)) for field, spec in FIELDS.items()
             if field in dump and spec(arch) != dump[field]}
    assert not wrong, f"{dump['cc']} ({dump['device']}): device vs spec {wrong}"


def test_every_dump_names_where_it_was_read():
    for dump in DUMPS["device"]:
        assert dump.get("source", "").strip(), dump["cc"]


def test_the_h100_dump_is_the_recorded_driver_answer():
    native = tomllib.loads((TESTS / "fixtures" / "h100" / "native.toml").read_text())["arch"][0]
    [dump] = [d for d in DUMPS["device"] if d["cc"] == "9.0"]
    assert dump["regs_per_block"] == native["registers_per_block"]["value"]
    assert dump["shared_mem_per_block_optin"] == native["shared_mem_per_block_optin"]["value"]
    assert dump["shared_mem_per_multiprocessor"] == native["shared_mem_per_sm"]["value"]
    assert dump["max_blocks_per_multiprocessor"] == native["max_blocks_per_sm"]["value"]


def test_every_compute_capability_is_confirmed_or_listed_as_unconfirmed():
    dumped = {d["cc"] for d in DUMPS["device"]}
    assert not dumped & set(DUMPS["unconfirmed"])
    assert set(shipped_catalog().archs) == dumped | set(DUMPS["unconfirmed"])


def test_registers_per_block_on_the_small_register_file_parts():
    # GM204 has the full 64 K per block; the Tegra parts (5.3, 6.2) 32 K.
    archs = shipped_catalog().archs
    assert [archs[cc].registers_per_block for cc in ("5.2", "5.3", "6.2")] == [65536, 32768, 32768]
