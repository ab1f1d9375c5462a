"""Profiled launches beside the engine: for each launch of an Nsight Compute
export, the engine recomputes the theoretical occupancy and every block limit
from the launch's own figures (registers, static/dynamic/driver shared memory,
the shared-memory configuration the driver chose, block, grid, cluster, the
compute capability and SM count), each disagreement with the report named;
the achieved occupancy and waves per SM go beside it, and the gap between
theoretical and achieved is explained with numbers where the launch's shape
explains it (advisor/rules/families/ta0_measured.py words the findings)."""

from __future__ import annotations

import math
from typing import NamedTuple

from ..specs.errors import InputError
from ..specs.names import UnknownArchError
from ..specs.records import Arch
from ..specs.resolve import resolve_arch
from .engine.limits import CARVEOUT_DEFAULT, shared_mem_preference
from .engine.occupancy import Occupancy, grid_waves, occupancy
from .engine.shared_config import SharedMemConfig, predicted_config_of
from .launch import LaunchConfig
from .measured_figures import LaunchFigures, launch_figures
from .readers.ncu import ProfiledLaunch

# Report figure -> engine block-limit name (cudaOccLimitingFactor order).
BLOCK_LIMITS = {
    "block_limit_warps": "warps", "block_limit_registers": "registers",
    "block_limit_shared_mem": "shared_memory", "block_limit_sm": "blocks", "block_limit_barriers": "barriers",
}
PERCENT_PRINTED = 0.005  # ncu prints percentages and waves to two decimals
REQUIRED = ("registers", "static_shared_mem", "dynamic_shared_mem", "shared_mem_config_size", "sm_count")


class Disagreement(NamedTuple):
    figure: str  # the report's metric key
    report: float
    engine: float


class Measured(NamedTuple):
    """One profiled launch: the engine's figures from its launch, and the report's."""
    launch: ProfiledLaunch
    arch: Arch
    config: LaunchConfig
    result: Occupancy  # the engine's, under the configuration the driver chose
    waves_per_sm: float | None  # the engine's: grid / (resident blocks x SMs)
    barriers: int | None  # barriers per block, taken from the report's barrier limit (the export lacks the count)
    predicted_config: SharedMemConfig | None  # the driver's choice as predicted with no carveout preference
    disagreements: tuple[Disagreement, ...]
    figures: LaunchFigures  # the report's throughput, warp-state, scheduler and memory figures (or which it lacks)

    @property
    def report(self) -> dict:
        return self.launch.metrics


class MeasuredError(InputError):
    """A launch the engine cannot take: a figure missing, or an unknown compute capability.
    `cause` is the reason without the launch, the same for every launch it stops."""

    def __init__(self, message: str, cause: str = ""):
        super().__init__(message)
        self.cause = cause or message


def arch_of(launch: ProfiledLaunch) -> Arch:
    try:
        return resolve_arch(launch.compute_capability)
    except UnknownArchError:
        cause = (f"compute capability {launch.compute_capability[:8]!r} is not one the specs know"
                 if launch.compute_capability else "the export has no CC column (the compute capability the "
                                                   "engine needs): export with ncu's default columns")
        raise MeasuredError(f"{launch.kernel[:60]} (launch {launch.launch_id}): {cause}", cause) from None


def carveout_for_config(arch: Arch, config: float) -> int | None:
    """The smallest carveout percentage under which the engine configures `config` bytes (the
    report's size, printed possibly rounded to 10 bytes), or None if none does."""
    for percent in range(101):
        if abs(shared_mem_preference(arch, percent) - config) <= 10:
            return percent
    return None


