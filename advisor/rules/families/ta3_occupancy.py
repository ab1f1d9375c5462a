"""TA3xx: theoretical occupancy, what limits it and the change that lifts it.
Every number of advice here is the engine's (`occupancy`, `whatif`), held to
brute force in tests/rules/test_rules.py and tests/engine/test_whatif.py."""

from __future__ import annotations

from ...advice.verdict import Evidence, combine
from ...engine import whatif
from ...engine.limits import div_round_up
from ...engine.occupancy import Occupancy, occupancy
from ...text import percent, plural
from .. import LaunchContext, rule
from ..register_advice import LIBRARY, cap_change, pin_change
from ..wording import cap_built, per_sm, register_peak


def _step(resource: str, step, verdict=None) -> dict:
    found = {"resource": resource, "value": step.value, "blocks_per_sm": step.blocks_per_sm,
             "occupancy": round(step.occupancy, 6)}
    if verdict is not None:
        found["verdict"] = verdict.to_dict()
    return found


def _step_verdict(launch: LaunchContext, step, warps_per_block: int):
    """The verdict on a register step (an engine what-if Step) of blocks of `warps_per_block` warps:
    the occupancy step's evidence from what the configuration shows (advice/occupancy_step.py, as
    the judge's)."""
    from ...advice.occupancy_step import step_evidence, step_side  # only where a step is offered: not at start-up

    return combine(step_evidence(launch.result, step_side(step, warps_per_block), launch.result.kernel.grid_size,
                                 launch.sm_count))


def _registers_advice(launch: LaunchContext, details: dict) -> str:
    result = launch.result
    cliff = whatif.register_cliff(result)
    if result.kernel.register_control == LIBRARY:
        return f"registers limit {per_sm(result.active_blocks_per_sm)} (a library kernel: its vendor chose them)"
    verdicts = [_step_verdict(launch, step, result.warps_per_block) for step in cliff.down]
    details["next_steps"] += [_step("registers", step, verdict) for step, verdict in zip(cliff.down, verdicts)]
    if not cliff.down:
        return f"registers limit {per_sm(result.active_blocks_per_sm)}; fewer registers alone cannot add one"
    step, verdict = cliff.down[0], verdicts[0]
    change = cap_change(result.arch, result.kernel, step.value, step.blocks_per_sm)
    if change is not None:
        details["register_change"] = change.to_dict()
        details["verdict"] = verdict.to_dict()
    how = f" ({change.text()})" if change is not None else ""
    said = f"; {verdict.text()}" if change is not None else ""
    return (f"registers: {cliff.current} -> {step.value} gives {per_sm(step.blocks_per_sm)}, "
            f"{percent(result.occupancy)} -> {percent(step.occupancy)}{how}{said}")


def _shared_mem_advice(result: Occupancy, details: dict) -> list[str]:
    parts = []
    carve = whatif.best_carveout(result)
    if carve is not None:
        parts.append(f"shared memory: carveout {carve.value}% gives {per_sm(carve.blocks_per_sm)}, "
                     f"{percent(result.occupancy)} -> {percent(carve.occupancy)} "
                     "(cudaFuncAttributePreferredSharedMemoryCarveout)")
    cliff = whatif.shared_mem_cliff(result)
    if cliff.down:
        step = cliff.down[0]
        details["next_steps"].append(_step("shared_memory", step))
        parts.append(f"shared memory: {cliff.current} -> {step.value} B per block (-{cliff.current - step.value} B) "
                     f"gives {per_sm(step.blocks_per_sm)}, {percent(result.occupancy)} -> {percent(step.occupancy)}")
    return parts


