"""TA9xx: lint's own rules, on the build figures of one kernel (in its
LaunchConfig), the project's budgets and the evidence itself. Lint builds one
LintContext per kernel and calls `tuneadvise.advisor.rules.lint_findings`.

Their examples are a config (as in tuneadvise.toml) and ptxas -v lines, with
the CUDA source where the rule reads its attributes (`source`) and the earlier
build's registers where it compares builds (`previous_registers`); the test
suite lints them."""

from __future__ import annotations

from ...advice.verdict import Evidence, combine
from ...text import plural
from .. import LintContext, rule
from ..register_advice import budget_change
from ..wording import register_peak

_ENTRY = "ptxas info    : Compiling entry function '{}' for 'sm_90'\n"
_SAXPY = _ENTRY.format("_Z5saxpyfPKfPfi") + "ptxas info    : Used 40 registers, used 0 barriers"


def _k(usage: str, properties: str = "") -> str:
    """A ptxas -v log of kernel `k` on sm_90."""
    return _ENTRY.format("k") + properties + "ptxas info    : " + usage


@rule(
    code="TA901", name="register-budget", severity="error", source="project-config",
    summary="More registers per thread than the kernel's budget allows",
    explanation="""A [[budgets]] entry caps this kernel's registers per thread. A change that raises the count
    usually costs occupancy (see TA301 for the cliff). The change offered caps the count at exactly the budget:
    __maxnreg__(N) (CUDA 12.4 and later; in place of __launch_bounds__ for a kernel that has them, since nvcc
    refuses both on one kernel), or -maxrregcount=N for a kernel without bounds (ptxas ignores the flag beside
    either). __launch_bounds__(threads, minBlocks) is named beside it with the cap ptxas derives from it, which
    is often under the budget: registers the budget allows, given up, and spills where the kernel needed them.
    Or raise the budget deliberately. An error: a budget is a limit the team set itself, so crossing
    it fails the run; where no budget is given, nothing fires.""",
    trigger={"config": {"budgets": [{"kernel": "saxpy*", "max_registers": 32}]}, "log": _SAXPY},
    clean={"config": {"budgets": [{"kernel": "saxpy*", "max_registers": 40}]}, "log": _SAXPY},
)
def register_budget(kernel: LintContext, params: dict):
    budget, registers = kernel.budget, kernel.result.kernel.registers
    if budget is not None and budget.max_registers is not None and registers > budget.max_registers:
        change = budget_change(kernel.result.arch, kernel.result.kernel, budget.max_registers)
        cap = change.exact.registers
        verdict = combine([Evidence("budget", {"registers": registers, "register_cap": cap},
                                    "neutral", f"meets the budget by taking {registers - cap} "
                                    "registers per thread from the compiler")])
        found = {"registers": registers, "budget": budget.max_registers, "register_change": change.to_dict(),
                 "verdict": verdict.to_dict()}
        yield (f"{registers} registers per thread, budget {budget.max_registers} (budget '{budget.kernel}'); "
               f"{change.text()}; {verdict.text()}"), found


# The spill figures a budget may limit: (BudgetLimits field, LaunchConfig field, words).
SPILL_LIMITS = (("max_spill_stores", "spill_stores", "spill stores"),
                ("max_spill_loads", "spill_loads", "spill loads"),
                ("max_stack_frame", "stack_frame", "stack frame"))


