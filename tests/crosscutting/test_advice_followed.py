"""Advice is judged by what happens when it is followed: apply every suggestion and every what-if
step the tool gives, run the rules again, and no rule may object to the very thing it was told to
do (one cause, one finding; advice one rule gives is not flagged by another)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.engine import whatif
from tuneadvise.advisor.engine.occupancy import occupancy
from tuneadvise.advisor.launch import LaunchConfig
from tuneadvise.advisor.queries.suggest import shared_mem_function, suggest_query
from tuneadvise.advisor.rules import check_occupancy
from tuneadvise.specs.resolve import resolve

PRODUCTS = ("h100-sxm", "v100", "rtx-4090", "a100-sxm4-80gb")
OBJECTIONS = ("warning", "error")
# The rules that speak of a resource a step changes: a new warning or error among them objects to it.
CARVEOUT_RULES = ("TA401", "TA402", "TA403")
CONCERNS = {"registers": ("TA1", "TA3", "TA5"), "shared_memory": ("TA1", "TA3", "TA4")}


def launch(**values) -> LaunchConfig:
    return LaunchConfig.from_mapping(values)


def codes(resolved, config: LaunchConfig) -> dict:
    return {f.code: f for f in check_occupancy(resolved, occupancy(resolved.arch, config))}


@settings(max_examples=200, deadline=None)
@given(product=st.sampled_from(PRODUCTS), registers=st.integers(16, 255), shared=st.integers(0, 48 * 1024),
       barriers=st.integers(0, 2))
def test_a_suggested_block_and_grid_raise_no_grid_or_shape_finding(product, registers, shared, barriers):
    """`suggest` names a block size and the grid that fills the device: launched as told, no grid
    rule (TA7xx, TA702 included) and no block-shape warning may fire."""
    resolved = resolve(product)
    kernel = launch(registers=registers, block_size=32, barriers=barriers)
    document = suggest_query(resolved, kernel, shared_mem_function(shared))
    if document["errors"] or not document["block_size"]:
        return
    told = kernel.replace(block_size=document["block_size"], dynamic_shared_mem=document["dynamic_shared_mem"],
                          grid_size=document["min_grid_size"])
    found = codes(resolved, told)
    assert not [c for c in found if c.startswith("TA7")], (document["block_size"], document["min_grid_size"], found)
    assert not [c for c, f in found.items() if c.startswith("TA2") and f.severity in OBJECTIONS], found


def test_the_reported_suggestion_is_not_flagged():
    """`suggest --arch h100-sxm -r 72 -s 24K` recommends 896 threads on a 132-block grid: one block
    per SM is all that fits, so TA702's second resident block cannot exist."""
    resolved = resolve("h100-sxm")
    kernel = launch(registers=72, block_size=32, shared_mem=24 * 1024)
    document = suggest_query(resolved, kernel, shared_mem_function(0))
    assert (document["block_size"], document["min_grid_size"]) == (896, 132)
    assert "TA702" not in codes(resolved, kernel.replace(block_size=896, grid_size=132))


@settings(max_examples=200, deadline=None)
@given(product=st.sampled_from(PRODUCTS), registers=st.integers(16, 255),
       block=st.integers(1, 32).map(lambda n: 32 * n), shared=st.integers(0, 48 * 1024),
       grid=st.integers(1, 20_000))
def test_every_what_if_step_followed_is_not_objected_to(product, registers, block, shared, grid):
    """TA301's steps (registers, shared memory), applied: the promised blocks per SM, no new
    warning or error from a rule on that resource, and no step back the other way."""
    resolved = resolve(product)
    config = launch(registers=registers, block_size=block, shared_mem=shared, grid_size=grid)
    result = occupancy(resolved.arch, config)
    if not result.launchable:
        return
    before = codes(resolved, config)
    limiter = before.get("TA301")
    for step in (limiter.details["next_steps"] if limiter else []):
        if step["resource"] == "registers":
            after = config.replace(registers=step["value"])
        else:
            after = whatif.with_total_shared_mem(config, step["value"])
        assert occupancy(resolved.arch, after).active_blocks_per_sm == step["blocks_per_sm"]
        found = codes(resolved, after)
        new = {c for c, f in found.items() if f.severity in OBJECTIONS and c not in before
               and c.startswith(CONCERNS[step["resource"]])}
        assert not new, (step, [found[c].message for c in new])
        # and the limiter never sends the resource back the other way
        again = found.get("TA301")
        for later in (again.details["next_steps"] if again else []):
            if later["resource"] == step["resource"]:
                assert later["value"] < step["value"], (step, later)


@settings(max_examples=100, deadline=None)
@given(product=st.sampled_from(PRODUCTS), registers=st.integers(16, 255),
       block=st.integers(1, 32).map(lambda n: 32 * n), grid=st.integers(1, 20_000), barriers=st.integers(0, 1))