def _block_size_advice(launch: LaunchContext, limiter: str, details: dict) -> str:
    # The smallest block that reaches the best occupancy: larger blocks add no warps per SM,
    # only coarser scheduling and a bigger tail.
    # No warp-multiple block fits under a max_threads_per_block below one warp: then there is no block size to advise.
    result = launch.result
    best = max(whatif.block_size_table(result), key=lambda s: (s.occupancy, -s.value), default=None)
    if best is not None and best.occupancy > result.occupancy and result.kernel.register_control != LIBRARY:
        from ...advice.occupancy_step import block_step_evidence, step_side

        kernel = result.kernel
        after = step_side(best, div_round_up(best.value, result.arch.warp_size))
        verdict = combine(block_step_evidence(result, after, (kernel.block_size, best.value), kernel.grid_size,
                                              launch.sm_count, kernel.barriers))
        details["block_change"] = {"block_size": best.value, "blocks_per_sm": best.blocks_per_sm,
                                   "occupancy": round(best.occupancy, 6)}
        details.setdefault("verdict", verdict.to_dict())
        return f"{limiter}: block size {best.value} gives {percent(best.occupancy)}; {verdict.text()}"
    return (f"{limiter}: {plural(result.active_blocks_per_sm, 'block', grouped=False)} of "
            f"{plural(result.warps_per_block, 'warp', grouped=False)} per SM")


def _fewer_advice(result: Occupancy, field: str, label: str) -> str | None:
    # Advise a smaller count (barriers, virtual resources) only where the engine shows that alone gains a block.
    kernel = result.kernel
    current = getattr(kernel, field)
    for fewer in range(current - 1, -1, -1):
        gained = occupancy(result.arch, kernel.replace(**{field: fewer}))
        if gained.active_blocks_per_sm > result.active_blocks_per_sm:
            return (f"{label}: {current} -> {fewer} per block gives {per_sm(gained.active_blocks_per_sm)}, "
                    f"{percent(result.occupancy)} -> {percent(gained.occupancy)}")
    return None


@rule(
    code="TA301", name="occupancy-limiter", severity="info", source="occ-h#cudaOccMaxActiveBlocksPerMultiprocessor",
    summary="What limits occupancy, and the smallest change that lifts it",
    explanation="""Names every resource whose limit equals the resident block count (ties included) and, for each,
    the next occupancy step: the register count that fits one more block, the shared-memory bytes to shave, the
    carveout to request, or the barrier or virtual-resource count (CUDA 13: 128 per SM on 10.x-12.x) that fits one
    more block. The register step names the change the compiler obeys: for a kernel with __launch_bounds__(T), the
    bounds' second argument (ptxas ignores -maxrregcount there); for one without, __launch_bounds__(B, N) or
    -maxrregcount. Where the source is compiled (lint FILE.cu, --compile-commands), the step is built and its
    registers and spills reported. Each change carries a verdict (likely gain, likely loss or unknown) with its
    evidence (docs/advice.md): a build at the cap that spills more than 8 B of stores beyond today's is a likely
    loss (of 13 caps timed on an H200 by benchmarks/advice.py, every one spilling 12 B or more ran slower, by up to
    3.6x); tensor-core or register-tiled machine code (Volkov, GTC 2010), a grid already resident whole, a
    throughput at 80% of peak or more in a profile (Nsight Compute's threshold) or a library kernel keep it unknown;
    a profile with under one eligible warp per scheduler and memory-dependency stalls dominant (latency-bound)
    makes it a likely gain. Occupancy alone never does: more resident warps can thrash caches or lose
    instruction-level parallelism. Information: it explains the occupancy figure and suggests the cheapest change.
    Where the launch's grid is one wave or less (its blocks all resident at once), no step is offered: a block more
    per SM would stay empty until the grid grows.""",
    trigger={"arch": "volta", "registers": 64, "block_size": 256},
    clean={"arch": "volta", "registers": 32, "block_size": 256},
    machine_code=register_peak,
    cap_built=cap_built,
    related=("pressure_lines", "register pressure peaks here"),
)
def occupancy_limiter(launch: LaunchContext, params: dict):
    result = launch.result
    if not result.launchable or result.occupancy >= 1.0:
        return
    parts, details = [], {"limiters": result.limiters, "blocks_per_sm": result.active_blocks_per_sm,
                          "occupancy": round(result.occupancy, 6), "next_steps": []}
    if _one_wave_or_less(launch):
        # The grid is one wave or less: a slot more per SM stays empty, so no step is offered.
        wave, grid = launch.wave, result.kernel.grid_size
        details["grid_fills_more"] = False
        yield (f"occupancy {percent(result.occupancy)} ({result.active_warps_per_sm}/{result.max_warps_per_sm} warps) "
               f"limited by {' + '.join(result.limiters)}; the grid of {plural(grid, 'block', grouped=False)} is at "
               f"most one wave of {wave[0]}, so more resident blocks per SM would stay empty: a larger grid first"), \
            details
        return
    for limiter in result.limiters:
        if limiter == "registers":
            parts.append(_registers_advice(launch, details))
        elif limiter == "shared_memory":
            parts += _shared_mem_advice(result, details)
        elif limiter in ("warps", "blocks"):
            parts.append(_block_size_advice(launch, limiter, details))
        elif limiter in ("barriers", "virtual_resources"):
            advice = _fewer_advice(result, limiter, limiter.replace("_", " "))
            if advice is not None:
                parts.append(advice)
    yield (f"occupancy {percent(result.occupancy)} ({result.active_warps_per_sm}/{result.max_warps_per_sm} warps) "
           f"limited by {' + '.join(result.limiters)}: " + "; ".join(parts)), details