@rule(
    code="TA902", name="spill-budget", severity="error", source="project-config",
    summary="Register spills over the kernel's budget",
    explanation="""A [[budgets]] entry limits this kernel's spill bytes (no_spills = true allows none). Spills go to
    local memory, which lives in device memory and is cached only in L1/L2. Raise the register cap
    (__launch_bounds__ minBlocks lower, or -maxrregcount higher), or reduce live values. An error, as a budget the
    team set; without a budget spills are TA501, a warning.""",
    trigger={"config": {"budgets": [{"kernel": "*", "no_spills": True}]},
             "log": _k("Used 32 registers, used 0 barriers", "ptxas info    : Function properties for k\n"
                       "    8 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n")},
    clean={"config": {"budgets": [{"kernel": "*", "no_spills": True}]},
           "log": _k("Used 32 registers, used 0 barriers", "ptxas info    : Function properties for k\n"
                     "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n")},
)
def spill_budget(kernel: LintContext, params: dict):
    budget, launch = kernel.budget, kernel.result.kernel
    if budget is None:
        return
    for limit_key, figure, words in SPILL_LIMITS:
        limit, value = getattr(budget, limit_key), getattr(launch, figure)
        if limit is not None and value is not None and value > limit:
            yield (f"{value} B of {words} per thread, budget {limit} B (budget '{budget.kernel}')",
                   {figure: value, "budget": limit})


@rule(
    code="TA903", name="occupancy-below-minimum", severity="error", source="project-config",
    summary="Theoretical occupancy below the configured minimum",
    explanation="""The project requires at least this theoretical occupancy for the kernel (min_occupancy in a
    budget, a [[kernels]] entry or the top-level settings). The message names the limiter and the change that
    restores the minimum; TA301 gives the next steps in detail. An error: the minimum is the team's own; TA302 is
    the unconfigured warning.""",
    trigger={"config": {"min_occupancy": 0.5, "kernels": [{"name": "k", "block_size": 256}]},
             "log": _k("Used 128 registers, used 0 barriers")},
    clean={"config": {"min_occupancy": 0.5, "kernels": [{"name": "k", "block_size": 256}]},
           "log": _k("Used 64 registers, used 0 barriers")},
)
def occupancy_below_minimum(kernel: LintContext, params: dict):
    result, minimum = kernel.result, kernel.minimum
    if minimum is not None and result.launchable and result.occupancy < minimum:
        yield (f"occupancy {result.occupancy:.1%} ({result.active_warps_per_sm}/{result.max_warps_per_sm} warps) "
               f"is below the minimum {minimum:.1%}, limited by {' + '.join(result.limiters)}"), \
            {"occupancy": round(result.occupancy, 6), "minimum": minimum, "limiters": result.limiters}


@rule(
    code="TA904", name="shared-mem-budget", severity="error", source="project-config",
    summary="Shared memory per block over the kernel's budget",
    explanation="""A [[budgets]] entry caps this kernel's static plus dynamic shared memory per block (the reserved
    per-block shared memory not counted). More shared memory per block means fewer resident blocks once shared
    memory limits occupancy. An error, as a budget the team set.""",
    trigger={"config": {"budgets": [{"kernel": "k", "max_shared_mem": "8K"}]},
             "log": _k("Used 32 registers, used 1 barriers, 9216 bytes smem")},
    clean={"config": {"budgets": [{"kernel": "k", "max_shared_mem": "9K"}]},
           "log": _k("Used 32 registers, used 1 barriers, 9216 bytes smem")},
)
def shared_mem_budget(kernel: LintContext, params: dict):
    budget, launch = kernel.budget, kernel.result.kernel
    total = launch.static_shared_mem + launch.dynamic_shared_mem
    if budget is not None and budget.max_shared_mem is not None and total > budget.max_shared_mem:
        yield (f"{total} B of shared memory per block, budget {budget.max_shared_mem} B (budget '{budget.kernel}')",
               {"shared_mem": total, "budget": budget.max_shared_mem})


