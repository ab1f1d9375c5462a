"""The dynamic shared-memory budget a document shows, taken from the limits a result holds, equals
the full calculation (max_dynamic_shared_mem, held to cuda_occupancy.h in
tests/crosscutting/test_reference_header.py) over a seeded sweep of every shipped architecture."""

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