@rule(
    code="TA302", name="low-theoretical-occupancy", severity="warning", source="bpg",
    summary="Theoretical occupancy below 80% of the maximum",
    explanation="""Fewer resident warps leave fewer candidates for the schedulers to hide latency with. Low
    occupancy is not always a problem (kernels with high instruction-level parallelism can saturate the SM), but it
    deserves a look when the kernel is latency-bound. A warning at 80% of the maximum, the threshold of Nsight
    Compute's theoretical-occupancy message: below it latency hiding is often short, but kernels with much
    instruction-level parallelism run well there, so it is never an error.""",
    params={"threshold": 0.8},
    trigger={"arch": "hopper", "registers": 128, "block_size": 256},
    clean={"arch": "hopper", "registers": 32, "block_size": 256},
)
def low_theoretical_occupancy(launch: LaunchContext, params: dict):
    result = launch.result
    if result.launchable and result.occupancy < params["threshold"]:
        # TA301's step, where it offers one (none on a grid of one wave or less).
        step = None if _one_wave_or_less(launch) else _next_register_step(result)
        details, said = {"occupancy": round(result.occupancy, 6)}, ""
        if step is not None:
            details["blocks_per_sm"] = result.active_blocks_per_sm
            verdict = _step_verdict(launch, step, result.warps_per_block)
            # The verdict also where every finding that proposes a change keeps it, so that lint's
            # machine code, profile and build weigh into it as they do into TA301's on the same step.
            details["next_step"] = {**_step("registers", step), "verdict": verdict.to_dict()}
            details["verdict"] = details["next_step"]["verdict"]
            said = f"; next step: {step.value} registers per thread (TA301); {verdict.text()}"
        yield (f"theoretical occupancy {percent(result.occupancy)} is below {percent(params['threshold'])} "
               f"of the maximum, limited by {' + '.join(result.limiters)}{said}"), details


def _one_wave_or_less(launch: LaunchContext) -> bool:
    """Whether the launch's whole grid is resident at once (one wave or less)."""
    wave, grid = launch.wave, launch.result.kernel.grid_size
    return bool(grid and wave and grid <= wave[0])


def _next_register_step(result: Occupancy):
    """TA301's register step where registers limit and a cap the user can set reaches it; else None."""
    if "registers" not in result.limiters or result.kernel.register_control == LIBRARY:
        return None
    cliff = whatif.register_cliff(result)
    return cliff.down[0] if cliff.down else None


@rule(
    code="TA303", name="too-few-warps", severity="warning", source="turing-guide#4.1.1",
    summary="Too few resident warps per SM to hide arithmetic latency",
    explanation="""Each SM has 4 schedulers and a dependent FMA issues after 4 cycles (7.x): at least 4 warps per SM
    are needed with 4-way instruction-level parallelism, and 16 without. Fewer resident warps leave issue slots idle
    even for compute-bound code; memory latency needs many more. A warning: the thresholds are the tuning guide's
    own arithmetic above, a floor below which issue slots go idle whatever the code.""",
    params={"with_ilp": 4, "without_ilp": 16},
    trigger={"arch": "volta", "registers": 255, "block_size": 256, "dynamic_shared_mem": "90K", "opt_in": True},
    clean={"arch": "volta", "registers": 32, "block_size": 256},
)
def too_few_warps(result: Occupancy, params: dict):
    warps = result.active_warps_per_sm
    if not result.launchable:
        return
    if warps < params["with_ilp"]:
        yield (f"{plural(warps, 'resident warp', grouped=False)} per SM cannot hide FMA latency even with 4-way ILP "
               f"(at least {params['with_ilp']} needed)"), {"active_warps_per_sm": warps}
    elif warps < params["without_ilp"]:
        yield (f"{plural(warps, 'resident warp', grouped=False)} per SM hide FMA latency only with "
               f"~{-(-params['without_ilp'] // warps)}-way instruction-level parallelism "
               f"({params['without_ilp']} warps needed without)"), {"active_warps_per_sm": warps}