@rule(
    code="TA905", name="sources-disagree", severity="warning", source="toolchain",
    summary="ptxas, cuobjdump and the binary report different resource usage",
    explanation="""The same kernel on the same architecture was read from more than one source and the figures
    differ: usually a stale log beside a rebuilt binary. The binary's figure is used, because it is what the driver
    loads; otherwise ptxas's. Note that cuobjdump's SHARED includes the reserved per-block shared memory from sm_90
    on; that kilobyte is subtracted before comparing, so it never causes this finding. A warning: the figures lint
    reports may be off, but the build itself is fine; it usually means build outputs of different builds were given
    together. Where lint reads a source's host code, a [[kernels]] entry whose block differs from the launch the
    host code makes is said here too: the entry's block is the one checked.""",
    trigger={"config": {}, "log": _k("Used 32 registers, used 0 barriers\n") + _k("Used 40 registers, used 0 barriers")},
    clean={"config": {}, "log": _k("Used 32 registers, used 0 barriers\n") + _k("Used 32 registers, used 0 barriers")},
)
def sources_disagree(kernel: LintContext, params: dict):
    if kernel.disagreements:
        said = [_disagreement_text(disagreement) for disagreement in kernel.disagreements]
        yield "; ".join(said), {"disagreements": said}


def _disagreement_text(disagreement) -> str:
    """'registers: ptxas 32 (k.log:4), cubin 40 (k.cubin); using ptxas's', or for a config entry's block
    against the host code's launch, 'block: config 256, host code 128 at k.cu:9:3; using the config's'."""
    first, *others = disagreement.readings
    if disagreement.figure == "block":
        host = others[0]
        return f"block: config {first.value}, host code {host.value} at {host.where}; using the config's"
    readings = ", ".join(f"{r.source} {r.value} ({r.where})" for r in disagreement.readings)
    return f"{disagreement.figure}: {readings}; using {first.source}'s"


def _no_launch_settings_for_run(seen: list[tuple[dict, int]]) -> tuple[str, dict]:
    """TA906 once for the run: the kernels no entry configures, counted by the block assumed for them."""
    assumed = list(dict.fromkeys((tuple(details["block_dims"]), details["block_from"]) for details, _ in seen))
    kernels = sum(count for _, count in seen)
    named = list(dict.fromkeys(site for details, _ in seen for site in details.get("run_time_launches", ())))
    details = {"kernels": kernels, "block_dims": [list(dims) for dims, _ in assumed],
               "block_from": [origin for _, origin in assumed]}
    if named:  # the launches in host code that set these kernels' block at run time
        details["run_time_launches"] = named
    return no_launch_settings_message(assumed, kernels, named), details


@rule(
    code="TA906", name="no-launch-settings", severity="info", source="project-config",
    summary="No [[kernels]] entry gives this kernel's launch settings",
    explanation="""Compiler output records registers and static shared memory, never the block size, the dynamic
    shared memory or the carveout a launch uses. Without a matching [[kernels]] entry the lint assumes the default
    block size (--block-size, 256; a kernel's __launch_bounds__ maximum where that is smaller, and the finding says
    so) and no dynamic shared memory, so the occupancy it reports may not be the one the program gets. Where lint
    compiles a CUDA source with the [host] extra, a kernel launched with a block known when the source compiles is
    checked at that launch and needs no entry; a launch whose block is set at run time is named here with its site
    (file:line:column). Add an entry: name = "kernel*", block_size = ..., dynamic_shared_mem = ... Information:
    nothing is wrong with the kernel; the finding says which launch the figures assume.""",
    trigger={"config": {}, "log": _k("Used 32 registers, used 0 barriers")},
    clean={"config": {"kernels": [{"name": "k", "block_size": 128}]}, "log": _k("Used 32 registers, used 0 barriers")},
    per_run=_no_launch_settings_for_run,
)
def no_launch_settings(kernel: LintContext, params: dict):
    if not kernel.launch_given:
        dims = kernel.result.kernel.dims
        details = {"block_dims": list(dims), "block_from": kernel.block_origin}
        named = [f"{launch.kernel}: {run_time_text(launch.run_time, launch.site)}" for launch in kernel.run_time_launches]
        if named:
            details["run_time_launches"] = named
        yield no_launch_settings_message([(dims, kernel.block_origin)], run_time=named), details


