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
from .ncu_fixtures import EXPORTS, FIXTURES, PROGRAMS, SECTION_EXPORTS, launch_log, launches

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


@pytest.mark.parametrize("name", EXPORTS + SECTION_EXPORTS)
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


PRINTED = 0.5  # points: ncu prints two decimals, and its achieved figure is sampled


def test_every_printed_bound_holds_on_every_recorded_launch():
    """A bound the tool prints must hold on every launch Nsight Compute recorded (both sets of
    exports, 1,812 launches): each finding's `bound` against the launch's achieved
    occupancy, within half a point."""
    printed = checked = 0
    for launch in all_launches(EXPORTS + SECTION_EXPORTS):
        measured = measure(launch)
        achieved = launch.metrics["achieved_occupancy"]
        checked += 1
        for finding in profiled_findings(measured):
            if "bound" in finding.details:
                assert achieved <= finding.details["bound"] + PRINTED, (finding.code, launch.kernel, finding.message)
                printed += 1
            assert "occupancy on those is at most" not in finding.message or "bound" in finding.details
    assert checked > 1800 and printed > 800, (checked, printed)


def test_under_ten_microseconds_no_bound_is_printed_as_the_recordings_break_it():
    """The sweep's 2 us launches of 4 blocks exceed the breadth-first bound by up to 29 points
    (launch and ramp dominate): the layout's bound holds only on launches of 10 us or more, or of
    unknown duration, and TA002 prints it only there."""
    broken = []
    for launch in all_launches(EXPORTS + SECTION_EXPORTS):
        measured = measure(launch)
        achieved, duration = launch.metrics["achieved_occupancy"], launch.metrics.get("duration_ns")
        over = achieved - launch_shape(measured).busy_sm_bound
        if duration is not None and duration < 10_000:
            broken.append(over)
        else:
            assert over <= PRINTED, (launch.kernel, launch.launch_id, over)
    assert max(broken) > 20  # the recordings that made the rule


