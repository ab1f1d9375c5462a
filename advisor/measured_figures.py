"""What a profiled launch's export says about how it ran, beyond occupancy: the
Speed Of Light throughputs, the warp states, the schedulers and the memory
workload, one typed record per Nsight Compute section, each None when the
export lacks that section (`missing` names it, with the option that records it).
The figures are the report's as printed (percentages 0..100, cycles, warps,
bytes per second); nothing here is computed by the engine."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # the reader is needed to read an export, not to lay out its figures (lint's schema)
    from .readers.ncu import ProfiledLaunch


class Throughput(NamedTuple):
    """GPU Speed Of Light Throughput (--section SpeedOfLight): each unit's throughput, % of its peak."""
    compute_pct: float | None  # Compute (SM) Throughput
    memory_pct: float | None  # Memory Throughput: the busiest of DRAM, L1/TEX and L2
    dram_pct: float | None
    l1tex_pct: float | None
    l2_pct: float | None
    sm_active_cycles: float | None
    elapsed_cycles: float | None


class WarpState(NamedTuple):
    """Warp State Statistics (--section WarpStateStats)."""
    cycles_per_issued_instruction: float | None  # warp cycles between two issued instructions
    cycles_per_executed_instruction: float | None
    active_threads_per_warp: float | None
    not_predicated_off_threads_per_warp: float | None
    # (stall reason, warp cycles per issued instruction in it), largest first: where the export carries
    # the breakdown (smsp__average_warps_issue_stalled_*_per_issue_active.ratio), else ()
    stalls: tuple[tuple[str, float], ...]


class Scheduler(NamedTuple):
    """Scheduler Statistics (--section SchedulerStats): per scheduler, per cycle."""
    active_warps: float | None
    eligible_warps: float | None
    issued_warps: float | None  # instructions issued per cycle, at most 1
    one_or_more_eligible_pct: float | None
    no_eligible_pct: float | None


class MemoryWorkload(NamedTuple):
    """Memory Workload Analysis (--section MemoryWorkloadAnalysis)."""
    dram_bytes_per_second: float | None  # its Memory Throughput
    l1tex_hit_rate_pct: float | None
    l2_hit_rate_pct: float | None
    mem_busy_pct: float | None
    max_bandwidth_pct: float | None
    mem_pipes_busy_pct: float | None


class LaunchFigures(NamedTuple):
    throughput: Throughput | None
    warp_state: WarpState | None
    scheduler: Scheduler | None
    memory: MemoryWorkload | None
    missing: tuple[str, ...]  # the ncu section identifiers (SpeedOfLight, ...) the export lacks for this launch


# record -> (ncu section identifier, {field: ProfiledLaunch.metrics key}); a section is present when
# any of its figures is.
SECTIONS = {
    Throughput: ("SpeedOfLight", {
        "compute_pct": "sol_compute_pct", "memory_pct": "sol_memory_pct", "dram_pct": "sol_dram_pct",
        "l1tex_pct": "sol_l1tex_pct", "l2_pct": "sol_l2_pct", "sm_active_cycles": "sm_active_cycles",
        "elapsed_cycles": "elapsed_cycles"}),
    WarpState: ("WarpStateStats", {
        "cycles_per_issued_instruction": "warp_cycles_per_issued",
        "cycles_per_executed_instruction": "warp_cycles_per_executed",
        "active_threads_per_warp": "active_threads_per_warp",
        "not_predicated_off_threads_per_warp": "not_predicated_off_threads_per_warp"}),
    Scheduler: ("SchedulerStats", {
        "active_warps": "active_warps_per_scheduler", "eligible_warps": "eligible_warps_per_scheduler",
        "issued_warps": "issued_warps_per_scheduler", "one_or_more_eligible_pct": "one_or_more_eligible_pct",
        "no_eligible_pct": "no_eligible_pct"}),
    MemoryWorkload: ("MemoryWorkloadAnalysis", {
        "dram_bytes_per_second": "dram_bytes_per_second", "l1tex_hit_rate_pct": "l1tex_hit_rate_pct",
        "l2_hit_rate_pct": "l2_hit_rate_pct", "mem_busy_pct": "mem_busy_pct",
        "max_bandwidth_pct": "max_bandwidth_pct", "mem_pipes_busy_pct": "mem_pipes_busy_pct"}),
}
STALL_PREFIX = "stall_"


def launch_figures(launch: ProfiledLaunch) -> LaunchFigures:
    """The launch's section figures as typed records; a section the export lacks is None."""
    metrics = launch.metrics
    stalls = tuple(sorted(((key[len(STALL_PREFIX):], value) for key, value in metrics.items()
                           if key.startswith(STALL_PREFIX)), key=lambda item: (-item[1], item[0])))
    records, missing = {}, []
    for record, (section, fields) in SECTIONS.items():
        values = {name: metrics.get(key) for name, key in fields.items()}
        if record is WarpState:
            values["stalls"] = stalls
        if any(value not in (None, ()) for value in values.values()):
            records[record] = record(**values)
        else:
            missing.append(section)
    return LaunchFigures(records.get(Throughput), records.get(WarpState), records.get(Scheduler),
                         records.get(MemoryWorkload), tuple(missing))


# Each record's key in the figures' JSON (figures_document writes it, read_figures_document reads it back):
# LaunchFigures' own field names.
DOCUMENT_KEYS = {Throughput: "throughput", WarpState: "warp_state", Scheduler: "scheduler", MemoryWorkload: "memory"}


def figures_document(figures: LaunchFigures) -> dict:
    """The JSON of the figures: each section's object (null when missing), and `missing_sections`."""
    def section(record):
        if record is None:
            return None
        values = record._asdict()
        if "stalls" in values:
            values["stalls"] = dict(values["stalls"])
        return values

    return {**{key: section(getattr(figures, key)) for key in DOCUMENT_KEYS.values()},
            "missing_sections": list(figures.missing)}


def read_figures_document(document: dict) -> LaunchFigures:
    """The figures of a figures_document (lint's `measured` object), read back into the records: a
    figure it lacks, or gives as no number, is None; a section it lacks or gives as null is None."""
    def number(value):
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    records = {}
    for record, key in DOCUMENT_KEYS.items():
        section = document.get(key)
        if not isinstance(section, dict):
            continue
        values = {name: number(section.get(name)) for name in record._fields}
        if record is WarpState:
            stalls = section.get("stalls")
            values["stalls"] = tuple((str(k), v) for k, v in stalls.items() if number(v) is not None) \
                if isinstance(stalls, dict) else ()
        records[record] = record(**values)
    missing = document.get("missing_sections")
    return LaunchFigures(records.get(Throughput), records.get(WarpState), records.get(Scheduler),
                         records.get(MemoryWorkload), tuple(missing) if isinstance(missing, list) else ())
