"""TA0xx: profiled launches (Nsight Compute exports read by lint). The engine
recomputes each launch from its own figures (advisor/measured.py); these
rules name a disagreement with the report and explain the gap between the
theoretical and the achieved occupancy with numbers, each saying what to
change. Their examples are one launch's figures as `ncu --csv` reports them
(`example_export` writes the export the documented command reads)."""

from __future__ import annotations

from ...text import plural
from .. import MeasuredContext, rule

_BASE = {"kernel": "k", "cc": "9.0", "sm_count": 132, "registers": 16, "static_shared_mem": 0,
         "dynamic_shared_mem": 0, "shared_mem_config_size": 32768}
THRESHOLDS = {"gap_points": 10.0, "tail_efficiency": 0.9, "early_ratio": 0.8, "short_ns": 10_000,
              "short_block_ns": 10_000, "issue_bound": 0.8}

# Example figure -> (ncu section, metric label, unit), as `ncu --csv` prints them.
EXAMPLE_METRICS = {
    "registers": ("Launch Statistics", "Registers Per Thread", "register/thread"),
    "static_shared_mem": ("Launch Statistics", "Static Shared Memory Per Block", "byte/block"),
    "dynamic_shared_mem": ("Launch Statistics", "Dynamic Shared Memory Per Block", "byte/block"),
    "shared_mem_config_size": ("Launch Statistics", "Shared Memory Configuration Size", "byte"),
    "sm_count": ("Launch Statistics", "# SMs", "SM"),
    "block_limit_registers": ("Occupancy", "Block Limit Registers", "block"),
    "theoretical_occupancy": ("Occupancy", "Theoretical Occupancy", "%"),
    "achieved_occupancy": ("Occupancy", "Achieved Occupancy", "%"),
    "duration_ns": ("GPU Speed Of Light Throughput", "Duration", "ns"),
}
HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
          '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def example_export(figures: dict) -> str:
    """The `ncu --csv` export of one launch with these figures (a rule example's)."""
    rows = [HEADER]
    head = (f'"0","1","app","localhost","{figures["kernel"]}","1","7","({figures["block"]}, 1, 1)",'
            f'"({figures["grid"]}, 1, 1)","0","{figures["cc"]}"')
    for key, (section, label, unit) in EXAMPLE_METRICS.items():
        if key in figures:
            rows.append(f'{head},"{section}","{label}","{unit}","{figures[key]}"')
    return "\n".join(rows) + "\n"


def _example(**figures) -> dict:
    return {"ncu": {**_BASE, **figures}}


def _percent(value: float) -> str:
    return f"{value:.1f}%"


def _gap(context: MeasuredContext) -> tuple[float, float] | None:
    """(theoretical, achieved) in percent, the engine's theoretical; None without an achieved figure."""
    achieved = context.measured.report.get("achieved_occupancy")
    if achieved is None or not context.measured.result.launchable:
        return None
    return 100 * context.measured.result.occupancy, achieved


def under_one_wave(context: MeasuredContext, params: dict) -> bool:
    """Under one wave, and the shape costs: without clusters, no SM can hold enough blocks for the
    theoretical occupancy; with clusters (placed by GPC, so the bound is unknown), the grid is
    well under a wave and the achieved figure well under the theoretical."""
    shape, gap = context.shape, _gap(context)
    if not (shape and gap and shape.full_waves == 0):
        return False
    if shape.cluster_size:
        return shape.waves <= 1 - params["gap_points"] / 100 and gap[0] - gap[1] >= params["gap_points"]
    return shape.expected <= gap[0] - params["gap_points"]


def tail_wave(context: MeasuredContext, params: dict) -> bool:
    shape = context.shape
    return bool(shape and shape.full_waves and shape.last_wave_blocks
                and shape.grid / ((shape.full_waves + 1) * shape.slots) < params["tail_efficiency"])


def ends_early(context: MeasuredContext, params: dict) -> bool:
    """Achieved well under what the launch's layout allows, and the kernel not so short that its
    launch and ramp explain it (TA005's cause)."""
    shape, gap = context.shape, _gap(context)
    return bool(shape and gap and gap[1] < params["early_ratio"] * shape.expected
                and shape.expected - gap[1] >= params["gap_points"] and not short_kernel(context, params))


def short_kernel(context: MeasuredContext, params: dict) -> bool:
    duration = context.measured.report.get("duration_ns")
    return duration is not None and duration < params["short_ns"]


