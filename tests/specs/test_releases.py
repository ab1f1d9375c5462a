"""CUDA 13.5's header and what differs from 12.9: the virtual-resource limiter, the new
compute capabilities (10.7, 11.x; Thor renamed from 10.1), 10.3's barriers, `--cuda 12.9`,
and the dynamic shared-memory budget (`max-dynamic-smem`). The numbers here are the
header's own arithmetic worked by hand; tests/crosscutting/test_reference_header.py holds the engine
to both headers over sweeps."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.advisor import InputError, analyze, max_dynamic_smem
from tuneadvise.advisor.engine.occupancy import shared_mem_ceiling
from tuneadvise.cli.main import cli
from tuneadvise.specs.catalog import DATA_DIR, read_toml, shipped_catalog, sources
from tuneadvise.specs.releases import DEFAULT_RELEASE, UnknownReleaseError, releases, under_release

from ..helpers import JSON_VALUES, assert_one_line_error

CATALOG = shipped_catalog()


def run(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input)


def test_the_default_release_is_the_first_listed_and_every_shipped_arch_follows_it():
    assert list(read_toml(f"{DATA_DIR}/releases.toml")["release"])[0]["cuda"] == DEFAULT_RELEASE
    assert {a.cuda_release for a in CATALOG.archs.values()} == {DEFAULT_RELEASE}


# Every minor release whose runtime wheel ships cuda_occupancy.h, as the package index has them
# (there is no CUDA 12.7), newest first.
INDEX_RELEASES = ["13.5", "13.4", "13.3", "13.2", "13.1", "13.0",
                  "12.9", "12.8", "12.6", "12.5", "12.4", "12.3", "12.2", "12.1", "12.0"]


def test_every_release_on_the_package_index_is_listed_with_its_wheel_and_source():
    assert list(releases()) == INDEX_RELEASES
    for cuda, entry in releases().items():
        package, member = (("nvidia-cuda-runtime", "nvidia/cu13/") if cuda.startswith("13.")
                           else ("nvidia-cuda-runtime-cu12", "nvidia/cuda_runtime/"))
        assert entry.wheel.startswith(f"{package}=={cuda}."), entry.wheel
        assert entry.member == f"{member}include/cuda_occupancy.h"
        assert entry.source in sources() and cuda in sources()[entry.source]["title"]
        assert entry.wheel.split("==")[1] in sources()[entry.source]["title"]


@pytest.mark.parametrize("cuda, blocks", [("13.5", 16), ("13.4", 16), ("13.3", 16), ("13.2", 32), ("13.1", 32),
                                          ("13.0", 32), ("12.9", 32)])
def test_10_3_took_one_barrier_slot_per_block_from_13_3(cuda, blocks):
    # 64-thread blocks: 32 block slots, two barriers per block; 13.0-13.2 give 10.3 two slots per block.
    assert analyze("sm_103", cuda=cuda, registers=32, block_size=64, barriers=2).active_blocks_per_sm == blocks


@pytest.mark.parametrize("cuda, available", [("13.5", 115712), ("13.1", 115712), ("13.0", 116736), ("12.9", 116736),
                                             ("12.6", 116736), ("12.0", 116736)])
def test_the_reserved_kilobyte_is_subtracted_from_13_1(cuda, available):
    budget = max_dynamic_smem("h100-sxm", 2, cuda=cuda, registers=32, block_size=256, opt_in=True)
    assert budget.max_dynamic_shared_mem == available


@pytest.mark.parametrize("cc, newest_refusing", [("10.0", "12.6"), ("12.0", "12.6"), ("11.0", "12.6"), ("10.3", "12.8"),
                                                 ("12.1", "12.8"), ("11.1", "12.9"), ("10.7", "13.3"), ("11.7", "13.3")])
def test_a_compute_capability_is_refused_by_the_releases_before_its_header_support(cc, newest_refusing):
    order = list(releases())
    for cuda in order:
        if order.index(cuda) < order.index(newest_refusing):
            assert under_release(CATALOG.archs[cc], cuda).cuda_release == cuda
        else:
            with pytest.raises(UnknownReleaseError, match=f"does not know compute capability {cc}"):
                under_release(CATALOG.archs[cc], cuda)


def test_virtual_resources_limit_from_13_0():
    kernel = {"registers": 32, "block_size": 128, "virtual_resources": 64}
    assert analyze("sm_100", cuda="13.0", **kernel).active_blocks_per_sm == 2
    assert analyze("sm_100", cuda="12.8", **kernel).active_blocks_per_sm == 16


@pytest.mark.parametrize("arch, count, blocks, limit", [
    ("sm_100", 0, 16, None),  # 0 does not limit: no virtual_resources entry
    ("sm_100", 1, 16, 128),
    ("sm_100", 12, 10, 10),  # 128 // 12
    ("sm_120", 64, 2, 2),
    ("sm_110", 128, 1, 1),
    ("sm_90", 200, 16, None),  # no virtual resources before 10.x
])
def test_virtual_resources_limit_128_per_sm_on_10x_to_12x(arch, count, blocks, limit):
    result = analyze(arch, registers=32, block_size=128, virtual_resources=count)
    assert result.active_blocks_per_sm == blocks
    assert result.block_limits.get("virtual_resources") == limit
    assert ("virtual_resources" in result.limiters) == (limit == blocks)


def test_more_virtual_resources_than_the_sm_has_cannot_launch():
    result = analyze("sm_103", registers=32, block_size=128, virtual_resources=129)
    assert not result.launchable and result.active_blocks_per_sm == 0
    assert [e.code for e in result.errors] == ["virtual-resources"]
    assert analyze("sm_103", cuda="12.9", registers=32, block_size=128, virtual_resources=129).launchable


def test_10_3_has_one_barrier_slot_per_block_in_13_5_and_two_in_12_9():
    kernel = {"registers": 32, "block_size": 64, "barriers": 2}
    assert analyze("sm_103", **kernel).active_blocks_per_sm == 16
    assert analyze("sm_103", cuda="12.9", **kernel).active_blocks_per_sm == 32
    assert analyze("sm_100", **kernel).active_blocks_per_sm == 32  # 10.0 keeps two


@pytest.mark.parametrize("name", ["sm_101", "compute_101", "10.1", "101"])
def test_thor_answers_to_its_old_names_with_a_note(name):
    resolved = CATALOG.resolve(name)
    assert resolved.arch.cc == "11.0" and "renamed" in resolved.note
    assert CATALOG.resolve("thor").arch.cc == "11.0" and CATALOG.resolve("thor").note is None


@pytest.mark.parametrize("cc, blocks, slots, largest", [
    ("10.7", 16, 1, 335872), ("11.0", 24, 1, 233472), ("11.1", 32, 2, 233472), ("11.3", 32, 2, 233472),
    ("11.7", 32, 2, 335872)])
def test_the_architectures_cuda_13_5_added_carry_the_headers_values(cc, blocks, slots, largest):
    arch = CATALOG.archs[cc]
    assert (arch.max_blocks_per_sm, arch.barriers_per_block_slot, arch.shared_mem_configs[-1]) == (blocks, slots, largest)
    assert arch.virtual_resources_per_sm == 128
    for key in ("max_blocks_per_sm", "barriers_per_block_slot", "shared_mem_configs", "virtual_resources_per_sm"):
        assert arch.source_of(key).startswith("occ-h#"), key
    # What the header does not fix comes from NVIDIA's CCCL traits (Thor) or is marked unconfirmed,
    # never attributed to another part's guide.
    assert arch.source_of("max_warps_per_sm").startswith("cccl-arch-traits#" if cc == "11.0" else "unconfirmed#")
    assert arch.source_of("l1_shared_total").startswith("unconfirmed#")


def test_a_users_spec_file_inherits_the_virtual_resources_of_its_compute_capability(tmp_path):
    shipped = CATALOG.archs["10.0"]
    lines = ['family = "mine"', "[[arch]]", 'cc = "10.0"', 'shared_mem_model = "carveout"',
             f'shared_mem_configs = {{ value = {list(shipped.shared_mem_configs)}, source = "user" }}']
    for key in ("warp_size", "max_threads_per_block", "max_warps_per_sm", "max_blocks_per_sm", "registers_per_sm",
                "registers_per_block", "max_registers_per_thread", "register_allocation_unit",
                "warp_allocation_granularity", "shared_mem_per_sm", "shared_mem_per_block", "shared_mem_per_block_optin",
                "reserved_shared_mem_per_block", "shared_mem_allocation_unit"):
        lines.append(f'{key} = {{ value = {getattr(shipped, key)}, source = "user" }}')
    spec = tmp_path / "mine.toml"
    spec.write_text("\n".join(lines) + "\n")
    doc = json.loads(run("occupancy", "--spec-file", str(spec), "-r", "32", "-b", "128", "--virtual-resources", "64",
                         "--format", "json").output)
    assert doc["active_blocks_per_sm"] == 2 and doc["limiters"] == ["virtual_resources"]


def test_an_older_release_refuses_what_its_header_does_not_know():
    with pytest.raises(UnknownReleaseError, match="does not know compute capability 10.7"):
        under_release(CATALOG.archs["10.7"], "12.9")
    with pytest.raises(UnknownReleaseError, match="known: 13.5, 13.4, 13.3, .*, 12.1, 12.0"):
        under_release(CATALOG.archs["9.0"], "11.8")
    thor = under_release(CATALOG.archs["11.0"], "12.9")
    assert thor.virtual_resources_per_sm == 0 and thor.source_of("virtual_resources_per_sm").startswith("occ-h-12.9#")


def test_explain_and_completion_know_the_new_names():
    from tuneadvise.cli.options import arch_names

    assert run("explain", "virtual_resources").output.startswith("TA108 virtual-resources (error)")
    assert {"sm_110", "sm_101", "thor", "sm_107"} <= set(arch_names())


def test_cuda_option_on_the_commands():
    single = json.loads(run("occupancy", "--arch", "sm_103", "-r", "32", "-b", "64", "--barriers", "2",
                            "--format", "json", "--cuda", "12.9").output)
    assert single["cuda_release"] == "12.9" and single["active_blocks_per_sm"] == 32
    assert_one_line_error(run("occupancy", "--arch", "sm_107", "-r", "32", "-b", "64", "--cuda", "12.9"),
                          "--cuda:", "10.7")
    assert_one_line_error(run("suggest", "--arch", "sm_90", "-r", "32", "--cuda", "13"), "--cuda:",
                          "known: " + ", ".join(INDEX_RELEASES))
    lines = "".join(json.dumps({"arch": a, "registers": 32, "block_size": 64, "barriers": 2}) + "\n"
                    for a in ("sm_103", "sm_107"))
    batch = run("occupancy", "--batch", "-", "--cuda", "12.9", input=lines)
    first, second = (json.loads(line) for line in batch.output.splitlines())
    assert first["active_blocks_per_sm"] == 32 and second["error"]["code"] == "bad-input" and batch.exit_code == 2


def test_version_and_specs_show_name_the_release_and_list_differences():
    assert "cuda_occupancy.h of CUDA 13.5" in run("--version").output
    assert json.loads(run("specs", "--format", "json").output)["cuda_release"] == "13.5"
    doc = json.loads(run("specs", "show", "sm_110", "--format", "json").output)
    assert doc["arch"] == "sm_110" and "thor" in doc["names"] and doc["formerly"] == ["10.1"]
    assert doc["cuda_release"] == "13.5" and "nvidia-cuda-runtime==13.5.37" in doc["exact_to"]
    assert doc["values"]["l1_shared_total"]["unconfirmed"] and not doc["values"]["max_blocks_per_sm"]["unconfirmed"]
    assert doc["values"]["max_warps_per_sm"]["value"] == 48  # 1536 threads per SM (NVIDIA's CCCL traits)
    assert {d["field"] for d in doc["release_differences"]} == {
        None, "virtual_resources_per_sm", "available_dynamic_subtracts_reserved"}
    b300 = json.loads(run("specs", "show", "sm_103", "--format", "json").output)
    [barriers] = [d for d in b300["release_differences"] if d["field"] == "barriers_per_block_slot"]
    assert (barriers["value"], barriers["value_here"], barriers["releases"]) == (2, 1, ["13.2", "13.1", "13.0", "12.9"])
    [unknown] = [d for d in b300["release_differences"] if d["field"] is None]
    assert unknown["releases"] == ["12.8", "12.6", "12.5", "12.4", "12.3", "12.2", "12.1", "12.0"]
    old = json.loads(run("specs", "show", "sm_103", "--cuda", "12.9", "--format", "json").output)
    assert old["cuda_release"] == "12.9" and "12.9.79" in old["exact_to"]
    assert old["values"]["barriers_per_block_slot"]["value"] == 2 and old["release_differences"] == b300["release_differences"]
    text = run("specs", "show", "thor", "--format", "table").output
    assert "* l1_shared_total" in text and "unconfirmed" in text and "Exact to cuda_occupancy.h of CUDA 13.5" in text
    assert "CUDA 12.9, 12.8: cuda_occupancy.h knows compute capability 11.0 as 10.1" in text
    assert "CUDA 12.0 to 12.6: cuda_occupancy.h does not know compute capability 11.0" in text


def test_max_dynamic_smem_library_and_command():
    # 228 KB per SM / 2 blocks, less the 1 KB reserved per block (13.5); 12.9 forgot the reserved KB.
    budget = max_dynamic_smem("h100-sxm", 2, registers=32, block_size=256, opt_in=True)
    assert (budget.max_dynamic_shared_mem, budget.limiter, budget.blocks_at_max) == (115712, "shared_memory", 2)
    assert max_dynamic_smem("h100-sxm", 2, cuda="12.9", registers=32, block_size=256, opt_in=True) \
        .max_dynamic_shared_mem == 116736
    # Without opt-in the per-block limit binds: 48 KB + 1 KB reserved, less the reserved KB and 4 KB static.
    small = max_dynamic_smem("sm_90", 2, registers=32, block_size=256, shared_mem="4K")
    assert (small.max_dynamic_shared_mem, small.limiter) == (49152 - 4096, "shared_mem_per_block")
    result = run("max-dynamic-smem", "--arch", "sm_100", "-r", "32", "-b", "128", "-n", "4", "--format", "json")
    doc = json.loads(result.output)
    assert result.exit_code == 0 and doc["schema_version"] == 1 and doc["cuda_release"] == "13.5"
    assert doc["max_dynamic_shared_mem"] == 49152 and doc["limiter"] == "shared_mem_per_block"  # (48 + 1 - 1) KB
    assert doc["input"]["blocks_per_sm"] == 4 and doc["blocks_per_sm_at_max"] >= 4
    # Registers hold a 1024-thread block of 64 registers to one block: two cannot reside.
    refused = run("max-dynamic-smem", "--arch", "sm_100", "-r", "64", "-b", "1024", "-n", "2", "--format", "json")
    doc = json.loads(refused.output)
    assert refused.exit_code == 1 and doc["max_dynamic_shared_mem"] is None and doc["limiter"] == "registers"
    assert "cannot reside" in run("max-dynamic-smem", "--arch", "sm_100", "-r", "64", "-b", "1024", "-n", "2").output
    over = json.loads(run("max-dynamic-smem", "--arch", "sm_100", "-r", "32", "-b", "128", "-n", "1",
                          "--virtual-resources", "129", "--format", "json").output)
    assert over["max_dynamic_shared_mem"] is None and over["limiter"] == "virtual-resources"
    assert_one_line_error(run("max-dynamic-smem", "--arch", "sm_90", "-r", "32", "-b", "128"), "--blocks-per-sm")
    assert_one_line_error(run("max-dynamic-smem", "--arch", "sm_90", "-r", "32", "-b", "128", "-n", "0"),
                          "--blocks-per-sm", "from 1 to 1024")


def test_the_header_answer_that_wraps_on_kepler_is_flagged():
    # 3.5 preferring L1: 16 KB / 2 blocks is less than the static 20,000 B; the header's size_t
    # subtraction wraps and the maximum dynamic size (48 KB - static) comes back.
    budget = max_dynamic_smem("sm_35", 2, registers=32, block_size=128, shared_mem=20000, carveout="max-l1")
    assert budget.max_dynamic_shared_mem == 49152 - 20000 and budget.limiter == "max_dynamic"
    assert not budget.keeps_blocks and budget.blocks_at_max == 1
    output = run("max-dynamic-smem", "--arch", "sm_35", "-r", "32", "-b", "128", "-s", "20000", "-n", "2",
                 "--carveout", "max-l1").output
    assert "gives 1 block/SM" in output


def test_occupancy_prints_the_what_if_budget():
    output = run("occupancy", "--arch", "h100-sxm", "-r", "32", "-b", "256", "-d", "20K").output
    assert "What if: up to 28,160 B of dynamic shared memory keep 8 blocks/SM" in " ".join(output.split())


ARCH_NAMES = sorted({a.sm for a in CATALOG.archs.values()})


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ARCH_NAMES), st.integers(-2, 40), st.dictionaries(
    st.sampled_from(["registers", "block_size", "shared_mem", "carveout", "opt_in", "barriers", "virtual_resources"]),
    JSON_VALUES))
def test_max_dynamic_smem_takes_any_input_safely(arch, blocks, values):
    values = {"registers": 32, "block_size": 128, **values}
    try:
        budget = max_dynamic_smem(arch, blocks, **values)
    except InputError:
        return
    assert blocks >= 1  # fewer is an InputError
    if budget.max_dynamic_shared_mem is None:
        assert budget.blocks_without_dynamic < blocks or budget.errors
        return
    # Never more than the kernel may ask for: the per-block (or opt-in) limit less the static part.
    kernel = budget.kernel
    assert 0 <= budget.max_dynamic_shared_mem <= shared_mem_ceiling(budget.arch, kernel.opt_in) - kernel.static_shared_mem


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=12), st.text(max_size=12), st.sampled_from(["sm_35", "sm_90", "sm_103", "thor", "sm_107"]),
       st.sampled_from([None, "12.9", "13.5", "x"]))
def test_max_dynamic_smem_command_answers_any_text_with_a_documented_exit(blocks, virtual, arch, cuda):
    args = ["max-dynamic-smem", "--arch", arch, "-r", "32", "-b", "128", "-n", blocks, "--virtual-resources", virtual]
    result = run(*args, *(["--cuda", cuda] if cuda else []))
    assert result.exit_code in (0, 1, 2), result.output
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        assert len(result.output.strip().splitlines()) == 1, result.output
