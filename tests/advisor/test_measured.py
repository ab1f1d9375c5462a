"""The engine beside real Nsight Compute reports: every theoretical figure and block limit of
509 recorded launches (9 programs, tests/fixtures/ncu) recomputed from the launch's own figures,
and the gap explanations held to what the programs were built to show."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.lint.profiled import measured_document
from tuneadvise.advisor.measured import MeasuredError, launch_shape, measure, profiled_findings
from tuneadvise.advisor.readers.ncu import METRICS, ProfiledLaunch

from ..probes.test_probes import engine_one_block_fewer
from .ncu_fixtures import EXPORTS, PROGRAMS, launches

COMPARED = ("block_limit_warps", "block_limit_registers", "block_limit_shared_mem", "block_limit_sm",
            "block_limit_barriers", "theoretical_warps", "theoretical_occupancy", "waves_per_sm")


def all_launches(names=EXPORTS):
    return [launch for name in names for launch in launches(name)]


def test_the_recordings_are_enough():
    programs = [launches(name) for name in PROGRAMS]
    assert len(programs) >= 8 and all(programs)
    assert sum(len(p) for p in programs) >= 60
    kernels = {launch.kernel for p in programs for launch in p}
    assert len(kernels) >= 30


@pytest.mark.parametrize("name", EXPORTS)
def test_every_figure_of_every_launch_is_recomputed(name):
    for launch in launches(name):
        measured = measure(launch)
        assert measured.disagreements == (), (launch.kernel, launch.launch_id, measured.disagreements)
        # every figure was there to compare: none of the comparisons passed by absence
        assert all(key in launch.metrics for key in COMPARED), launch.kernel


def test_an_engine_one_block_short_fails_the_fixture_test(monkeypatch):
    engine_one_block_fewer(monkeypatch)
    failing = [launch for launch in all_launches(PROGRAMS) if measure(launch).disagreements]
    assert failing == list(all_launches(PROGRAMS))


def test_a_grid_of_at_most_one_block_per_sm_achieves_the_bound():
    """Uniform blocks, one per SM at most: ncu's achieved figure (averaged over the SMs that hold
    blocks) is the warps of one block over the SM's, which the under-one-wave bound states."""
    checked = 0
    for launch in launches("ncu_tails"):
        shape = launch_shape(measure(launch))
        if launch.kernel.startswith("spin") and shape.grid <= shape.sm_count:
            assert launch.metrics["achieved_occupancy"] == pytest.approx(shape.busy_sm_bound, abs=1.5)
            checked += 1
    assert checked == 10


def test_under_one_wave_the_bound_holds_on_every_recorded_launch():
    checked = 0
    for launch in all_launches(PROGRAMS):
        measured = measure(launch)
        shape = launch_shape(measured)
        if shape.full_waves == 0 and not measured.config.cluster_size:
            assert launch.metrics["achieved_occupancy"] <= shape.busy_sm_bound + 0.5, launch.kernel
            checked += 1
    assert checked > 100


def codes(launch) -> set:
    return {f.code for f in profiled_findings(measure(launch))}


def test_explanations_of_the_tails_program():
    """ncu_tails launches each block size on grids of half the SMs, the SMs, one wave - 1, one wave,
    one wave + 1, 1.5 waves and 2 waves + a quarter of the SMs (tests/gpu/ncu_tails.cu)."""
    spins = [launch for launch in launches("ncu_tails") if launch.kernel.startswith("spin")]
    for launch in spins:
        shape = launch_shape(measure(launch))
        grid, wave = shape.grid, shape.slots
        found = codes(launch)
        if grid <= shape.sm_count and shape.busy_sm_bound <= 90:
            assert "TA002" in found, (grid, found)
        if grid == wave + 1 or grid == wave + wave // 2:
            assert "TA003" in found, (grid, found)
            assert f"last wave of {grid - wave} block(s)" in next(
                f.message for f in profiled_findings(measure(launch)) if f.code == "TA003")
        if grid in (wave - 1, wave):
            assert "TA002" not in found and "TA003" not in found, (grid, found)


def test_blocks_that_end_early_are_explained():
    """ncu_imbalance's early_exit launches 16 blocks per SM of which 1, 4 or 12 per SM work; the
    imbalanced kernel gives every 8th or 64th block 80 times the work; one_warp_works keeps one
    warp of 16 busy."""
    for launch in launches("ncu_imbalance"):
        name = launch.kernel.split("(")[0]
        if name in ("early_exit", "one_warp_works"):
            found = codes(launch)
            if launch.metrics["achieved_occupancy"] < 70:
                assert "TA004" in found, (name, found)
        if name == "imbalanced" and launch.metrics["achieved_occupancy"] < 70:
            assert "TA004" in codes(launch)


def test_short_kernels_are_named():
    tiny = [launch for launch in launches("ncu_imbalance") if launch.kernel.startswith("tiny")]
    assert len(tiny) == 9
    for launch in tiny:
        assert launch.metrics["duration_ns"] < 10_000  # as measured: a store per thread
        assert "TA005" in codes(launch)


def test_a_wrong_report_figure_is_a_finding():
    launch = launches("ncu_tails")[0]
    edited = type(launch)(**{**launch.__dict__, "metrics": {**launch.metrics, "block_limit_registers": 7.0}})
    found = [f for f in profiled_findings(measure(edited)) if f.code == "TA001"]
    assert len(found) == 1 and found[0].details["figure"] == "block_limit_registers"
    assert found[0].details["engine"] == launch.metrics["block_limit_registers"]


def test_waves_per_sm_beside_theoretical():
    for launch in launches("ncu_smem"):
        measured = measure(launch)
        assert math.isclose(measured.waves_per_sm, launch.metrics["waves_per_sm"], abs_tol=0.0051)  # ncu rounds to two decimals


figure = st.one_of(st.integers(-5, 300_000).map(float), st.floats(allow_nan=False, allow_infinity=False, width=32),
                   st.sampled_from([0.0, 1.0, 2.0**40, 1e300]))


@settings(max_examples=300, deadline=None)
@given(metrics=st.dictionaries(st.sampled_from(sorted(set(METRICS.values()))), figure, max_size=22),
       block=st.lists(st.integers(0, 5000), min_size=1, max_size=3),
       grid=st.lists(st.integers(0, 2**31), min_size=1, max_size=3),
       cc=st.sampled_from(["9.0", "8.0", "12.0", "7.5", "1.0", "", "x"]))
def test_hostile_figures_are_a_measured_error_or_an_answer(metrics, block, grid, cc):
    """Figures a hand-edited or corrupt export may hold: an answer, or one MeasuredError naming
    the launch, never another exception."""
    base = {"registers": 32.0, "static_shared_mem": 0.0, "dynamic_shared_mem": 0.0,
            "shared_mem_config_size": 32768.0, "sm_count": 132.0}
    launch = ProfiledLaunch(file="f.csv", line=1, process_id="1", process_name="p", launch_id=0, kernel="k",
                            block=tuple(block), grid=tuple(grid), compute_capability=cc,
                            metrics={**base, **metrics})
    try:
        measured = measure(launch)
    except MeasuredError:
        return
    profiled_findings(measured)
    measured_document(measured)