def _headroom(n: int, unit: str) -> str:
    return plural(n, unit, grouped=False)


@rule(
    code="TA304", name="near-cliff", severity="info", source="occ-h#cudaOccMaxActiveBlocksPerMultiprocessor",
    summary="The configuration sits just below an occupancy cliff",
    explanation="""A few more registers per thread (a compiler upgrade, one more live variable) or a little more
    shared memory would cost a resident block. Such a kernel's performance is fragile across toolchains and
    architectures; leave margin or pin the register count with __launch_bounds__(threads, minBlocks) (for a kernel
    that has bounds, their second argument; -maxrregcount does not apply there). A pin forces spills should the code
    need more registers later: build it and time it. Information, not a warning: nothing is lost yet, and with
    registers allocated in steps many kernels sit near a step; it says where a small change would cost a block so
    that a register cap can pin it.""",
    params={"register_margin": 4, "shared_mem_margin": 1024},
    trigger={"arch": "volta", "registers": 32, "block_size": 256, "shared_mem": 12288},
    clean={"arch": "volta", "registers": 24, "block_size": 256, "shared_mem": 4096},
    cap_built=cap_built,
)
def near_cliff(result: Occupancy, params: dict):
    if not result.launchable:
        return
    # Nothing to lose but occupancy headroom is still worth knowing at 100%: said as info there,
    # so `--fail-on warning` does not fail a kernel that is at the maximum.
    severity = "info" if result.active_warps_per_sm == result.max_warps_per_sm else None
    blocks, kernel = result.active_blocks_per_sm, result.kernel
    regs = whatif.register_cliff(result)  # same call as TA301's, so cached
    if regs.headroom is not None and regs.headroom < params["register_margin"]:
        drops_at = kernel.registers + regs.headroom + 1  # the first count that loses a block
        after = occupancy(result.arch, kernel.replace(registers=drops_at)).active_blocks_per_sm
        pin = pin_change(result.arch, kernel, drops_at - 1, blocks)
        how = f"; pin the count with {pin.bounds}" if pin is not None else ""
        found = {"resource": "registers", "headroom": regs.headroom, "drops_at": drops_at, "blocks_after": after}
        if pin is not None:
            found["register_change"] = pin.to_dict()
            verdict = combine([Evidence("occupancy", {"blocks_per_sm": blocks, "registers": kernel.registers,
                                                      "register_cap": pin.registers}, "neutral",
                                        f"keeps {per_sm(blocks)} should the count grow, and gains nothing today")])
            found["verdict"] = verdict.to_dict()
            how += f"; {verdict.text()}"
        yield (f"registers: {drops_at} per thread (+{drops_at - kernel.registers}) drops to {per_sm(after)} "
               f"from {per_sm(blocks)}; {_headroom(regs.headroom, 'register')} of headroom{how}"), found, severity
    total = kernel.static_shared_mem + kernel.dynamic_shared_mem
    if not total:
        return  # a block without shared memory has no shared-memory cliff to be near
    smem = whatif.shared_mem_cliff(result)
    if smem.headroom is not None and smem.headroom < params["shared_mem_margin"]:
        drops_at = total + smem.headroom + 1  # the first size in bytes that loses a block
        after = whatif.blocks_at_total_shared_mem(result, drops_at)
        yield (f"shared memory: {drops_at} B per block (+{drops_at - total} B) drops to {per_sm(after)} "
               f"from {per_sm(blocks)}; {_headroom(smem.headroom, 'byte')} of headroom"), \
            {"resource": "shared_memory", "headroom": smem.headroom, "drops_at": drops_at, "blocks_after": after}, \
            severity