def barriers_for_limit(arch: Arch, limit: float | None) -> int | None:
    """The barrier count per block that gives the report's barrier limit (the smallest, or None)."""
    if limit is None or not arch.barriers_per_block_slot:
        return None
    available = arch.max_blocks_per_sm * arch.barriers_per_block_slot
    return next((n for n in range(1, 17) if available // n == limit), None)


def profiled_launch_config(launch: ProfiledLaunch, arch: Arch, carveout: int, barriers: int | None) -> LaunchConfig:
    """The launch's figures through the one parser (LaunchConfig.from_mapping), which refuses
    values no architecture allows (a hand-edited or corrupt export) with an InputError."""
    m = launch.metrics
    static = _likely_size(m["static_shared_mem"], launch.rounding.get("static_shared_mem", 0))
    dynamic = _likely_size(m["dynamic_shared_mem"], launch.rounding.get("dynamic_shared_mem", 0))
    cluster = int(m.get("cluster_size", 0)) or None
    return LaunchConfig.from_mapping({
        "registers": _whole(m["registers"]), "block_size": list(launch.block), "shared_mem": static,
        "dynamic_shared_mem": dynamic, "carveout": carveout, "opt_in": static + dynamic > arch.shared_mem_per_block,
        "barriers": barriers or 1, "grid_size": math.prod(launch.grid), "sm_count": _whole(m["sm_count"]),
        "cluster_size": cluster})


def _whole(value: float) -> int | float:
    """An integral figure as an int; anything else as it is, for the parser to refuse."""
    return int(value) if float(value).is_integer() else value


def _likely_size(printed: float, rounding: float) -> int:
    """A byte count ncu printed in a scaled unit (4.10 Kbyte: 4095..4105 bytes): the multiple of
    16 bytes within the rounding where there is one, as shared memory sizes almost always are;
    the figures at both ends of the rounding are still checked (_rounded_ends)."""
    if rounding:
        nearest = int(round(printed / 16)) * 16
        if abs(nearest - printed) <= rounding:
            return nearest
    return int(round(printed))


def measure(launch: ProfiledLaunch) -> Measured:
    """The engine beside one profiled launch."""
    missing = [key for key in REQUIRED if key not in launch.metrics]
    if missing:
        cause = f"lacks {', '.join(missing)}: profile with --section Occupancy --section LaunchStats"
        raise MeasuredError(f"{launch.kernel[:60]} (launch {launch.launch_id}) {cause}", cause)
    arch = arch_of(launch)
    carveout = carveout_for_config(arch, launch.metrics["shared_mem_config_size"])
    if carveout is None:
        cause = f"shared memory configuration {launch.metrics['shared_mem_config_size']:.0f} bytes is none of {arch.sm}'s"
        raise MeasuredError(f"{launch.kernel[:60]} (launch {launch.launch_id}): {cause}", cause)
    barriers = barriers_for_limit(arch, launch.metrics.get("block_limit_barriers"))
    try:
        config = profiled_launch_config(launch, arch, carveout, barriers)
    except InputError as exc:
        raise MeasuredError(f"{launch.kernel[:60]} (launch {launch.launch_id}): {exc}", str(exc)) from None
    result = occupancy(arch, config)
    within = [result] + [occupancy(arch, c) for c in _rounded_ends(launch, config)]
    return Measured(launch, arch, config, result, _waves(result, config), barriers,
                    _prediction(arch, result), tuple(_disagreements(launch, arch, within, config)),
                    launch_figures(launch))


def _rounded_ends(launch: ProfiledLaunch, config: LaunchConfig) -> list[LaunchConfig]:
    """Where the export rounded the shared memory sizes (a scaled unit: 4.10 Kbyte), the launch at
    both ends of what the printed figures allow: a report figure between theirs agrees."""
    static = launch.rounding.get("static_shared_mem", 0)
    dynamic = launch.rounding.get("dynamic_shared_mem", 0)
    if not static and not dynamic:
        return []
    ends = []
    for sign in (-1, 1):
        ends.append(config._replace(static_shared_mem=max(0, math.ceil(config.static_shared_mem + sign * static)),
                                    dynamic_shared_mem=max(0, math.ceil(config.dynamic_shared_mem + sign * dynamic))))
    return ends


def _waves(result: Occupancy, config: LaunchConfig) -> float | None:
    if not config.sm_count or config.grid_size is None:
        return None
    return grid_waves(result, config.grid_size, config.sm_count)


def as_programmed(measured: Measured) -> Occupancy:
    """The engine's result under the program's own carveout preference, which what-if advice must
    start from (not the configuration the driver picked for this launch): none, as the export
    does not record one, wherever no preference gives the report's blocks per SM; elsewhere the
    program evidently asked for the configuration the report shows, and that is kept."""
    result = measured.result
    if result.kernel.carveout == CARVEOUT_DEFAULT:
        return result
    unset = occupancy(measured.arch, measured.config._replace(carveout=CARVEOUT_DEFAULT))
    return unset if unset.active_blocks_per_sm == result.active_blocks_per_sm else result


def _prediction(arch: Arch, result: Occupancy) -> SharedMemConfig | None:
    """The configuration the driver picks with no carveout preference set (the export does not
    say which preference the program set)."""
    return predicted_config_of(result._replace(kernel=result.kernel._replace(carveout=CARVEOUT_DEFAULT)))


def _engine_figures(arch: Arch, result: Occupancy, config: LaunchConfig) -> dict[str, tuple[float, float]]:
    """The engine's value of each report figure, with the tolerance the report's printing allows."""
    figures = {key: (result.block_limits[name], 0) for key, name in BLOCK_LIMITS.items()
               if result.block_limits.get(name) is not None}
    figures["theoretical_warps"] = (result.active_warps_per_sm, 0)
    figures["theoretical_occupancy"] = (100 * result.occupancy, PERCENT_PRINTED)
    figures["driver_shared_mem"] = (arch.reserved_shared_mem_per_block, 10)
    waves = _waves(result, config)
    if waves is not None:
        figures["waves_per_sm"] = (waves, PERCENT_PRINTED)
    return figures


def _disagreements(launch: ProfiledLaunch, arch: Arch, within: list[Occupancy], config: LaunchConfig):
    """Report figures the engine does not reproduce: outside the engine's values at every end."""
    m = launch.metrics
    ends = [_engine_figures(arch, result, config) for result in within]
    for key, (engine, tolerance) in ends[0].items():
        if key not in m:
            continue
        values = [end[key][0] for end in ends if key in end]
        low, high = min(values) - tolerance - 1e-9, max(values) + tolerance + 1e-9
        if not low <= m[key] <= high:
            yield Disagreement(key, m[key], engine)


class LaunchShape(NamedTuple):
    """How a launch's grid lays out over the SMs in waves (a wave: the blocks resident at once; in
    clusters where the launch has them, from the report's Max Active Clusters), and the most
    occupancy that layout allows on the SMs holding blocks (the SMs whose active cycles Nsight
    Compute's achieved figure averages over)."""
    grid: int
    slots: int  # blocks in one full wave: resident blocks per SM x SMs, or resident clusters x cluster size
    sm_count: int
    full_waves: int
    last_wave_blocks: int  # blocks of the last, partial wave (0: none)
    last_wave_sms: int  # SMs the last wave reaches, at most
    # percent: under one wave (no clusters), blocks go out breadth first, so no SM holds more than
    # ceil(grid / SMs) of them; otherwise (blocks start as others end, clusters placed by GPC) the
    # theoretical occupancy is all that holds. Held to every recorded launch (tests/advisor/test_measured.py).
    busy_sm_bound: float
    cluster_size: int | None  # blocks per cluster, where the launch has clusters
    # percent, a model not a bound: the occupancy on busy SMs if every block lasted as long, the
    # blocks spread breadth first and each wave started when the last ended (recorded launches
    # exceed it where blocks start as others end). What the grid's shape explains of the gap.
    expected: float

    @property
    def waves(self) -> float:
        return self.grid / self.slots


def launch_shape(measured: Measured) -> LaunchShape | None:
    """The layout of the launch's grid over the SMs; None when the engine says nothing fits."""
    result, config = measured.result, measured.config
    blocks, sms, grid = result.active_blocks_per_sm, config.sm_count, config.grid_size
    if not blocks or not sms or not grid:
        return None
    cluster = config.cluster_size if config.cluster_size and config.cluster_size > 1 else None
    clusters = measured.report.get("max_active_clusters")
    slots = int(clusters) * cluster if cluster and clusters else blocks * sms
    full, rest = divmod(grid, slots)
    theoretical = 100 * result.occupancy
    block_share = result.warps_per_block / result.max_warps_per_sm * 100
    bound = expected = theoretical
    rest_sms = min(rest, sms)
    if cluster is None:
        if full == 0:
            bound = min(theoretical, -(-grid // sms) * block_share)
            expected = min(theoretical, grid / rest_sms * block_share)
        else:
            expected = min(theoretical, grid * block_share / (full * sms + rest_sms))
    return LaunchShape(grid, slots, sms, full, rest, rest_sms, bound, cluster, expected)


def profiled_findings(measured: Measured, selection=None, minimum: float | None = None) -> list:
    """The TA0xx findings on one profiled launch, worst first (and the config rules' are not here:
    lint adds them from the engine's result)."""
    from .rules import MeasuredContext, RuleSelection, finding_order, measured_findings

    context = MeasuredContext(measured, launch_shape(measured), minimum)
    findings = measured_findings(context, selection or RuleSelection())
    findings.sort(key=finding_order)
    return findings