def test_the_tail_claims_no_occupancy_bound():
    """Achieved occupancy is averaged over the cycles each SM was active: a tail's idle SMs do not
    lower it (11 of 11 'at most' figures of the old tail rule were under what was achieved)."""
    tails = [f for launch in all_launches(PROGRAMS) for f in profiled_findings(measure(launch)) if f.code == "TA003"]
    assert len(tails) > 40
    assert all("bound" not in f.details and "%" not in f.message for f in tails)


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
            assert f"last wave of {grid - wave} block{'s' if grid - wave > 1 else ''} " in next(
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


def with_metrics(launch, **metrics):
    return type(launch)(**{**launch.__dict__, "metrics": {**launch.metrics, **metrics}})


def ta004(launch) -> list:
    return [f for f in profiled_findings(measure(launch)) if f.code == "TA004"]


def test_short_lived_uniform_blocks_are_named_not_called_unequal_work():
    """CuPy's elementwise kernels: equal work per thread, 128-thread blocks of about a microsecond."""
    uniform = [launch for launch in launches("ncu_cupy") if launch.kernel.startswith(("cupy_add", "cupy_multiply"))]
    found = [f for launch in uniform for f in ta004(launch)]
    assert found and all(f.details["cause"] == "short_blocks" for f in found)
    assert all("unequal" not in f.message and "blocks live about" in f.message for f in found)


def test_the_scheduler_figures_tell_issue_bound_from_imbalance():
    launch = next(launch for launch in launches("ncu_imbalance") if launch.kernel.startswith("early_exit")
                  and ta004(launch))
    assert ta004(launch)[0].details["cause"] == "cannot_tell"
    assert "cannot tell" in ta004(launch)[0].message
    busy = ta004(with_metrics(launch, issued_warps_per_scheduler=0.95))[0]
    idle = ta004(with_metrics(launch, issued_warps_per_scheduler=0.2))[0]
    assert busy.details["cause"] == "issue_bound" and "0.95" in busy.message
    assert idle.details["cause"] == "imbalance" and "unequal work" in idle.message


def test_a_short_kernel_is_launch_overhead_not_blocks_ending_early():
    for launch in all_launches(PROGRAMS):
        found = codes(launch)
        if "TA005" in found:
            assert "TA004" not in found, launch.kernel


def test_waves_of_a_cluster_launch_are_counted_in_clusters():
    """ncu_smem's paired (clusters of 2) and clustered (4 and 8) launches: a wave is the report's Max
    Active Clusters x the cluster size, and the grid rules speak in clusters."""
    clustered = [launch for launch in launches("ncu_smem") if launch.metrics.get("cluster_size", 1) > 1]
    assert len(clustered) == 4
    for launch in clustered:
        shape = launch_shape(measure(launch))
        size = int(launch.metrics["cluster_size"])
        assert shape.cluster_size == size
        assert shape.slots == launch.metrics["max_active_clusters"] * size
        for finding in profiled_findings(measure(launch)):
            if finding.code in ("TA002", "TA003"):
                assert f"{launch.grid[0] // size} clusters ({launch.grid[0]} blocks)" in finding.message


def test_a_grid_spread_unevenly_under_one_wave_is_the_grid_not_early_ends():
    """ncu_smem's staged kernel: 269 blocks on 132 SMs (two or three each), achieved about 23.5% of
    37.5%: the grid's spread explains it (TA002), not blocks ending early (TA004)."""
    staged = [launch for launch in launches("ncu_smem") if launch.kernel.startswith("staged")
              and launch.grid[0] == 269 and launch.metrics["theoretical_occupancy"] == 37.5]
    assert len(staged) == 3
    for launch in staged:
        found = codes(launch)
        assert "TA002" in found and "TA004" not in found, found


# -- the six-section re-recordings (tests/fixtures/ncu/sections) -------------------------------

def clusters_answered() -> dict:
    """The driver's cudaOccupancyMaxActiveClusters for each shape the cluster program launched."""
    answers = {}
    for line in (FIXTURES / "sections" / "ncu_clusters.max_active_clusters.txt").read_text().splitlines():
        fields = dict(item.split("=") for item in line.split())
        answers[(int(fields["block"]), int(fields["dynamic"]), int(fields["cluster"]))] = \
            int(fields["max_active_clusters"])
    return answers


def test_cluster_waves_are_the_drivers_and_the_rules_count_them():
    """ncu_clusters launches clusters of 1, 2, 4 and 8 at four shapes on grids of half a wave, one
    wave less a cluster, one wave, one wave and a cluster, and two waves (waves of clusters, from
    the driver's cudaOccupancyMaxActiveClusters). The wave is the report's Max Active Clusters x the
    size, equal to the driver's answer; whole waves get no grid finding, a wave and one cluster is
    a tail."""
    answers = clusters_answered()
    recorded = launches("sections/ncu_clusters")
    assert len(recorded) == 80
    for launch, logged in zip(recorded, launch_log("sections/ncu_clusters")):
        size = logged["cluster"]
        wave_clusters = answers[(logged["block"], logged["dynamic"], size)]
        measured = measure(launch)
        assert launch.metrics["max_active_clusters"] == wave_clusters
        shape = launch_shape(measured)
        assert shape.slots == wave_clusters * size
        found = codes(launch)
        clusters = logged["grid"] // size
        if clusters in (wave_clusters, 2 * wave_clusters, wave_clusters - 1):
            assert not found & {"TA002", "TA003"}, (logged, found)
        if clusters == wave_clusters + 1:
            assert "TA003" in found, (logged, found)


def test_the_cluster_model_equals_the_h200_drivers_answers():
    """The engine's cluster occupancy over the H100's nominal GPC layout, for each shape recorded
    on the H200 (same GPC layout): equal to its driver's cudaOccupancyMaxActiveClusters, 16 of 16."""
    from tuneadvise.advisor.engine.clusters import cluster_occupancy
    from tuneadvise.specs.resolve import resolve

    layout = list(resolve("h100-sxm").product.get("gpc_sms"))
    seen = {}
    for launch, logged in zip(launches("sections/ncu_clusters"), launch_log("sections/ncu_clusters")):
        key = (logged["block"], logged["dynamic"], logged["cluster"])
        measured = measure(launch)
        seen[key] = cluster_occupancy(measured.arch, layout, measured.result.active_blocks_per_sm,
                                      logged["cluster"]).clusters
    assert seen == clusters_answered()


def test_the_causes_tell_apart_on_the_six_section_recordings():
    """Uniform spin kernels at one wave: issue-bound schedulers (0.9 and more issued per cycle);
    one_warp_works (one warp of 16 busy): not issue-bound, so unequal work; CuPy's elementwise
    kernels: microsecond blocks."""
    def causes(name, prefix):
        return {f.details["cause"] for launch in launches(name) if launch.kernel.startswith(prefix)
                for f in profiled_findings(measure(launch)) if f.code == "TA004"}

    assert causes("sections/ncu_tails", "spin") == {"issue_bound"}
    assert causes("sections/ncu_imbalance", "one_warp_works") == {"imbalance"}
    assert causes("sections/ncu_cupy", "cupy_add") | causes("sections/ncu_cupy", "cupy_multiply") == {"short_blocks"}
    # and the figures it reads are the report's
    spin = next(launch for launch in launches("sections/ncu_tails") if launch.kernel.startswith("spin"))
    assert measure(spin).figures.scheduler.issued_warps == spin.metrics["issued_warps_per_scheduler"]
