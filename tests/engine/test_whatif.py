"""The what-if cliffs against brute force: every answer equals a scan of full
occupancy() calls over every value of the varied resource."""

from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.engine.occupancy import occupancy, shared_mem_ceiling
from tuneadvise.advisor.engine.whatif import best_carveout, register_cliff, shared_mem_cliff, with_total_shared_mem
from tuneadvise.advisor.launch import LaunchConfig
from tuneadvise.specs.catalog import shipped_catalog

ARCHS = sorted(shipped_catalog().archs.values(), key=lambda a: (a.major, a.minor))


def scanned_steps(blocks: dict, current: int, active: int, steps: int = 2) -> list:
    """The down steps by brute force: below `current`, the largest value with more blocks than
    the last step, `blocks` holding the full engine's answer for every value scanned."""
    down, best = [], active
    below = sorted((v for v in blocks if v < current), reverse=True)
    while len(down) < steps:
        gaining = next((v for v in below if blocks[v] > best and (not down or v < down[-1][0])), None)
        if gaining is None:
            break
        best = blocks[gaining]
        down.append((gaining, best))
    return down


def last_kept(values: list, blocks: dict, active: int, before=None):
    """The largest value before the first that loses a block (values ascending, from the current
    one). `before(i)`: the value just below values[i] when the scan skips values (default: the
    previous value scanned)."""
    last = None
    for i, value in enumerate(values):
        if blocks[value] < active:
            return None if i == 0 else (before(i) if before else last)
        last = value
    return last


# A configuration on every architecture, with its occupancy result.
CASES = st.tuples(
    st.sampled_from(ARCHS),
    st.builds(
        LaunchConfig,
        registers=st.integers(0, 255),
        block_size=st.integers(1, 1024),
        static_shared_mem=st.sampled_from([0, 100, 4096, 20000, 50000]),
        dynamic_shared_mem=st.sampled_from([0, 1, 3000, 40000, 100000]),
        carveout=st.sampled_from([-1, 0, 25, 60, 100]),
        opt_in=st.booleans(),
        barriers=st.integers(0, 16),
        max_threads_per_block=st.one_of(st.none(), st.integers(1, 1024)),
    ),
).map(lambda case: (case[0], case[1], occupancy(*case)))


@settings(max_examples=250, deadline=None)
@given(CASES)
def test_register_cliff_equals_a_full_scan(case):
    arch, kernel, result = case
    cliff = register_cliff(result)
    if kernel.registers > arch.max_registers_per_thread:  # cannot launch; the scan's domain ends at the maximum
        assert cliff.headroom is None and all(s.value < kernel.registers for s in cliff.down)
        return
    values = list(range(0, arch.max_registers_per_thread + 1))
    blocks = {r: occupancy(arch, kernel._replace(registers=r)).active_blocks_per_sm for r in values}
    active = result.active_blocks_per_sm
    assert [(s.value, s.blocks_per_sm) for s in cliff.down] == scanned_steps(blocks, kernel.registers, active)
    for step in cliff.down:
        assert step == (step.value, step.blocks_per_sm, occupancy(arch, kernel._replace(registers=step.value)).occupancy)
    last = last_kept(values[kernel.registers :], blocks, active)
    assert cliff.headroom == (None if last in (None, arch.max_registers_per_thread) else last - kernel.registers)