@rule(
    code="TA001", name="report-disagrees", severity="warning", source="ncu-h200",
    summary="The engine does not reproduce a figure of the Nsight Compute report",
    explanation="""The engine recomputes every block limit, the theoretical occupancy and the waves per SM from the
    launch's own figures (registers, static, dynamic and driver shared memory, the shared-memory configuration the
    driver chose, block, grid, compute capability and SM count). A figure it does not reproduce means a spec or
    engine defect, or a report from a different configuration than the figures say (a hand-edited or merged
    export). Where ncu printed shared memory in a scaled unit (4.10 Kbyte), figures within that rounding agree;
    export with --print-units base for exact figures.""",
    trigger=_example(block=256, grid=132, block_limit_registers=8),
    clean=_example(block=256, grid=132, block_limit_registers=16),
)
def report_disagrees(context: MeasuredContext, params: dict):
    for item in context.measured.disagreements:
        yield (f"the report gives {item.figure} = {item.report:g}, the engine computes {item.engine:g} "
               "from the same launch"), {"figure": item.figure, "report": item.report, "engine": item.engine}


def _blocks(shape, count: int) -> str:
    """A count of blocks, in clusters where the launch has them."""
    if shape.cluster_size:
        return f"{plural(count // shape.cluster_size, 'cluster', grouped=False)} ({plural(count, 'block', grouped=False)})"
    return plural(count, "block", grouped=False)


