"""The products users asked for (Tesla P100 in its three boards, A100 40 GB, GH200, L40S, Jetson
AGX Orin), whether shared memory and L1 are one array, and the roofline's pyramid on a part
where they are not (the P100 of the Rough-n-Ready Roofline note)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tuneadvise.advisor.roofline import machine_from_product, place
from tuneadvise.cli.main import cli
from tuneadvise.specs.catalog import shipped_catalog

CATALOG = shipped_catalog()
NEW_PRODUCTS = ["p100-sxm2", "p100-pcie-16gb", "p100-pcie-12gb", "a100-sxm4-40gb", "gh200", "gh200-144gb", "l40s",
                "jetson-agx-orin-64gb"]


def run(*args):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize("typed, product, cc", [
    ("p100", "p100-sxm2", "6.0"), ("P100 PCIe", "p100-pcie-16gb", "6.0"), ("p100-pcie-12gb", "p100-pcie-12gb", "6.0"),
    ("a100-40gb", "a100-sxm4-40gb", "8.0"), ("gh200", "gh200", "9.0"), ("l40s", "l40s", "8.9"),
    ("jetson-agx-orin", "jetson-agx-orin-64gb", "8.7"),
])
def test_the_products_resolve_by_their_names(typed, product, cc):
    resolved = CATALOG.resolve(typed)
    assert resolved.product.name == product and resolved.arch.cc == cc


def test_l40s_is_the_l40s_not_the_l4():
    assert CATALOG.resolve("l40s").product.name == "l40s"
    doc = json.loads(run("occupancy", "--arch", "l40s", "-r", "32", "-b", "256", "--grid-size", "100",
                         "--format", "json").output)
    assert doc["arch"] == "sm_89"


# FP32 lanes per SM: the programming guide's arithmetic-instruction throughput table (results per
# clock per SM for 32-bit floating-point add, multiply, multiply-add).
FP32_LANES = {"6.0": 64, "8.0": 64, "8.7": 128, "8.9": 128, "9.0": 128}


@pytest.mark.parametrize("name", NEW_PRODUCTS)
def test_each_products_peak_is_its_sms_lanes_and_clock(name):
    """An SM count or clock that disagrees with the sourced FP32 peak is a wrong value: the peak
    is SMs x FP32 lanes x 2 FLOP (an FMA) x boost clock, to the datasheet's rounding."""
    product = CATALOG.products[name]
    lanes = FP32_LANES[product.cc]
    peak = product.get("sm_count") * lanes * 2 * product.get("boost_clock_mhz") * 1e6 / 1e12
    assert peak == pytest.approx(product.get("fp32_tflops"), rel=0.006)


@pytest.mark.parametrize("name", NEW_PRODUCTS)
def test_every_value_of_the_new_products_names_a_document_and_a_section(name):
    product = CATALOG.products[name]
    assert set(product.sources) == set(product.values)
    for field, ref in product.sources.items():
        ident, _, section = ref.partition("#")
        assert ident not in ("peer-survey", "datasheet", "user") and section, (field, ref)


@pytest.mark.parametrize("name", NEW_PRODUCTS)
def test_specs_show_each_product_in_both_formats(name):
    product = CATALOG.products[name]
    doc = json.loads(run("specs", "show", name, "--format", "json").output)
    assert doc["product"]["name"] == name and doc["compute_capability"] == product.cc
    assert {k: v["value"] for k, v in doc["product"]["values"].items()} == dict(product.values)
    text = run("specs", "show", name, "--format", "table")
    assert text.exit_code == 0 and product.title in text.output and "Traceback" not in text.output


def test_shared_memory_and_l1_are_separate_on_maxwell_and_pascal_only():
    separate = {a.cc for a in CATALOG.archs.values() if a.shared_l1_unified is False}
    assert separate == {"5.0", "5.2", "5.3", "6.0", "6.1", "6.2"}
    assert all(a.shared_l1_unified is True for a in CATALOG.archs.values() if a.cc not in separate)
    assert CATALOG.archs["6.0"].source_of("shared_l1_unified") == "pg-cc#compute-capability-6-x"


def test_the_pyramid_of_the_notes_v100_is_shared_memory_and_l1():
    # The note: V100 16 GB PCIe, combined shared memory & L1, 80 x 32 x 4 x 1.245 GHz = 12.748 TB/s.
    v100 = CATALOG.resolve("v100-pcie")
    machine = machine_from_product(v100.product, v100.arch.warp_size, "fp64",
                                   shared_l1_unified=v100.arch.shared_l1_unified)
    assert machine.shared_l1.value == pytest.approx(80 * 32 * 4 * 1.245e9)
    assert machine.shared_name == "shared + L1" and machine.shared_l1.basis.startswith("80 SMs")
    assert place(machine, 20, 6).bound == "shared-memory/L1"


def test_the_pyramid_of_the_notes_p100_is_shared_memory_alone():
    # The note: "The P100 has separate shared and L1 caches whereas the V100 has a unified L1 and
    # shared cache" (its P100 is the 12 GB PCIe board). Shared memory's own bandwidth is 32 banks
    # x 4 B per clock per SM; L1 traffic does not count against it.
    doc = json.loads(run("roofline", "--arch", "p100-pcie-12gb", "--precision", "fp64", "--intensity", "20",
                         "--shared-bytes-per-flop", "6", "--format", "json").output)
    assert doc["shared_l1_unified"] is False
    assert doc["shared_l1_bandwidth_bytes_per_s"] == pytest.approx(56 * 32 * 4 * 1297e6)
    assert doc["shared_l1_bandwidth_basis"].startswith("shared memory alone (L1 is a separate cache)")
    assert doc["kernel"]["bound"] == "shared-memory"
    assert doc["kernel"]["pyramid_cap_flop_per_s"] == pytest.approx(56 * 32 * 4 * 1297e6 / 6)
    assert doc["memory_bandwidth_bytes_per_s"] == pytest.approx(549e9) and doc["peak_flop_per_s"] == pytest.approx(4.7e12)
    text = run("roofline", "--arch", "p100-pcie-12gb", "--precision", "fp64", "--format", "table").output
    assert "shared memory alone" in " ".join(text.split()) and "shared + L1" not in text


def test_a_users_spec_file_inherits_whether_shared_memory_and_l1_are_one(tmp_path):
    from tuneadvise.specs.models import load_user_spec

    shipped = CATALOG.archs["6.0"]
    lines = ['family = "mine"', "[[arch]]", 'cc = "6.0"', 'shared_mem_model = "fixed"']
    for key in ("warp_size", "max_threads_per_block", "max_warps_per_sm", "max_blocks_per_sm", "registers_per_sm",
                "registers_per_block", "max_registers_per_thread", "register_allocation_unit",
                "warp_allocation_granularity", "shared_mem_per_sm", "shared_mem_per_block", "shared_mem_per_block_optin",
                "reserved_shared_mem_per_block", "shared_mem_allocation_unit"):
        lines.append(f'{key} = {{ value = {getattr(shipped, key)}, source = "user" }}')
    spec = tmp_path / "mine.toml"
    spec.write_text("\n".join(lines) + "\n")
    _, [arch] = load_user_spec(spec)
    assert arch.shared_l1_unified is False
    spec.write_text("\n".join(lines) + '\nshared_l1_unified = { value = "no", source = "user" }\n')
    with pytest.raises(ValueError, match="shared_l1_unified"):
        load_user_spec(spec)