@settings(max_examples=250, deadline=None)
@given(CASES)
def test_shared_mem_cliff_equals_a_full_scan(case):
    arch, kernel, result = case
    cliff = shared_mem_cliff(result)
    total, unit = kernel.static_shared_mem + kernel.dynamic_shared_mem, arch.shared_mem_allocation_unit
    ceiling = shared_mem_ceiling(arch, kernel.opt_in)
    make = lambda size: with_total_shared_mem(kernel, size)  # noqa: E731
    active = result.active_blocks_per_sm
    # Down steps are searched in allocation units below the current total.
    below = {size: occupancy(arch, make(size)).active_blocks_per_sm for size in [*range(0, total, unit), total]}
    assert [(s.value, s.blocks_per_sm) for s in cliff.down] == (scanned_steps(below, total, active) if total else [])
    if total > ceiling:  # over the per-block limit already: no headroom to speak of
        assert cliff.headroom is None
        return
    # Headroom is searched byte by byte; blocks only change where an allocation unit is crossed,
    # so scanning the unit boundaries and the ceiling finds the same last byte.
    edges = sorted(
        {total, ceiling} | {b for b in range(total - total % unit, ceiling + 1, unit) for b in (b, b + 1) if total <= b <= ceiling}
    )
    blocks = {b: occupancy(arch, make(b)).active_blocks_per_sm for b in edges}
    last = last_kept(edges, blocks, active, before=lambda i: edges[i] - 1)
    assert cliff.headroom == (None if last in (None, ceiling) else last - total)


@settings(max_examples=250, deadline=None)
@given(CASES)
def test_best_carveout_equals_a_full_scan(case):
    arch, kernel, result = case
    best = best_carveout(result)
    if arch.shared_mem_model != "carveout" or not result.launchable:
        assert best is None
        return
    scan = {p: occupancy(arch, kernel._replace(carveout=p)) for p in range(101)}
    most = max(r.active_blocks_per_sm for r in scan.values())
    if most <= result.active_blocks_per_sm:
        assert best is None
    else:
        first = min(p for p, r in scan.items() if r.active_blocks_per_sm == most)
        assert best == (first, most, scan[first].occupancy)


def test_the_scans_cover_cliffs_that_exist():
    # The sweeps above are only as good as the cases they meet: make sure each kind appears.
    arch = shipped_catalog().resolve("sm_90").arch
    result = occupancy(arch, LaunchConfig(202, 256))
    assert [s.value for s in register_cliff(result).down] == [128, 80]
    result = occupancy(arch, LaunchConfig(registers=32, block_size=256, static_shared_mem=0, dynamic_shared_mem=60000, opt_in=True))
    assert shared_mem_cliff(result).down and shared_mem_cliff(result).headroom is not None
    result = occupancy(arch, LaunchConfig(registers=32, block_size=256, static_shared_mem=0, dynamic_shared_mem=40000, carveout=25))
    assert best_carveout(result) is not None


def test_fermi_preferring_l1_can_regain_blocks_as_the_block_grows():
    # 16 KB of shared memory per SM while a block fits, 48 KB once it does not: blocks per SM
    # go 2 (<= 8 KB), 1 (<= 16 KB), 2 again (<= 24 KB). The first loss is what headroom means.
    fermi = shipped_catalog().resolve("sm_20").arch
    result = occupancy(fermi, LaunchConfig(registers=0, block_size=1, static_shared_mem=4096, dynamic_shared_mem=3000, carveout=0))
    assert result.active_blocks_per_sm == 2
    assert shared_mem_cliff(result).headroom == 8192 - 7096
    grown = occupancy(
        fermi, LaunchConfig(registers=0, block_size=1, static_shared_mem=4096, dynamic_shared_mem=16000, carveout=0)
    )  # in the 48 KB split, 2 blocks
    assert grown.active_blocks_per_sm == 2
    cliff = shared_mem_cliff(grown)
    assert [(s.value, s.blocks_per_sm) for s in cliff.down] == [(5376, 3), (4096, 4)]


@settings(max_examples=250, deadline=None)
@given(CASES)
def test_register_caps_are_where_a_full_scan_changes_blocks(case):
    """frontier compiles at these caps: every register count below the kernel's where one register
    more loses a block, by the full engine."""
    from tuneadvise.advisor.engine.whatif import register_caps

    arch, kernel, result = case
    if not result.launchable or kernel.registers > arch.max_registers_per_thread:
        return
    blocks = {r: occupancy(arch, kernel._replace(registers=r)).active_blocks_per_sm
              for r in range(1, kernel.registers + 1)}
    assert register_caps(result) == tuple(r for r in range(kernel.registers - 1, 0, -1) if blocks[r] > blocks[r + 1])