def test_a_grid_rule_followed_is_not_objected_to(product, registers, block, grid, barriers):
    """TA702's and TA703's grids, launched: the same rule is silent, and the other grid rules raise
    no warning on them."""
    resolved = resolve(product)
    config = launch(registers=registers, block_size=block, grid_size=grid, barriers=barriers)
    found = codes(resolved, config)
    targets = []
    if "TA702" in found:
        targets.append(found["TA702"].details["aim"])
    if "TA703" in found and found["TA703"].details.get("full_waves"):
        per_wave = found["TA703"].details["blocks_per_wave"]
        targets.append((found["TA703"].details["full_waves"] + 1) * per_wave)
    for target in targets:
        again = codes(resolved, config.replace(grid_size=target))
        assert not [c for c, f in again.items() if c.startswith("TA7") and f.severity in OBJECTIONS], \
            (target, {c: f.message for c, f in again.items()})
        assert "TA702" not in again or target < 2 * (resolved.product.get("sm_count") or 0)


# -- grid rules count clusters ---------------------------------------------------------------

def test_grid_rules_count_clusters():
    """`occupancy --arch h100-sxm -r 128 -b 256 -d 64K --opt-in --cluster-size 4`: 62 clusters (248
    blocks) are resident at once. A grid of 248 is one whole wave; 264 (66 clusters) is two waves."""
    resolved = resolve("h100-sxm")
    config = launch(registers=128, block_size=256, dynamic_shared_mem="64K", opt_in=True, cluster_size=4)
    whole = codes(resolved, config.replace(grid_size=248))
    assert not {"TA701", "TA702", "TA703"} & set(whole), {c: f.message for c, f in whole.items()}
    over = codes(resolved, config.replace(grid_size=264))
    assert over["TA703"].details["blocks_per_wave"] == 248 and over["TA703"].details["cluster_size"] == 4
    assert "62 clusters (248 blocks)" in over["TA703"].message and "4 clusters (16 blocks)" in over["TA703"].message
    assert "TA702" not in over


def test_a_grid_just_under_a_wave_is_not_a_warning():
    """0.97 of a wave: 3% of the slots empty, under TA703's 5%."""
    resolved = resolve("h100-sxm")
    config = launch(registers=32, block_size=256)
    assert "TA703" not in codes(resolved, config.replace(grid_size=1024))  # 1024 of 1056
    half = codes(resolved, config.replace(grid_size=528))["TA703"]
    assert "less work per block" in half.message and "more work per block" not in half.message


@settings(max_examples=150, deadline=None)
@given(product=st.sampled_from(PRODUCTS), registers=st.integers(16, 128),
       block=st.integers(1, 32).map(lambda n: 32 * n), dynamic=st.integers(0, 160 * 1024),
       carveout=st.sampled_from([None, 0, 25, 50, 75, 100]))
def test_a_carveout_step_followed_is_not_objected_to(product, registers, block, dynamic, carveout):
    """TA301's carveout (the best preference for a shared-memory limit), set: the blocks it promised,
    and no rule on the carveout itself (TA401-TA403) objects to it."""
    resolved = resolve(product)
    values = {"registers": registers, "block_size": block, "dynamic_shared_mem": dynamic,
              "opt_in": dynamic > 48 * 1024}
    if carveout is not None:
        values["carveout"] = carveout
    config = launch(**values)
    result = occupancy(resolved.arch, config)
    if not result.launchable:
        return
    step = whatif.best_carveout(result)
    if step is None:
        return
    after = config.replace(carveout=step.value)
    assert occupancy(resolved.arch, after).active_blocks_per_sm == step.blocks_per_sm
    found = codes(resolved, after)
    assert not [c for c, f in found.items() if c in CARVEOUT_RULES and f.severity in OBJECTIONS], \
        (step, {c: f.message for c, f in found.items()})
    assert "TA402" not in found and "TA403" not in found


def test_every_step_on_every_recorded_launch_followed_is_not_objected_to():
    """The same on real launches (tests/fixtures/ncu): each profiled launch's TA301 steps, from the
    program's preference, applied and linted again."""
    from tuneadvise.advisor.measured import as_programmed, measure
    from tuneadvise.specs.records import Resolved

    from ..advisor.ncu_fixtures import PROGRAMS, SECTION_EXPORTS, launches

    followed = 0
    for name in PROGRAMS + SECTION_EXPORTS:
        for recorded in launches(name):
            measured = measure(recorded)
            result = as_programmed(measured)
            resolved = Resolved(measured.arch)
            before = {f.code: f for f in check_occupancy(resolved, result)}
            limiter = before.get("TA301")
            for step in (limiter.details["next_steps"] if limiter else []):
                config = result.kernel
                after = config.replace(registers=step["value"]) if step["resource"] == "registers" else \
                    whatif.with_total_shared_mem(config, step["value"])
                assert occupancy(measured.arch, after).active_blocks_per_sm == step["blocks_per_sm"]
                found = codes(resolved, after)
                assert not [c for c, f in found.items() if f.severity in OBJECTIONS and c not in before
                            and c.startswith(CONCERNS[step["resource"]])], (recorded.kernel, step)
                followed += 1
    assert followed > 100, followed
