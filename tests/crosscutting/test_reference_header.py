"""Differential test: the engine against NVIDIA's cuda_occupancy.h of the releases the
engine follows (specs/data/releases.toml), over seeded sweeps.

Every compute capability a release's header covers is swept with random registers,
block sizes (odd ones included), static and dynamic shared memory, carveouts,
opt-in, barrier and virtual-resource counts; every field of cudaOccResult is
compared, the block-size optimizer with cudaOccMaxPotentialOccupancyBlockSizeVariableSMem,
and `max_dynamic_shared_mem` with cudaOccAvailableDynamicSMemPerBlock. The engine
answers for an older release through `specs.releases.under_release`, as `--cuda` does.

Which releases a run sweeps (`swept_releases`): the newest two always, and one of the
others, rotating by the day, so that successive runs cover them all; every release's
header is also checked for the compute capabilities it refuses, on every run.
TUNEADVISE_SWEEP_RELEASES=all sweeps every release (the slower run), or names them
(`12.3,13.0`).
"""

from __future__ import annotations

import datetime
import os
import random

import pytest

from tuneadvise.advisor.engine.occupancy import (
    CARVEOUT_DEFAULT,
    CARVEOUT_MAX_L1,
    CARVEOUT_MAX_SHARED,
    INT_MAX,
    LIMITERS,
    max_dynamic_shared_mem,
    occupancy,
)
from tuneadvise.advisor.engine.optimizer import LinearSharedMem, max_potential_block_size
from tuneadvise.advisor.launch import LaunchConfig
from tuneadvise.specs.catalog import shipped_catalog
from tuneadvise.specs.releases import DEFAULT_RELEASE, release, releases, under_release

from ..reference import header

pytestmark = pytest.mark.reference