@settings(max_examples=250, deadline=None)
@given(st.sampled_from(ARCHS), st.integers(1, 1024), st.integers(1, 32))
def test_bounds_register_cap_is_the_most_registers_that_keep_min_blocks(arch, threads, min_blocks):
    """__launch_bounds__(threads, min_blocks): the largest count at which the full engine keeps
    min_blocks resident (registers alone limiting), and one more loses them."""
    from tuneadvise.advisor.engine.whatif import bounds_register_cap

    cap = bounds_register_cap(arch, threads, min_blocks)

    def register_blocks(registers):
        return occupancy(arch, LaunchConfig(registers=registers, block_size=threads)).block_limits["registers"]

    if cap:
        assert register_blocks(cap) >= min_blocks
    if cap < arch.max_registers_per_thread:
        assert register_blocks(cap + 1) < min_blocks



def scanned_most_total(arch, static: int, carveout: int, opt_in: bool, wanted: int):
    """The largest total below which every total keeps `wanted` blocks as far as shared memory goes,
    by the full engine at every place the answer can change (None if 0 bytes do not)."""
    kernel = LaunchConfig(registers=0, block_size=1, static_shared_mem=static, carveout=carveout, opt_in=opt_in)
    unit, reserved = arch.shared_mem_allocation_unit, arch.reserved_shared_mem_per_block
    top = max(arch.shared_mem_per_sm, arch.shared_mem_per_block_optin or 0, static) + 2 * unit
    # The allocation (total + reserved, rounded up) grows at these totals; the split changes at the
    # static part; the per-block and opt-in limits bite one byte past them.
    changes = {total + 1 for total in range(-reserved % unit, top, unit)}
    changes |= {static, arch.shared_mem_per_block + 1, (arch.shared_mem_per_block_optin or 0) + 1}
    last = None
    for total in sorted({0} | {c for c in changes if 0 < c <= top}):
        result = occupancy(arch, with_total_shared_mem(kernel, total))
        shared = result.block_limits["shared_memory"]  # None: unlimited
        if not result.launchable or (shared is not None and shared < wanted):
            return None if total == 0 else total - 1
        last = total
    return last


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(ARCHS), st.sampled_from([0, 1, 100, 4096, 20000, 48 * 1024, 50000, 100000, 300000]),
       st.sampled_from([-1, 0, 1, 25, 33, 60, 100]), st.booleans(), st.integers(1, 40))
def test_most_total_shared_mem_for_equals_a_scan(arch, static, carveout, opt_in, wanted):
    from tuneadvise.advisor.engine.occupancy import shared_mem_preference
    from tuneadvise.advisor.engine.whatif import most_total_shared_mem_for

    if arch.shared_mem_model == "cache-config" and shared_mem_preference(arch, carveout) < arch.shared_mem_per_sm:
        return  # blocks can rise again as the block grows there: the cliff scans instead
    assert most_total_shared_mem_for(arch, static, carveout, opt_in, wanted) == \
        scanned_most_total(arch, static, carveout, opt_in, wanted)


@settings(max_examples=250, deadline=None)
@given(CASES)
def test_block_size_table_equals_the_full_engine_at_every_block_size(case):
    from tuneadvise.advisor.engine.whatif import block_size_table

    arch, kernel, result = case
    limit = min(arch.max_threads_per_block, kernel.max_threads_per_block or arch.max_threads_per_block)
    expected = []
    for block in range(arch.warp_size, limit + 1, arch.warp_size):
        full = occupancy(arch, kernel.replace(block_size=block, max_threads_per_block=None))
        expected.append((block, full.active_blocks_per_sm, full.occupancy))
    assert [tuple(step) for step in block_size_table(result)] == expected
