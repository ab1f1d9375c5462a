"""Hand-checked cases: the traps published calculator ports fell into, and the
architectures cuda_occupancy.h does not cover (Fermi), worked from the
occupancy calculator spreadsheet's formulas."""

import pytest

from tuneadvise.advisor import analyze


def test_volta_headline_example():
    r = analyze("volta", registers=64, block_size=256, shared_mem="12K")
    assert (r.active_blocks_per_sm, r.active_warps_per_sm, r.occupancy, r.limiters) == (4, 32, 0.5, ["registers"])


@pytest.mark.parametrize("cc", ["5.3", "6.2"])
def test_registers_per_block_limit_of_the_tegra_parts_is_32k(cc):
    # 128 regs x 256 threads = 32768 fits 32K per block; 129 regs rounds to 4352/warp x 8 = 34816 > 32768.
    assert analyze(cc, registers=128, block_size=256).launchable
    r = analyze(cc, registers=129, block_size=256)
    assert not r.launchable and r.errors[0].code == "registers-per-block"
    # The same launch fits 5.2's (GM204, a GTX 980) and 5.0's 64K per block.
    assert analyze("5.2", registers=129, block_size=256).launchable
    assert analyze("5.0", registers=129, block_size=256).launchable


def test_kepler_3_7_register_file_is_128k_but_64k_per_block():
    r = analyze("3.7", registers=64, block_size=1024)
    assert r.launchable and r.block_limits["registers"] == 2  # 131072 / 65536
    assert not analyze("3.7", registers=65, block_size=1024).launchable  # > 64K per block


def test_warp_allocation_granularity_gp100():
    # 6.0 allocates registers per 2 sub-partitions, but refuses what GP10x (4) cannot run.
    r = analyze("6.0", registers=255, block_size=32)
    assert r.block_limits["registers"] == 8  # (65536/2) // 8192 * 2 = 8
    r61 = analyze("6.1", registers=255, block_size=32)
    assert r61.block_limits["registers"] == 8  # (65536/4) // 8192 * 4 = 8
    # 1 warp of 168 regs: 5376/warp; 6.0 -> (32768 // 5376) * 2 = 12; 6.1 -> (16384 // 5376) * 4 = 12
    assert analyze("6.0", registers=168, block_size=32).block_limits["registers"] == 12


def test_register_allocation_in_units_of_256_per_warp():
    # 33 registers: 1056 -> 1280 per warp.
    r = analyze("hopper", registers=33, block_size=256)
    assert r.allocated_registers_per_block == 1280 * 8
    assert r.block_limits["registers"] == 6  # (16384 // 1280) * 4 // 8


def test_carveout_rounds_up_to_a_supported_configuration():
    # 40% of 96 KB is 39321 B; Volta configures 64 KB: 12 KB blocks -> 5.
    r = analyze("volta", registers=16, block_size=64, shared_mem="12K", carveout=40)
    assert r.shared_mem_config == 65536 and r.block_limits["shared_memory"] == 5


def test_reserved_kilobyte_per_block_from_8_0():
    r = analyze("ampere", registers=16, block_size=64, shared_mem="8K")
    assert r.allocated_shared_mem_per_block == 9216
    assert r.block_limits["shared_memory"] == 167936 // 9216
    assert analyze("volta", registers=16, block_size=64, shared_mem="8K").allocated_shared_mem_per_block == 8192


def test_opt_in_over_48k_is_an_error_not_a_silent_zero():
    r = analyze("hopper", registers=32, block_size=256, dynamic_shared_mem="64K")
    assert not r.launchable and [e.code for e in r.errors] == ["opt-in-required"]
    assert analyze("hopper", registers=32, block_size=256, dynamic_shared_mem="64K", opt_in=True).active_blocks_per_sm == 3


def test_all_tied_limiters_are_named():
    r = analyze("volta", registers=32, block_size=256, shared_mem="12K")
    assert r.limiters == ["warps", "registers", "shared_memory"]


def test_barrier_limit_on_9_0_and_12_0():
    assert analyze("hopper", registers=16, block_size=32, barriers=16).block_limits["barriers"] == 4
    r = analyze("12.0", registers=16, block_size=32, barriers=1)
    assert r.block_limits["barriers"] == 24 and "barriers" in r.limiters


# Fermi (2.x), outside cuda_occupancy.h: the spreadsheet's formulas with
# 48 warps, 8 blocks, 32K registers in units of 64 per warp, warp granularity 2,
# shared memory in units of 128.
@pytest.mark.parametrize("registers, block, smem, blocks", [
    (20, 256, 0, 6),       # warps: 48 // 8 = 6; regs: 640/warp -> 51 -> 50 warps -> 6
    (32, 192, 0, 5),       # warps 48 // 6 = 8; regs 1024/warp: (16384 // 1024) * 2 = 32 warps // 6 = 5
    (63, 128, 0, 4),       # 2048/warp (2016 -> 2048): (16384 // 2048) * 2 = 16 warps // 4 = 4
    (16, 64, 10000, 4),    # smem 10000 -> 10112: 49152 // 10112 = 4
    (21, 32, 0, 8),        # 672 -> 704/warp: (16384 // 704) * 2 = 46 warps; blocks cap 8
])
def test_fermi_against_the_calculator_formulas(registers, block, smem, blocks):
    r = analyze("fermi", registers=registers, block_size=block, shared_mem=smem)
    assert r.active_blocks_per_sm == blocks


def test_fermi_prefer_l1_leaves_16k_shared():
    r = analyze("fermi", registers=16, block_size=64, shared_mem="10K", carveout="max-l1")
    assert r.shared_mem_config == 16384 and r.block_limits["shared_memory"] == 1


def test_fermi_and_kepler_3_0_cap_registers_at_63():
    for arch in ("fermi", "3.0"):
        r = analyze(arch, registers=64, block_size=128)
        assert not r.launchable and r.errors[0].code == "registers-per-thread"