SEED = int(os.environ.get("TUNEADVISE_SWEEP_SEED", "20261122"))
CASES = int(os.environ.get("TUNEADVISE_SWEEP_CASES", "100000"))
AVAILABLE_CASES = max(CASES // 2, 2000)

# cudaOccLimitingFactor bits, in the engine's limiter order.
FLAG = {"warps": 0x01, "registers": 0x02, "shared_memory": 0x04, "blocks": 0x08, "virtual_resources": 0x20,
        "barriers": 0x10}
CACHE_PREFER_NONE, CACHE_PREFER_SHARED, CACHE_PREFER_L1 = 0, 1, 2
FUNC_SHMEM_LIMIT_DEFAULT, FUNC_SHMEM_LIMIT_OPTIN = 0, 1


ALWAYS_SWEPT = 2  # the newest releases, swept on every run


def swept_releases() -> list[str]:
    """The releases this run sweeps (see the module's docstring)."""
    known = list(releases())
    chosen = os.environ.get("TUNEADVISE_SWEEP_RELEASES", "").strip()
    if chosen == "all":
        return known
    if chosen:
        return [release(name).cuda for name in chosen.split(",")]
    rest = known[ALWAYS_SWEPT:]
    rotating = rest[datetime.date.today().toordinal() % len(rest)] if rest else None
    return known[:ALWAYS_SWEPT] + ([rotating] if rotating else [])


def reference(cuda: str):
    """A function that runs harness lines against the release's header; a skip (a failure where
    TUNEADVISE_REQUIRE_REFERENCE=1, as in CI) if the header cannot be had."""
    header.required(lambda: header.harness_binary(cuda), f"cuda_occupancy.h {cuda} reference")
    return lambda lines: header.run(cuda, lines)


@pytest.fixture(scope="module", params=swept_releases())
def harness(request):
    """(release, a function that runs harness lines against that release's header)."""
    return request.param, reference(request.param)


@pytest.mark.parametrize("cuda", list(releases()))
def test_each_release_refuses_exactly_the_compute_capabilities_listed_as_unknown(cuda):
    """releases.toml's `unknown` and `known_as` against the header itself: one plain launch per
    shipped compute capability, sent by the number the release knows it by."""
    run = reference(cuda)
    catalog = shipped_catalog()
    archs = [a for a in catalog.sorted_archs() if catalog.family_covered_by_header[a.family]]
    kernel = LaunchConfig(registers=32, block_size=128, barriers=1)
    lines = [f"O {encode_device(a._replace(cuda_release=cuda))} {encode_function(a, kernel)} 128 0" for a in archs]
    refused = {a.cc for a, row in zip(archs, run(lines)) if row[0] != 0}
    assert refused == set(release(cuda).unknown)


def covered_archs(cuda: str = DEFAULT_RELEASE):
    """Every shipped architecture the release's header covers, as that release computes it."""
    catalog = shipped_catalog()
    unknown = release(cuda).unknown
    return [under_release(a, cuda) for a in catalog.sorted_archs()
            if catalog.family_covered_by_header[a.family] and a.cc not in unknown]


def header_cc(arch, cuda: str | None = None) -> tuple[int, int]:
    """The (major, minor) the release's header knows `arch` by (Thor: 10.1 before CUDA 13)."""
    cc = release(cuda).known_as.get(arch.cc, arch.cc)
    major, minor = cc.split(".")
    return int(major), int(minor)


def encode_device(arch) -> str:
    major, minor = header_cc(arch, arch.cuda_release)  # Thor is 10.1 to CUDA 12.9's header
    return " ".join(map(str, (
        major, minor, arch.max_threads_per_block, arch.max_threads_per_sm,
        arch.registers_per_block, arch.registers_per_sm, arch.warp_size, arch.shared_mem_per_block,
        arch.shared_mem_per_sm, 100, arch.shared_mem_per_block_optin, arch.reserved_shared_mem_per_block)))


def encode_function(arch, kernel: LaunchConfig, max_threads: int = INT_MAX) -> str:
    """cudaOccFuncAttributes + cudaOccDeviceState for the same launch the engine models. The
    maximum dynamic size is what cudaFuncGetAttributes reports: the per-block limit less the
    static part, or after opt-in the opt-in limit less the static part."""
    if kernel.opt_in and arch.major >= 7:
        config = FUNC_SHMEM_LIMIT_OPTIN
        max_dynamic = max(arch.shared_mem_per_block_optin - kernel.static_shared_mem, 0)
    else:
        config = FUNC_SHMEM_LIMIT_DEFAULT
        max_dynamic = max(arch.shared_mem_per_block - kernel.static_shared_mem, 0)
    cache = CACHE_PREFER_NONE
    if arch.shared_mem_model == "cache-config":  # 2.x/3.x: named carveouts are cache configs
        cache = {CARVEOUT_MAX_L1: CACHE_PREFER_L1, CARVEOUT_MAX_SHARED: CACHE_PREFER_SHARED}.get(kernel.carveout, CACHE_PREFER_NONE)
    return " ".join(map(str, (
        max_threads, kernel.registers, kernel.static_shared_mem, config, max_dynamic, kernel.barriers,
        kernel.virtual_resources, cache, kernel.carveout)))


def random_kernel(rng: random.Random, arch) -> LaunchConfig:
    block = rng.choice((rng.randrange(32, 1025, 32), rng.randint(1, 1024), rng.choice((32, 64, 128, 256, 512, 1024))))
    registers = rng.choice((rng.randint(0, arch.max_registers_per_thread),
                            rng.choice((16, 24, 32, 40, 48, 64, 96, 128, 168, 255)) % (arch.max_registers_per_thread + 1)))
    static = rng.choice((0, 0, rng.randint(0, 49152), rng.randrange(0, 49153, 1024)))
    opt_in = rng.random() < 0.5
    ceiling = arch.shared_mem_per_block_optin if opt_in else arch.shared_mem_per_block
    dynamic = rng.choice((0, rng.randint(0, ceiling + 4096), rng.randrange(0, ceiling + 8193, 1024), max(ceiling - static, 0)))
    carveout = rng.choice((CARVEOUT_DEFAULT, CARVEOUT_MAX_L1, CARVEOUT_MAX_SHARED, rng.randint(0, 100), rng.randint(0, 100)))
    barriers = rng.choice((0, 1, 1, 2, rng.randint(0, 16)))
    virtual = rng.choice((0, 0, 0, 1, rng.randint(1, 16), rng.randint(1, 64), rng.randint(100, 300)))
    return LaunchConfig(registers=registers, block_size=block, static_shared_mem=static, dynamic_shared_mem=dynamic,
                        carveout=carveout, opt_in=opt_in, barriers=barriers, virtual_resources=virtual)


def expected_flags(header_flags: int, result) -> int:
    """The header's flags, less the one quirk the engine corrects.

    cudaOccMaxActiveBlocksPerMultiprocessor sets the warps/registers/shared
    memory/blocks flags before it applies the barrier limit, so when barriers
    lower the result further those earlier flags remain although those
    resources no longer limit. The engine names only resources whose limit
    equals the final answer.
    """
    keep = 0
    for name, bit in FLAG.items():
        limit = result.block_limits.get(name)
        limit = INT_MAX if limit is None else limit
        if header_flags & bit and limit == result.active_blocks_per_sm:
            keep |= bit
    return keep


def test_occupancy_matches_header_sweep(harness):
    cuda, run = harness
    rng = random.Random(SEED)
    archs = covered_archs(cuda)
    cases = []
    for _ in range(CASES):
        arch = rng.choice(archs)
        kernel = random_kernel(rng, arch)
        cases.append((arch, kernel))
    lines = [f"O {encode_device(a)} {encode_function(a, k)} {k.block_size} {k.dynamic_shared_mem}" for a, k in cases]
    rows = run(lines)

    mismatches = []
    launch_failures = 0
    for (arch, kernel), row in zip(cases, rows):
        status, active, flags, lim_regs, lim_smem, lim_warps, lim_blocks, lim_bars, alloc_regs, alloc_smem, lim_virtual = row
        assert status == 0, f"header rejected {arch.cc} {kernel}"
        result = occupancy(arch, kernel)
        limits = {k: (INT_MAX if v is None else v) for k, v in result.block_limits.items()}
        got = (result.active_blocks_per_sm, limits["registers"], limits["shared_memory"], limits["warps"],
               limits["blocks"], limits.get("barriers", INT_MAX), result.allocated_registers_per_block,
               result.allocated_shared_mem_per_block, limits.get("virtual_resources", INT_MAX))
        want = (active, lim_regs, lim_smem, lim_warps, lim_blocks, lim_bars, alloc_regs, alloc_smem, lim_virtual)
        our_flags = sum(FLAG[name] for name in result.limiters)
        if got != want or our_flags != expected_flags(flags, result) or result.launchable != (active > 0):
            mismatches.append((arch.cc, kernel, got, want, our_flags, flags))
        launch_failures += active == 0
    print(f"\ncuda_occupancy.h {cuda}: {len(cases)} occupancy cases over {len(archs)} compute capabilities, "
          f"{len(mismatches)} differ, {launch_failures} cannot launch")
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ; first: {mismatches[:3]}"
    # The sweep must exercise both launchable and failing configurations, and every limiter the release has.
    assert 0 < launch_failures < len(cases) // 2
    seen = {name for (arch, kernel) in cases[:20000] for name in occupancy(arch, kernel).limiters}
    has_virtual = any(a.virtual_resources_per_sm for a in archs)
    assert seen == set(LIMITERS) - (set() if has_virtual else {"virtual_resources"})
    assert {a.cc for a, _ in cases} == {a.cc for a in archs}


def test_max_potential_block_size_matches_header(harness):
    cuda, run = harness
    rng = random.Random(SEED + 1)
    archs = covered_archs(cuda)
    cases = []
    for _ in range(max(CASES // 20, 2000)):
        arch = rng.choice(archs)
        kernel = random_kernel(rng, arch)
        base = rng.choice((0, 0, rng.randint(0, 16384)))
        per_thread = rng.choice((0, 0, 4, 8, 16, rng.randint(0, 96)))
        bounds = rng.choice((INT_MAX, INT_MAX, rng.randint(1, 1024)))
        kernel = LaunchConfig(registers=kernel.registers, block_size=1, static_shared_mem=kernel.static_shared_mem,
                        carveout=kernel.carveout, opt_in=kernel.opt_in, barriers=kernel.barriers,
                        virtual_resources=kernel.virtual_resources,
                        max_threads_per_block=None if bounds == INT_MAX else bounds)
        cases.append((arch, kernel, base, per_thread, bounds))
    lines = [f"P {encode_device(a)} {encode_function(a, k, b)} {base} {pt}" for a, k, base, pt, b in cases]
    rows = run(lines)
    mismatches = []
    for (arch, kernel, base, per_thread, _), (status, min_grid, block) in zip(cases, rows):
        assert status == 0
        best = max_potential_block_size(arch, kernel, LinearSharedMem(base, per_thread), sm_count=100)
        if (best.min_grid_size, best.block_size) != (min_grid, block):
            mismatches.append((arch.cc, kernel, base, per_thread, (best.min_grid_size, best.block_size), (min_grid, block)))
    print(f"\ncuda_occupancy.h {cuda}: {len(cases)} block-size optimizer cases, {len(mismatches)} differ")
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ; first: {mismatches[:3]}"
    assert any(row[2] not in (0, 1024) for row in rows)


def test_available_dynamic_shared_mem_matches_header(harness):
    """max_dynamic_shared_mem against cudaOccAvailableDynamicSMemPerBlock, its own sweep."""
    cuda, run = harness
    rng = random.Random(SEED + 2)
    archs = covered_archs(cuda)
    cases = []
    for _ in range(AVAILABLE_CASES):
        arch = rng.choice(archs)
        kernel = random_kernel(rng, arch)._replace(dynamic_shared_mem=0)
        blocks = rng.choice((1, 1, 2, rng.randint(1, 8), rng.randint(1, 32), rng.randint(1, 64)))
        cases.append((arch, kernel, blocks))
    lines = [f"A {encode_device(a)} {encode_function(a, k)} {n} {k.block_size}" for a, k, n in cases]
    rows = run(lines)
    mismatches, answered = [], 0
    for (arch, kernel, blocks), (status, available) in zip(cases, rows):
        budget = max_dynamic_shared_mem(arch, kernel, blocks)
        want = available if status == 0 else None
        if budget.max_dynamic_shared_mem != want:
            mismatches.append((arch.cc, kernel, blocks, budget.max_dynamic_shared_mem, want, status))
        answered += want is not None
    print(f"\ncuda_occupancy.h {cuda}: {len(cases)} available-dynamic-shared-memory cases over {len(archs)} "
          f"compute capabilities, {len(mismatches)} differ, {answered} answered a size")
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ; first: {mismatches[:3]}"
    # Both answers occur: a size, and 'that many blocks cannot reside'.
    assert len(cases) // 10 < answered < len(cases)