def run_time_text(run_time: tuple[str, ...], site: str) -> str:
    """'block size set at run time at softmax.cu:571:5': what a launch at `site` sets at run time
    (lint_facts.RunTimeLaunch.run_time; () says the launch)."""
    values = list(run_time) or ["launch"]
    listed = values[0] if len(values) == 1 else f"{', '.join(values[:-1])} and {values[-1]}"
    return f"{listed} set at run time at {site}"


def no_launch_settings_message(assumed: list[tuple[tuple[int, ...], str]], kernels: int | None = None,
                               run_time: list[str] = ()) -> str:
    """TA906's message: for one kernel, or (`kernels`) once for every kernel of a run no entry
    configures, with each block size assumed and where it came from ("default", "option" for
    --block-size, "launch_bounds" for a kernel's own __launch_bounds__ maximum), and the launches in
    host code that set the block at run time ("k(float*): block size set at run time at k.cu:9:3")."""
    blocks = " or ".join("x".join(map(str, dims)) + _FROM.get(origin, "") for dims, origin in assumed)
    matches = "matches" if kernels is None else f"matches {plural(kernels, 'kernel')}"
    named = f"; {'; '.join(run_time[:_NAMED_SITES])}" if run_time else ""
    more = f" and {len(run_time) - _NAMED_SITES} more" if len(run_time) > _NAMED_SITES else ""
    return f"no [[kernels]] entry {matches}; assumed block {blocks}, no dynamic shared memory{named}{more}"


_NAMED_SITES = 8  # run-time launches named in TA906's one message


_FROM = {"launch_bounds": " (from __launch_bounds__)", "option": " (--block-size)"}


_SPILLING_AT_CAP = (_ENTRY.format("_Z4stepPf") + "ptxas info    : Function properties for _Z4stepPf\n"
                    "    {stack} bytes stack frame, {spills} bytes spill stores, {spills} bytes spill loads\n"
                    "ptxas info    : Used 64 registers, used 0 barriers")
_BOUNDED_SOURCE = "__global__ void __launch_bounds__(256, 4) step(float* out) { /* ... */ }\n"


@rule(
    code="TA907", name="cap-forces-spills", severity="warning", source="pg#launch-bounds",
    summary="A register cap that the kernel can only meet by spilling",
    explanation="""The kernel sits at the register cap its build imposes (__maxnreg__, __launch_bounds__(T, M)
    through the registers M blocks of T threads leave each thread, or -maxrregcount for a kernel with neither) and
    ptxas spilled to meet it. The occupancy the cap buys is paid for in local-memory traffic: time the kernel with
    the cap relaxed (a smaller minBlocks, a larger __maxnreg__, or a larger -maxrregcount, which applies only to a
    kernel with neither attribute), and see `tuneadvise frontier` for the spills at every cap where occupancy
    changes. A warning: the cap is met, at the cost of spills, which may be the right trade; `frontier` measures it.""",
    trigger={"config": {}, "log": _SPILLING_AT_CAP.format(stack=24, spills=24), "source": _BOUNDED_SOURCE},
    clean={"config": {}, "log": _SPILLING_AT_CAP.format(stack=0, spills=0), "source": _BOUNDED_SOURCE},
    machine_code=register_peak,
    related=("pressure_lines", "register pressure peaks here"),
)
def cap_forces_spills(kernel: LintContext, params: dict):
    cap, launch = kernel.register_cap, kernel.result.kernel
    spills = (launch.spill_stores or 0) + (launch.spill_loads or 0)
    if cap is not None and spills and launch.registers >= cap.registers:
        yield (f"{cap.origin} allows {cap.registers} registers per thread; the kernel uses {launch.registers} and "
               f"spills {launch.spill_stores or 0} B of stores and {launch.spill_loads or 0} B of loads per thread to "
               "meet it"), \
            {"register_cap": cap.registers, "cap_origin": cap.origin, "registers": launch.registers,
             "spill_stores": launch.spill_stores, "spill_loads": launch.spill_loads}


