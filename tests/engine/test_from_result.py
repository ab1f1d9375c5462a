"""Answers taken from the limits a result already holds, where only shared memory changes, equal the
full calculations (occupancy and max_dynamic_shared_mem, held to cuda_occupancy.h in
tests/crosscutting/test_reference_header.py) over seeded sweeps of every shipped architecture."""

import random

from tuneadvise.advisor.engine.occupancy import max_dynamic_shared_mem, occupancy, own_dynamic_shared_mem_budget
from tuneadvise.advisor.launch import LaunchConfig
from tuneadvise.specs.catalog import shipped_catalog


def test_own_budget_equals_the_full_calculation_over_a_sweep():
    rng = random.Random(40)
    carveouts = ["default", "max-shared", "max-l1", 0, 25, 50, 100]
    checked = 0
    for arch in shipped_catalog().sorted_archs():
        for _ in range(300):
            dynamic_limit = arch.shared_mem_per_block_optin or arch.shared_mem_per_block
            config = LaunchConfig.from_mapping({
                "registers": rng.randint(16, 255), "block_size": rng.choice([32, 64, 128, 256, 512, 1024, rng.randint(1, 1024)]),
                "shared_mem": rng.choice([0, 4096, 12288, 40000]), "dynamic_shared_mem": rng.randint(0, dynamic_limit),
                "carveout": rng.choice(carveouts), "opt_in": rng.random() < 0.5,
                "barriers": rng.choice([0, 0, 1, 4]), "virtual_resources": rng.choice([0, 0, 16])})
            result = occupancy(arch, config)
            if not result.launchable or not result.active_blocks_per_sm:
                continue
            assert own_dynamic_shared_mem_budget(result) == \
                max_dynamic_shared_mem(arch, config, result.active_blocks_per_sm), (arch.sm, config)
            checked += 1
    assert checked > 1000


def test_blocks_at_total_shared_mem_equals_occupancy_over_a_sweep():
    from tuneadvise.advisor.engine.whatif import blocks_at_total_shared_mem, with_total_shared_mem

    rng = random.Random(41)
    for arch in shipped_catalog().sorted_archs():
        ceiling = (arch.shared_mem_per_block_optin or arch.shared_mem_per_block) + 4096
        for _ in range(200):
            config = LaunchConfig.from_mapping({
                "registers": rng.randint(16, 255), "block_size": rng.choice([64, 256, 1024, rng.randint(1, 1024)]),
                "shared_mem": rng.choice([0, 4096, 40000, 49152]), "dynamic_shared_mem": rng.randint(0, ceiling),
                "carveout": rng.choice(["default", "max-shared", "max-l1", 0, 50, 100]), "opt_in": rng.random() < 0.5,
                "barriers": rng.choice([0, 0, 4]), "cluster_size": rng.choice([None, None, 2, 32])})
            result = occupancy(arch, config)
            for total in (0, rng.randint(0, ceiling), config.static_shared_mem + config.dynamic_shared_mem - 1024):
                if total >= 0:
                    expected = occupancy(arch, with_total_shared_mem(config, total)).active_blocks_per_sm
                    assert blocks_at_total_shared_mem(result, total) == expected, (arch.sm, config, total)
