"""Evidence from a profile: an Nsight Compute export's Speed Of Light, Warp State Statistics,
Scheduler Statistics and Memory Workload Analysis figures of the launch the change is for.

- Compute (SM) or memory throughput at THROUGHPUT_BOUND (80%) of peak or more: the unit is
  nearly saturated, so more warps cannot help much ("no_gain", naming which throughput). 80% is
  Nsight Compute's own threshold for a high-throughput kernel (Profiling Guide, "Speed Of Light").
- Few eligible warps per scheduler (below FEW_ELIGIBLE: most cycles issue nothing) with
  long-scoreboard or other memory-dependency stalls the largest share of the cycles between two
  issued instructions: the kernel is latency-bound, waiting on memory, and more resident warps
  are what hides that latency ("gain"). Where the export has no stall breakdown, both compute and
  memory throughput under LATENCY_BOUND (60%), which Nsight Compute's Speed Of Light rule reads as
  "typically latency issues", stands in for the stalls. The Profiling Guide's Scheduler and Warp State sections
  describe this case; Little's law (Volkov 2016) says how many: `warps_wanted` reads it from the
  device's measured bandwidth-vs-occupancy curve where `probe --save` kept one
  (advisor/memory_parallelism.py).

The figures are advisor/measured_figures.py's records (the one home of the Nsight Compute
names), read back from lint's `measured` object by `figures`."""

from __future__ import annotations

from ..measured_figures import LaunchFigures, read_figures_document
from .verdict import Evidence

THROUGHPUT_BOUND = 80.0  # percent of peak
LATENCY_BOUND = 60.0  # percent of peak: below it on both units, "typically latency issues" (SOL's own rule)
FEW_ELIGIBLE = 1.0  # eligible warps per scheduler per cycle
MEMORY_STALLS = ("long_scoreboard", "lg_throttle", "drain", "membar", "imc_miss")


def figures(measured: dict | None) -> LaunchFigures | None:
    """The profiled launch's figures (advisor/measured_figures.py's records) from lint's `measured`
    object; None where it has no Speed Of Light, warp-state or scheduler section (an
    Occupancy-only export)."""
    if not measured:
        return None
    found = read_figures_document(measured)
    return None if found.throughput is found.warp_state is found.scheduler is None else found


def _throughput(throughput) -> Evidence | None:
    """'no_gain' where the Speed Of Light record shows a unit at THROUGHPUT_BOUND or more."""
    if throughput is None:
        return None
    compute, memory = throughput.compute_pct, max(throughput.memory_pct or 0, throughput.dram_pct or 0)
    if compute is not None and compute >= THROUGHPUT_BOUND and compute >= memory:
        return Evidence("profile", {"compute_throughput_pct": compute}, "no_gain",
                        f"compute throughput is {compute:.0f}% of peak: more warps cannot add much")
    if memory >= THROUGHPUT_BOUND:
        return Evidence("profile", {"memory_throughput_pct": memory}, "no_gain",
                        f"memory throughput is {memory:.0f}% of peak: more warps cannot add much")
    return None


def _dominant_stall(stalls: dict) -> tuple[str, float] | None:
    if not stalls:
        return None
    reason = max(stalls, key=stalls.get)
    total = sum(stalls.values())
    return (reason, stalls[reason] / total) if total > 0 else None


def profile(figures: LaunchFigures | None) -> list[Evidence]:
    """The profile's evidence about adding resident warps (`figures`: evidence_profile.figures')."""
    if figures is None:
        return []
    throughput, scheduler, warp_state = figures.throughput, figures.scheduler, figures.warp_state
    saturated = _throughput(throughput)
    if saturated is not None:
        return [saturated]
    compute, memory, dram = (throughput.compute_pct, throughput.memory_pct, throughput.dram_pct) if throughput \
        else (None, None, None)
    eligible = scheduler.eligible_warps if scheduler else None
    dominant = _dominant_stall(dict(warp_state.stalls) if warp_state else {})
    value = {"eligible_warps_per_scheduler": eligible, "compute_throughput_pct": compute,
             "memory_throughput_pct": memory,
             "dominant_stall": None if dominant is None else {"reason": dominant[0], "share": round(dominant[1], 3)}}
    few = eligible is not None and eligible < FEW_ELIGIBLE
    if few and dominant is not None and dominant[0] in MEMORY_STALLS:
        return [Evidence("profile", value, "gain",
                         f"{eligible:.2f} eligible warps per scheduler, {dominant[0].replace('_', ' ')} stalls "
                         f"{dominant[1]:.0%} of the cycles: latency-bound, more warps hide it")]
    busiest = max(compute or 0, memory or 0, dram or 0)
    if few and dominant is None and compute is not None and busiest < LATENCY_BOUND:
        return [Evidence("profile", value, "gain",
                         f"{eligible:.2f} eligible warps per scheduler and no unit above {LATENCY_BOUND:.0f}% of "
                         "peak: latency-bound, more warps hide it")]
    return [Evidence("profile", value, "neutral", "the profile shows neither saturation nor memory-latency stalls")]


def warps_wanted(product, warps_per_sm: float, bytes_per_thread: float) -> Evidence | None:
    """How many warps per SM Little's law wants for 90% of the DRAM bandwidth, from the measured
    bandwidth-vs-occupancy curve where the product carries one, else the model."""
    from ..memory_parallelism import advice

    answer = advice(product, warps_per_sm, bytes_per_thread)
    if answer is None or not answer.get("warps_for_target"):
        return None
    wanted = answer["warps_for_target"]
    return Evidence("little_law", {"warps_per_sm_wanted": wanted, "warps_per_sm": warps_per_sm,
                                   "basis": answer["basis"]},
                    "neutral", f"Little's law wants {wanted:g} warps/SM for 90% of DRAM bandwidth ({answer['basis']})")