@rule(
    code="TA908", name="registers-lost-a-block", severity="warning", source="occ-h#cudaOccMaxBlocksPerSMRegsLimit",
    summary="The register count changed since the earlier build enough to lose resident blocks",
    explanation="""Against the earlier build (the --baseline of lint, the old side of diff) the kernel's registers
    per thread crossed a step of the register staircase at its block size: fewer blocks are resident per SM than
    before. A few registers more often cost nothing; this change did. Cap the count at the earlier figure
    (__launch_bounds__(B, N) or -maxrregcount) if the spills that costs are acceptable, or accept the lower
    occupancy by updating the baseline. A warning on its own; against a baseline a kernel that lost a resident block
    is a regression that fails the run by default (--allow-regressions reports it only).""",
    trigger={"config": {"kernels": [{"name": "k", "block_size": 256}]}, "log": _k("Used 72 registers, used 0 barriers"),
             "previous_registers": 64},
    clean={"config": {"kernels": [{"name": "k", "block_size": 256}]}, "log": _k("Used 62 registers, used 0 barriers"),
           "previous_registers": 64},
)
def registers_lost_a_block(kernel: LintContext, params: dict):
    from ...engine.occupancy import occupancy

    result, previous = kernel.result, kernel.previous_registers
    if previous is None or previous == result.kernel.registers or not result.launchable:
        return
    before = occupancy(result.arch, result.kernel._replace(registers=previous))
    if before.active_blocks_per_sm > result.active_blocks_per_sm:
        yield (f"registers per thread {previous} -> {result.kernel.registers}: {before.active_blocks_per_sm} -> "
               f"{result.active_blocks_per_sm} blocks per SM at block size {result.kernel.block_size} "
               f"(occupancy {before.occupancy:.1%} -> {result.occupancy:.1%})"), \
            {"previous_registers": previous, "registers": result.kernel.registers,
             "previous_blocks_per_sm": before.active_blocks_per_sm, "blocks_per_sm": result.active_blocks_per_sm}


@rule(
    code="TA909", name="launch-assumption-broken", severity="error", source="project-config",
    summary="The compiled kernel no longer reaches the resident blocks per SM the host code assumes",
    explanation="""A [[kernels]] entry records what the host code was written for: min_blocks_per_sm (a persistent
    or cooperative grid that needs that many blocks resident at once) or expected_blocks_per_sm (a grid sized as SMs
    x N). The kernel as compiled reaches fewer: a cooperative launch fails, and a grid sized for more resident
    blocks runs in an extra wave. Bring the registers or shared memory back under the step (the finding names the
    limiter; TA301 gives the figures), or change the host code and the entry. An error: the host code's launch
    assumption is now false (a persistent or cooperative launch may fail or deadlock, a grid sized for N blocks per
    SM runs an extra wave).""",
    trigger={"config": {"kernels": [{"name": "k", "block_size": 256, "expected_blocks_per_sm": 10}]},
             "log": _k("Used 69 registers, used 0 barriers")},
    clean={"config": {"kernels": [{"name": "k", "block_size": 256, "expected_blocks_per_sm": 7}]},
           "log": _k("Used 32 registers, used 0 barriers")},
)
def launch_assumption_broken(kernel: LintContext, params: dict):
    result = kernel.result
    for key, blocks in kernel.assumed_blocks:
        if result.active_blocks_per_sm < blocks:
            yield (f"{key} = {blocks}, but the kernel as compiled ({result.kernel.registers} registers, "
                   f"{result.kernel.static_shared_mem + result.kernel.dynamic_shared_mem} B shared memory, block "
                   f"{result.kernel.block_size}) reaches {result.active_blocks_per_sm} blocks per SM, limited by "
                   f"{' + '.join(result.limiters) or 'nothing'}"), \
                {key: blocks, "blocks_per_sm": result.active_blocks_per_sm, "limiters": list(result.limiters)}