@rule(
    code="TA002", name="grid-under-one-wave", severity="warning", source="ncu-h200",
    summary="The grid is less than one wave: the SMs cannot reach the theoretical occupancy",
    explanation="""A wave is as many blocks as the GPU holds at once (resident blocks per SM x SMs; with clusters,
    the report's Max Active Clusters x the cluster size). Under one wave, blocks go out breadth first, so no SM holds
    more than the grid's blocks over the SMs, rounded up: the achieved occupancy on the SMs that hold blocks (what
    Nsight Compute averages over) is at most that many blocks' warps over the SM's, a bound held within half a point
    on every recorded launch of 10 us or more. With clusters the GPCs place them, and in a kernel shorter than 10 us
    the achieved figure is mostly ramp (recorded 2 us launches exceed the bound by up to 29 points): there only the
    grid's share of a wave is said. Launch at least one wave:
    more, smaller blocks (a smaller block size, less work per block) or more of the problem per launch. Silent when
    the grid's shape costs less than 10 points of occupancy.""",
    params=THRESHOLDS,
    trigger=_example(block=256, grid=66, achieved_occupancy=12.5),
    clean=_example(block=256, grid=1056, achieved_occupancy=95.0),
)
def grid_under_one_wave(context: MeasuredContext, params: dict):
    if not under_one_wave(context, params):
        return
    shape, (theoretical, achieved) = context.shape, _gap(context)
    details = {"grid": shape.grid, "wave": shape.slots, "waves": round(shape.waves, 4),
               "busy_sms": shape.last_wave_sms, "cluster_size": shape.cluster_size}
    if shape.cluster_size or short_kernel(context, params):
        # Clusters are placed by GPC; and under 10 us the achieved figure is mostly ramp (recorded
        # launches of 2 us exceed even the breadth-first bound): no bound is claimed there.
        reach = f"achieved {_percent(achieved)} against theoretical {_percent(theoretical)}"
    else:
        per_sm = -(-shape.grid // shape.sm_count)
        reach = (f"reach {shape.last_wave_sms} of {shape.sm_count} SMs with at most {per_sm} each: occupancy on "
                 f"those is at most {_percent(shape.busy_sm_bound)}, about {_percent(shape.expected)} with blocks "
                 f"of equal duration (theoretical {_percent(theoretical)})")
        details["bound"] = round(shape.busy_sm_bound, 2)
        details["expected"] = round(shape.expected, 2)
    yield (f"the grid's {_blocks(shape, shape.grid)} are {shape.waves:.2f} of a wave of {_blocks(shape, shape.slots)}"
           f" and {reach}; launch at least {_blocks(shape, shape.slots)}, with smaller blocks or less work per block"), \
        details


@rule(
    code="TA003", name="tail-wave", severity="warning", source="ncu-h200",
    summary="The last wave is a small tail: SMs idle while it runs",
    explanation="""When the grid is not a whole number of waves, the last wave reaches fewer SMs (or fewer blocks per
    SM) while the others have nothing left to run. What that costs is time, which the achieved occupancy does not
    show: Nsight Compute averages it over the cycles each SM was active, so idle SMs in the tail do not lower it, and
    no occupancy bound is claimed. Make the grid a whole number of waves (change the block size or the work per
    block), or loop in a persistent kernel of one wave of blocks. On a profiled launch this rule owns the tail (the
    configuration rule TA703 is not repeated there).""",
    params=THRESHOLDS,
    trigger=_example(block=256, grid=1057, achieved_occupancy=60.0),
    clean=_example(block=256, grid=2112, achieved_occupancy=95.0),
)
def tail_wave_rule(context: MeasuredContext, params: dict):
    if not tail_wave(context, params):
        return
    shape = context.shape
    waves = shape.full_waves + 1
    yield (f"the grid's {_blocks(shape, shape.grid)} make {shape.full_waves} full wave(s) of "
           f"{_blocks(shape, shape.slots)} and a last wave of {_blocks(shape, shape.last_wave_blocks)} that reaches "
           f"at most {shape.last_wave_sms} of {shape.sm_count} SMs: the others idle or hold fewer blocks while it runs; "
           f"a grid of {_blocks(shape, shape.full_waves * shape.slots)} or {_blocks(shape, waves * shape.slots)}, "
           f"more work per block, or a persistent loop over {_blocks(shape, shape.slots)} removes the tail"), \
        {"grid": shape.grid, "wave": shape.slots, "full_waves": shape.full_waves,
         "last_wave_blocks": shape.last_wave_blocks, "last_wave_sms": shape.last_wave_sms,
         "cluster_size": shape.cluster_size}


def _early_cause(context: MeasuredContext, params: dict) -> tuple[str, str]:
    """(cause, sentence): what the export's figures tell apart, or that they cannot."""
    measured, shape = context.measured, context.shape
    duration = measured.report.get("duration_ns")
    if duration is not None:
        rounds = -(-shape.grid // shape.slots)  # blocks each slot runs in turn
        block_ns = duration / rounds
        if block_ns < params["short_block_ns"]:
            return "short_blocks", (f"blocks live about {block_ns / 1000:.1f} us each ({duration / 1000:.1f} us over "
                                    f"{rounds} round(s) of blocks per slot): likely too short for the block scheduler "
                                    "to refill the SMs as blocks end; give each block more work (a grid-stride loop "
                                    f"over {_blocks(shape, shape.slots)})")
    scheduler = measured.figures.scheduler
    issued = scheduler.issued_warps if scheduler is not None else None
    if issued is None:
        return "cannot_tell", ("the export cannot tell unequal work or early exits from warps that end at different "
                               "times on issue-bound schedulers: profile with --section SchedulerStats")
    if issued >= params["issue_bound"]:
        return "issue_bound", (f"the schedulers issue {issued:.2f} instructions per cycle (issue-bound): the SMs "
                               "are busy whatever the occupancy, and warps end at different times as the schedulers "
                               "favour some (whether the work is also unequal the export cannot tell); fewer "
                               "instructions per warp helps, more occupancy does not")
    return "imbalance", (f"the schedulers issue only {issued:.2f} instructions per cycle, so not issue-bound: blocks "
                         "with unequal work or early exits are left; give blocks equal work or take it in a "
                         f"persistent loop of {_blocks(shape, shape.slots)}")


@rule(
    code="TA004", name="blocks-end-early", severity="info", source="ncu-h200",
    summary="Achieved occupancy is well under what the launch's layout allows, and why where the export can tell",
    explanation="""With blocks of equal duration the SMs holding blocks would average the grid's share of the
    theoretical occupancy (a model of the grid's waves, not a bound: blocks that start as others end exceed it), yet
    the achieved figure is well under it: warps are resident for less of the time than the launch allows.
    The export tells some causes apart: blocks that live only microseconds (the launch's duration over the rounds of
    blocks each slot runs) leave the block scheduler unable to refill SMs as fast as blocks end; schedulers that
    issue nearly every cycle (Scheduler Statistics) keep the SMs busy whatever the occupancy, and finish some warps
    long before others; schedulers that do not leave unequal work or early exits. Without those figures it says it
    cannot tell. Silent where the
    kernel is a few microseconds long (TA005: launch and ramp), or the grid's shape is the cause (TA002, TA003).""",
    params=THRESHOLDS,
    trigger=_example(block=256, grid=1056, achieved_occupancy=40.0),
    clean=_example(block=256, grid=1056, achieved_occupancy=95.0),
)
def blocks_end_early(context: MeasuredContext, params: dict):
    if not ends_early(context, params):
        return
    shape, (theoretical, achieved) = context.shape, _gap(context)
    cause, sentence = _early_cause(context, params)
    yield (f"achieved {_percent(achieved)} against theoretical {_percent(theoretical)} is well under the "
           f"{_percent(shape.expected)} the grid's {shape.waves:.2f} waves give with blocks of equal duration (a "
           f"model, not a bound): {sentence}"), \
        {"achieved": achieved, "expected": round(shape.expected, 2), "cause": cause}


@rule(
    code="TA005", name="short-kernel", severity="info", source="ncu-h200",
    summary="The kernel runs for a few microseconds: launch and ramp dominate",
    explanation="""A kernel of a few microseconds spends much of its time launching, filling the SMs and draining
    them; its achieved occupancy says more about that ramp than about the kernel. Batch the work: more per block
    or per launch, fused kernels, or CUDA graphs to cut launch gaps.""",
    params=THRESHOLDS,
    trigger=_example(block=256, grid=132, achieved_occupancy=12.0, duration_ns=1700),
    clean=_example(block=256, grid=132, achieved_occupancy=12.0, duration_ns=250000),
)
def short_kernel_rule(context: MeasuredContext, params: dict):
    if short_kernel(context, params):
        duration = context.measured.report["duration_ns"]
        yield (f"ran {duration / 1000:.1f} us, under {params['short_ns'] / 1000:.0f} us: launch and ramp dominate "
               "its occupancy; give each launch more work (fuse kernels, more per block, CUDA graphs)"), \
            {"duration_ns": duration}


@rule(
    code="TA006", name="unexplained-gap", severity="info", source="ncu-h200",
    summary="Achieved occupancy is under the theoretical figure for no reason the launch's shape shows",
    explanation="""The grid fills whole waves, the achieved figure is close to what they allow, and the kernel is
    not short, yet the achieved occupancy is under the theoretical one by more than the threshold. The cause is
    outside what the report's launch figures show (other work sharing the GPU, a profiler replay artefact).""",
    params=THRESHOLDS,
    trigger=_example(block=256, grid=1056, achieved_occupancy=85.0, duration_ns=250000),
    clean=_example(block=256, grid=1056, achieved_occupancy=95.0, duration_ns=250000),
)
def unexplained_gap(context: MeasuredContext, params: dict):
    gap = _gap(context)
    if gap is None or gap[0] - gap[1] < params["gap_points"]:
        return
    if any(test(context, params) for test in (under_one_wave, tail_wave, ends_early, short_kernel)):
        return
    yield (f"achieved {_percent(gap[1])} against theoretical {_percent(gap[0])}: the launch's shape does not "
           "explain the gap"), {"theoretical": round(gap[0], 2), "achieved": gap[1]}


@rule(
    code="TA007", name="achieved-below-minimum", severity="error", source="project-config",
    summary="Achieved occupancy is under the lint config's min_achieved_occupancy",
    explanation="""The lint config sets min_achieved_occupancy (a fraction, 0..1); a profiled launch whose achieved
    occupancy is under it fails, so a CI job can hold a measured budget as it holds min_occupancy.""",
    trigger={"ncu": {**_BASE, "block": 256, "grid": 1056, "achieved_occupancy": 40.0}, "min_achieved_occupancy": 0.5},
    clean={"ncu": {**_BASE, "block": 256, "grid": 1056, "achieved_occupancy": 60.0}, "min_achieved_occupancy": 0.5},
)
def achieved_below_minimum(context: MeasuredContext, params: dict):
    achieved = context.measured.report.get("achieved_occupancy")
    if context.minimum is not None and achieved is not None and achieved < 100 * context.minimum:
        yield (f"achieved {_percent(achieved)}, under min_achieved_occupancy {context.minimum:g}"), \
            {"achieved": achieved, "minimum": context.minimum}


_XMMA = "sm80_xmma_gemm_tn"


def _libraries_for_run(seen: list[tuple[dict, int]]) -> tuple[str, dict]:
    """TA008 once for the run: the launches of each library's kernels."""
    counts: dict[str, int] = {}
    for details, launches in seen:
        counts[details["library"]] = counts.get(details["library"], 0) + launches
    named = ", ".join(f"{library} ({count})" for library, count in sorted(counts.items()))
    return (f"{sum(counts.values())} launches of library kernels: {named}; their vendors chose their registers and "
            "launch bounds, so they get facts only, no register or launch-bounds advice"), {"libraries": counts}


@rule(
    code="TA008", name="library-kernel", severity="info", source="ncu-h200",
    summary="A library's kernel (cuBLAS, cuDNN, CUTLASS, flash-attention, ...): facts only, no register advice",
    explanation="""Kernels that ship inside libraries (cuBLAS/cuBLASLt, cuDNN, CUTLASS/xmma, cuFFT, NCCL,
    flash-attention, PyTorch's at::native, Thrust/CUB) are built by their vendor with registers and launch bounds
    chosen on purpose: NVIDIA's xmma GEMMs run at 12.5% theoretical occupancy by design, and no user can rebuild
    them with a cap. Their occupancy and limiter are reported as facts, and no register, launch-bounds or block-size
    change is proposed for them. The kernels are recognised by name, from the validated patterns of
    advisor/advice/data/library_kernels.toml. Said once per run, with the libraries and how many launches.""",
    trigger=_example(kernel=_XMMA, block=128, grid=264, registers=232),
    clean=_example(block=128, grid=264, registers=232),
    per_run=_libraries_for_run,
)
def library_kernel(context: MeasuredContext, params: dict):
    from ...advice.evidence_library import library_of

    library = library_of(context.measured.launch.kernel)
    if library is not None:
        yield (f"a {library} kernel: facts only, no register or launch-bounds advice (its vendor built it)"), \
            {"library": library}
