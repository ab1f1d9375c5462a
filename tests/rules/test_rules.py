"""Every rule has an example that triggers it and one that does not; both run here."""

import pytest

from tuneadvise.advisor.engine.occupancy import occupancy
from tuneadvise.advisor.launch import LaunchConfig
from tuneadvise.advisor.rules import LaunchContext, RuleSelection, check_occupancy, finding_of, registry
from tuneadvise.advisor.rules.lint_facts import Disagreement, Reading
from tuneadvise.specs.catalog import describe_source, shipped_catalog

from ..reference import nvcc
from ..reference.header import required

RULES = sorted(registry())


def codes_for(example: dict) -> set:
    if "ncu" in example:
        from tuneadvise.advisor.measured import measure, profiled_findings
        from tuneadvise.advisor.readers.ncu import read_lines
        from tuneadvise.advisor.rules.families.ta0_measured import example_export

        launch = read_lines(example_export(example["ncu"]).splitlines(keepends=True), "report.csv").launches[0]
        return {f.code for f in profiled_findings(measure(launch), minimum=example.get("min_achieved_occupancy"))}
    if "cuda" in example:
        return compiled_codes(example)
    if "log" in example:
        from tuneadvise.advisor.lint.config import LintConfig
        from tuneadvise.advisor.lint.run import LintOptions, lint_records
        from tuneadvise.advisor.readers.compiler_output import parse_ptxas
        from tuneadvise.advisor.readers.source_index import SourceIndex

        records = list(parse_ptxas(example["log"].splitlines()))
        previous = {(r.name, r.arch): example["previous_registers"] for r in records if "previous_registers" in example}
        options = LintOptions(config=LintConfig.model_validate(example["config"]), previous_registers=previous)
        sources = SourceIndex()
        if "source" in example:
            sources.add_file("example.cu", example["source"])
        report = lint_records(records, options, sources)
        return {f.code for _, f in report.all_findings()}
    if "source" in example:
        from tuneadvise.advisor.rules.source_scan import scan_source

        target = shipped_catalog().resolve(example["target"]).arch
        return {f.code for f in scan_source(example["source"], "example.cu", [target])}
    resolved, result = analyze_example(example)
    return {f.code for f in check_occupancy(resolved, result)}


def compiled_codes(example: dict) -> set:
    """Lint a rule's CUDA example as the command does: compiled for its target with -lineinfo
    by NVIDIA's compiler, the cubin's machine code read by nvdisasm (skipped where either is missing)."""
    import json
    import tempfile
    from pathlib import Path

    from click.testing import CliRunner

    from tuneadvise.cli.main import cli

    required(nvcc.installed, "NVIDIA's compiler and disassembler, to compile the example (the [nvcc] extra)")
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "file.cu"
        source.write_text(example["cuda"])
        result = CliRunner().invoke(cli, ["lint", str(source), "--arch", example["target"], "--sass", "--format",
                                          "json"])
    assert result.exit_code in (0, 1), result.output
    return {f["code"] for k in json.loads(result.stdout)["kernels"] for f in k["findings"]}


def analyze_example(example: dict):
    values = dict(example)
    resolved = shipped_catalog().resolve(values.pop("arch"))
    return resolved, occupancy(resolved.arch, LaunchConfig.from_mapping(values))


@pytest.mark.parametrize("code", RULES)
def test_rule_triggers_on_its_example(code):
    assert code in codes_for(registry()[code].trigger)


@pytest.mark.parametrize("code", RULES)
def test_rule_stays_quiet_on_its_clean_example(code):
    assert code not in codes_for(registry()[code].clean)


@pytest.mark.parametrize("code", RULES)
def test_rule_metadata_is_complete(code):
    rule = registry()[code]
    assert rule.severity in ("error", "warning", "info")
    assert rule.summary and len(rule.explanation) > 40
    assert describe_source(rule.source) != rule.source, "source must resolve in specs/data/sources.toml"


def test_selection_by_prefix_and_ignore():
    resolved, result = analyze_example({"arch": "volta", "registers": 64, "block_size": 200})
    everything = {f.code for f in check_occupancy(resolved, result)}
    assert {"TA201", "TA301"} <= everything
    only_shape = {f.code for f in check_occupancy(resolved, result, RuleSelection.parse("TA2", None))}
    assert only_shape == {c for c in everything if c.startswith("TA2")}
    ignored = {f.code for f in check_occupancy(resolved, result, RuleSelection.parse(None, "TA201,TA3"))}
    assert "TA201" not in ignored and not any(c.startswith("TA3") for c in ignored)
    with pytest.raises(ValueError, match="--select"):
        RuleSelection.parse("XX9", None)


def test_limiter_message_names_the_next_step_and_the_change():
    resolved, result = analyze_example({"arch": "volta", "registers": 44, "block_size": 256})
    [finding] = [f for f in check_occupancy(resolved, result) if f.code == "TA301"]
    assert "registers: 44 -> 40 gives 6 blocks/SM, 62.5% -> 75%" in finding.message
    assert "__launch_bounds__(256, 6), or -maxrregcount=40 for a kernel without __launch_bounds__" in finding.message
    assert finding.message.endswith("; verdict: unknown (no build, machine code or profile decides it: time it)")
    assert finding.details["verdict"]["outcome"] == "unknown"
    step = {k: v for k, v in finding.details["next_steps"][1].items() if k != "verdict"}
    assert step == {"resource": "registers", "value": 32, "blocks_per_sm": 8, "occupancy": 1.0}


def test_a_kernel_with_launch_bounds_is_told_to_change_their_second_argument_never_the_flag():
    """ptxas ignores -maxrregcount for a kernel with __launch_bounds__: the old message offered it."""
    resolved, result = analyze_example({"arch": "hopper", "registers": 48, "block_size": 256,
                                        "max_threads_per_block": 256})
    [finding] = [f for f in check_occupancy(resolved, result) if f.code == "TA301"]
    assert "__launch_bounds__(256, 6); -maxrregcount is ignored for a kernel with __launch_bounds__" in finding.message
    assert finding.details["register_change"] == {"via": "launch_bounds", "launch_bounds": [256, 6], "maxnreg": None,
                                                  "register_cap": 40, "maxrregcount": None}


@pytest.mark.parametrize(("bounds", "said"), [
    (None, "cap at exactly 40 with __maxnreg__(40) (CUDA 12.4 and later), or -maxrregcount=40 for a kernel "
           "without __launch_bounds__; __launch_bounds__(256, 6) gives the same cap"),
    (256, "cap at exactly 40 with __maxnreg__(40) in place of its __launch_bounds__ (CUDA 12.4 and later; nvcc "
          "refuses both on one kernel, and ignores -maxrregcount beside either); __launch_bounds__(256, 6) gives "
          "the same cap"),
])
def test_a_register_budget_names_the_cap_the_compiler_obeys(bounds, said):
    """TA901 offered -maxrregcount to every kernel, also to one whose __launch_bounds__ make ptxas ignore it."""
    from tuneadvise.advisor.rules import BudgetLimits, LintContext
    from tuneadvise.advisor.rules.families.ta9_lint import register_budget

    resolved, _ = analyze_example({"arch": "hopper", "registers": 48, "block_size": 256})
    result = occupancy(resolved.arch, LaunchConfig(registers=48, block_size=256, max_threads_per_block=bounds))
    context = LintContext(result, budget=BudgetLimits(kernel="k", max_registers=40))
    [(message, details)] = list(register_budget.check(context, dict(register_budget.params)))
    assert said in message
    assert details["register_change"]["register_cap"] <= 40


def test_a_budget_the_bounds_cannot_meet_is_offered_exactly_with_the_bounds_cost_beside_it():
    """A budget of 96 against 100 registers: __launch_bounds__(256, 3) means 80 registers, not 96."""
    from tuneadvise.advisor.rules import BudgetLimits, LintContext
    from tuneadvise.advisor.rules.families.ta9_lint import register_budget

    resolved, _ = analyze_example({"arch": "hopper", "registers": 100, "block_size": 256})
    result = occupancy(resolved.arch, LaunchConfig(registers=100, block_size=256))
    context = LintContext(result, budget=BudgetLimits(kernel="k", max_registers=96))
    [(message, details)] = list(register_budget.check(context, dict(register_budget.params)))
    assert "cap at exactly 96 with __maxnreg__(96) (CUDA 12.4 and later), or -maxrregcount=96" in message
    assert "__launch_bounds__(256, 3) instead caps at 80, 16 under the budget" in message
    change = details["register_change"]
    assert (change["maxnreg"], change["maxrregcount"], change["alternative"]["launch_bounds"],
            change["alternative"]["register_cap"]) == (96, 96, [256, 3], 80)


@pytest.mark.parametrize(("control", "said"), [
    ("__maxnreg__", "(__maxnreg__(40); -maxrregcount is ignored for a kernel with __maxnreg__)"),
    ("triton", "(maxnreg=40 in its triton.Config)"),
])
def test_a_kernel_capped_another_way_is_told_that_way(control, said):
    """nvcc refuses __launch_bounds__ beside __maxnreg__, and a Triton kernel has neither: each is capped its own way."""
    from tuneadvise.advisor.rules.families.ta3_occupancy import occupancy_limiter

    resolved, _ = analyze_example({"arch": "hopper", "registers": 48, "block_size": 256})
    result = occupancy(resolved.arch, LaunchConfig(registers=48, block_size=256, register_control=control))
    [(message, details)] = list(occupancy_limiter.check(LaunchContext(result, None), dict(occupancy_limiter.params)))
    assert said in message and "-maxrregcount=" not in message
    assert details["register_change"]["maxnreg"] == 40


def test_bounds_above_the_block_are_changed_at_their_own_thread_count():
    """__launch_bounds__(1024) with a block of 256: the cap ptxas derives is for 1024 threads, so minBlocks
    counts 1024-thread blocks (65536 / (1024 * 2) = 32 registers), not the launch's."""
    resolved, result = analyze_example({"arch": "hopper", "registers": 40, "block_size": 256,
                                        "max_threads_per_block": 1024})
    [finding] = [f for f in check_occupancy(resolved, result) if f.code == "TA301"]
    assert finding.details["register_change"]["launch_bounds"] == [1024, 2]
    assert finding.details["register_change"]["register_cap"] == 32


@pytest.mark.parametrize("limit", [1, 31])
def test_a_thread_limit_below_one_warp_leaves_no_block_size_to_advise(limit):
    """A max_threads_per_block under the warp size left the block-size table empty and TA301 crashed."""
    resolved, result = analyze_example({"arch": "volta", "registers": 0, "block_size": 1, "max_threads_per_block": limit})
    findings = {f.code: f for f in check_occupancy(resolved, result)}
    assert "blocks: 32 blocks of 1 warp per SM" in findings["TA301"].message
    assert findings["TA201"].message.endswith("; use 32")


def test_tail_effect_numbers():
    resolved, result = analyze_example({"arch": "h100-sxm", "registers": 32, "block_size": 256, "grid_size": 1200})
    [tail] = [f for f in check_occupancy(resolved, result) if f.code == "TA703"]
    # 8 blocks/SM x 132 SMs = 1056 per wave; 1 full wave + 144 blocks; (1 - 144/1056) / 2.
    assert tail.details["blocks_per_wave"] == 1056 and tail.details["partial_wave_blocks"] == 144
    assert tail.details["tail_share_upper_bound"] == pytest.approx((1 - 144 / 1056) / 2, abs=1e-4)
    assert "upper bound" in tail.message


def test_source_scan_reports_file_and_line_and_honours_suppression():
    from tuneadvise.advisor.rules.source_scan import scan_source

    text = "// __shfl(x, 1) in a comment is fine\n__global__ void k(float x) {\n  float a = __shfl_xor(x, 1);\n" \
           "  float b = __ballot(x > 0); // tuneadvise: ignore[TA801]\n  /* __any(1) */ }\n"
    findings = scan_source(text, "k.cu", [shipped_catalog().resolve("sm_70").arch])
    assert [(f.code, f.details["line"]) for f in findings] == [("TA801", 3)]
    assert findings[0].message.startswith("k.cu:3:13: __shfl_xor")
    assert scan_source(text, "k.cu", [shipped_catalog().resolve("sm_60").arch]) == []  # Pascal: lock-step holds


def test_findings_are_not_interned_across_kernels():
    # No module-global interning: two kernels' findings never share an object or a details dict.
    first_resolved, first = analyze_example({"arch": "volta", "registers": 64, "block_size": 256})
    second_resolved, second = analyze_example({"arch": "volta", "registers": 64, "block_size": 256})
    a = {f.code: f for f in check_occupancy(first_resolved, first)}
    b = {f.code: f for f in check_occupancy(second_resolved, second)}
    assert a.keys() == b.keys() and a["TA301"] == b["TA301"]
    assert a["TA301"] is not b["TA301"] and a["TA301"].details is not b["TA301"].details
    assert finding_of(registry()["TA302"], "words", "sm_90", {"occupancy": 1}, "info").severity == "info"


def _first_loss(arch, config, blocks, values, vary):
    """Brute force: the first value whose configuration keeps fewer than `blocks` blocks/SM."""
    for value in values:
        if occupancy(arch, vary(config, value)).active_blocks_per_sm < blocks:
            return value
    return None


def test_near_cliff_names_the_first_value_that_loses_a_block():
    # The cliff is the first value that loses a block (at 62 registers on volta, 64 still gives
    # 4 blocks and 65 drops), never "0 more" at an exact boundary. Held to a brute-force scan.
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from tuneadvise.advisor.engine.whatif import with_total_shared_mem

    catalog = shipped_catalog()
    margin = registry()["TA304"].params

    @settings(max_examples=250, deadline=None)
    @given(arch=st.sampled_from(["sm_35", "sm_52", "sm_61", "sm_70", "sm_75", "sm_86", "sm_90", "sm_120"]),
           registers=st.integers(16, 128), block=st.sampled_from([64, 96, 128, 256, 512]),
           smem=st.sampled_from([0, 1000, 4096, 12288, 16384, 24000]))
    def check(arch, registers, block, smem):
        resolved = catalog.resolve(arch)
        config = LaunchConfig(registers=registers, block_size=block, static_shared_mem=smem)
        result = occupancy(resolved.arch, config)
        if not result.launchable:
            return
        found = {f.details["resource"]: f for f in check_occupancy(resolved, result) if f.code == "TA304"}
        blocks = result.active_blocks_per_sm
        most = resolved.arch.max_registers_per_thread
        regs_loss = _first_loss(resolved.arch, config, blocks, range(registers + 1, most + 1),
                                lambda c, v: c.replace(registers=v))
        if regs_loss is not None and regs_loss - registers - 1 < margin["register_margin"]:
            finding = found.pop("registers")
            assert finding.details["drops_at"] == regs_loss
            assert finding.details["headroom"] == regs_loss - registers - 1
            assert f"registers: {regs_loss} per thread" in finding.message
        else:
            assert "registers" not in found
        if smem:
            ceiling = resolved.arch.shared_mem_per_block
            smem_loss = _first_loss(resolved.arch, config, blocks, range(smem + 1, min(ceiling, smem + 2048) + 1),
                                    with_total_shared_mem)
            if smem_loss is not None and smem_loss - smem - 1 < margin["shared_mem_margin"]:
                finding = found.pop("shared_memory")
                assert finding.details["drops_at"] == smem_loss
                assert f"shared memory: {smem_loss} B per block" in finding.message
        if result.occupancy == 1.0:
            assert all(f.severity == "info" for f in check_occupancy(resolved, result) if f.code == "TA304")

    check()


def test_near_cliff_is_info_at_full_occupancy():
    # lint --fail-on warning must not fail a kernel at 100% occupancy for being near a cliff.
    resolved, result = analyze_example({"arch": "volta", "registers": 32, "block_size": 256})
    assert result.occupancy == 1.0
    near = [f for f in check_occupancy(resolved, result) if f.code == "TA304"]
    assert near and all(f.severity == "info" for f in near)
    assert near[0].details["drops_at"] == 33


def test_block_advice_names_the_smallest_block_that_reaches_the_best_occupancy():
    # The smallest block that reaches the best occupancy (96 on sm_86), not the largest (768).
    resolved, result = analyze_example({"arch": "sm_86", "registers": 32, "block_size": 32})
    [advice] = [f for f in check_occupancy(resolved, result) if f.code == "TA301"]
    assert "block size 96 gives 100%" in advice.message
    best = max(occupancy(resolved.arch, result.kernel.replace(block_size=b)).occupancy for b in range(32, 1025, 32))
    smallest = min(b for b in range(32, 1025, 32)
                   if occupancy(resolved.arch, result.kernel.replace(block_size=b)).occupancy == best)
    assert smallest == 96


def test_barriers_are_advised_only_when_fewer_alone_gain_a_block():
    # sm_120, 32 registers, block 32: barriers co-limit with the block limit, and --barriers 0
    # still gives 24 blocks, so fewer barriers is no advice.
    resolved, result = analyze_example({"arch": "sm_120", "registers": 32, "block_size": 32})
    assert "barriers" in result.limiters
    assert occupancy(resolved.arch, result.kernel.replace(barriers=0)).active_blocks_per_sm == 24
    [advice] = [f for f in check_occupancy(resolved, result) if f.code == "TA301"]
    assert "barriers: " not in advice.message.split("limited by blocks + barriers: ")[1]
    resolved, result = analyze_example({"arch": "sm_90", "registers": 32, "block_size": 64, "barriers": 3})
    [advice] = [f for f in check_occupancy(resolved, result) if f.code == "TA301"]
    assert "barriers: 3 -> 2 per block gives 32 blocks/SM" in advice.message
    assert occupancy(resolved.arch, result.kernel.replace(barriers=2)).active_blocks_per_sm == 32


def test_a_grid_under_one_wave_is_under_occupied_not_idle():
    # 41 blocks on a T4's 40 SMs leave no SM idle: the grid is under one wave, not idle SMs.
    resolved, result = analyze_example({"arch": "t4", "registers": 32, "block_size": 256, "grid_size": 41})
    [tail] = [f for f in check_occupancy(resolved, result) if f.code == "TA703"]
    assert "no SM is idle" in tail.message and "idle (" not in tail.message


def test_single_block_sms_are_counted_as_the_blocks_are_handed_out():
    # 512 threads on a T4: two blocks per SM, a wave of 80; from 77 blocks the grid is within 5% of it
    for grid in (77, 78, 79):
        resolved, result = analyze_example({"arch": "t4", "registers": 32, "block_size": 512, "grid_size": grid})
        per_sm = [0] * 40
        for block in range(grid):  # breadth first: one block per SM, then a second round
            per_sm[block % 40] += 1
        [finding] = [f for f in check_occupancy(resolved, result) if f.code == "TA702"]
        assert finding.details["single_block_sms"] == per_sm.count(1)
        assert f"leaves {per_sm.count(1)} SM" in finding.message


def test_a_grid_well_under_a_wave_is_one_finding_naming_the_barriers():
    """One cause, one finding: 40 to 76 blocks of 512 threads on a T4 are well under its wave of
    80; TA703 says so and names the single-block SMs' barriers, TA702 does not repeat it."""
    for grid in (40, 41, 50, 76):
        resolved, result = analyze_example({"arch": "t4", "registers": 32, "block_size": 512, "grid_size": grid})
        found = {f.code: f for f in check_occupancy(resolved, result)}
        assert "TA702" not in found and "__syncthreads" in found["TA703"].message


def test_volta_code_on_turing_is_about_tensor_cores_only_where_they_are_used():
    resolved, result = analyze_example({"arch": "turing", "registers": 32, "block_size": 256, "compiled_for": "sm_70"})
    [finding] = [f for f in check_occupancy(resolved, result) if f.code == "TA602"]
    assert "if it uses tensor cores" in finding.message


# -- the registry: rules as objects, every kind through one selection ---------------------

def test_rules_are_discovered_from_their_family_modules():
    import importlib
    import pkgutil

    from tuneadvise.advisor.rules import Rule, families

    found = {}
    for module in pkgutil.iter_modules(families.__path__):
        prefix = module.name.split("_")[0].upper()  # ta3_occupancy holds TA3xx
        for value in vars(importlib.import_module(f"{families.__name__}.{module.name}")).values():
            if isinstance(value, Rule):
                assert value.code.startswith(prefix), (module.name, value.code)
                found[value.code] = value
    assert found == registry()


def test_a_rules_kind_follows_from_its_checks_context_type():
    from tuneadvise.advisor.engine.occupancy import Occupancy
    from tuneadvise.advisor.rules import LintContext, MeasuredContext, SourceLine, rule

    kinds = {Occupancy: "config", LaunchContext: "config", LintContext: "lint", SourceLine: "source",
             MeasuredContext: "measured"}
    for code, r in registry().items():
        assert kinds[r.context] == r.kind, code
    assert {r.context for r in registry().values() if r.code.startswith("TA7")} == {LaunchContext}

    texts = {"code": "TA999", "name": "x", "severity": "info", "summary": "s", "explanation": "e",
             "source": "bpg", "trigger": {}, "clean": {}}

    def untyped(result, params):
        yield from ()

    def wrong(result: dict, params: dict):
        yield from ()

    for check in (untyped, wrong):
        with pytest.raises(TypeError, match="first parameter"):
            rule(**texts)(check)


def _lint_context(registers=32, block=256, smem=0, spills=(None, None, None), **fields):
    from tuneadvise.advisor.rules import LintContext

    stores, loads, stack = spills
    launch = LaunchConfig(registers=registers, block_size=block, static_shared_mem=smem, spill_stores=stores,
                          spill_loads=loads, stack_frame=stack)
    return LintContext(result=occupancy(shipped_catalog().resolve("sm_90").arch, launch), **fields)


def test_lint_rules_run_on_their_context_through_the_selection():
    from tuneadvise.advisor.lint.config import LintConfig
    from tuneadvise.advisor.rules import BudgetLimits, lint_findings

    def codes(context, selection=None):
        return sorted(f.code for f in lint_findings(context, selection or RuleSelection()))

    # no_spills: both spill figures limited to 0, the stack frame not limited at all.
    [config_budget] = LintConfig.model_validate({"budgets": [{"kernel": "k*", "no_spills": True,
                                                             "max_registers": 32, "max_shared_mem": "8K"}]}).budgets
    budget = BudgetLimits.of(config_budget)
    assert budget == BudgetLimits(kernel="k*", max_registers=32, max_spill_stores=0, max_spill_loads=0,
                            max_stack_frame=None, max_shared_mem=8192)
    over = _lint_context(registers=40, smem=9216, spills=(8, 8, 8), budget=budget, minimum=0.9,
                         disagreements=(Disagreement("registers", (Reading("ptxas", "40", "k.log:3"),
                                                                   Reading("cubin", "32", "k.cubin"))),),
                         launch_given=False)
    assert codes(over) == ["TA901", "TA902", "TA902", "TA903", "TA904", "TA905", "TA906"]
    [disagree] = [f for f in lint_findings(over, RuleSelection()) if f.code == "TA905"]
    assert disagree.message == "registers: ptxas 40 (k.log:3), cubin 32 (k.cubin); using ptxas's"
    assert {f.arch for f in lint_findings(over, RuleSelection())} == {"sm_90"}
    spills = [f for f in lint_findings(over, RuleSelection()) if f.code == "TA902"]
    assert [f.details for f in spills] == [{"spill_stores": 8, "budget": 0}, {"spill_loads": 8, "budget": 0}]
    assert codes(over, RuleSelection.parse("TA90", "TA902,TA906")) == ["TA901", "TA903", "TA904", "TA905"]
    assert codes(over, RuleSelection.parse("TA3", None)) == []
    within = _lint_context(registers=32, smem=8192, spills=(0, 0, 8), budget=budget, minimum=0.5)
    assert codes(within) == []
    assert BudgetLimits.of(LintConfig.model_validate({"budgets": [{"max_spill_bytes": 16}]}).budgets[0]).max_spill_stores == 16


def test_ta906_words_the_run_time_launches_lint_hands_it_as_facts():
    from tuneadvise.advisor.rules import lint_findings
    from tuneadvise.advisor.rules.lint_facts import RunTimeLaunch

    sites = (RunTimeLaunch("grow(float*)", "grow.cu:3:3", ("block size",)),
             RunTimeLaunch("grow(float*)", "grow.cu:9:5", ("block size", "grid", "dynamic shared memory")),
             RunTimeLaunch("grow(float*)", "grow.cu:12:5", ()))
    [finding] = lint_findings(_lint_context(launch_given=False, run_time_launches=sites), RuleSelection.parse("TA906", None))
    said = ["grow(float*): block size set at run time at grow.cu:3:3",
            "grow(float*): block size, grid and dynamic shared memory set at run time at grow.cu:9:5",
            "grow(float*): launch set at run time at grow.cu:12:5"]
    assert finding.details["run_time_launches"] == said
    assert finding.message == "no [[kernels]] entry matches; assumed block 256, no dynamic shared memory; " + "; ".join(said)


def test_source_rules_go_through_the_selection():
    from tuneadvise.advisor.rules.source_scan import scan_source

    text = "int a = __shfl(a, 1); int b = __mul24(2, 3); volatile float *p;\n"
    volta = [shipped_catalog().resolve("sm_70").arch]
    assert [f.code for f in scan_source(text, "k.cu", volta)] == ["TA801", "TA802", "TA803"]
    assert [f.code for f in scan_source(text, "k.cu", volta, RuleSelection.parse("TA803", None))] == ["TA803"]
    assert [f.code for f in scan_source(text, "k.cu", volta, RuleSelection.parse(None, "TA80"))] == []


def test_rule_params_are_read_only():
    with pytest.raises(TypeError):
        registry()["TA302"].params["threshold"] = 0


# -- explain and the rules list at 80 columns ------------------------------------------------

def _at_80(*args):
    from click.testing import CliRunner

    from tuneadvise.cli.main import cli

    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "80"})


@pytest.mark.parametrize("code", RULES)
def test_explain_wraps_between_words_and_prints_the_examples(code):
    from tuneadvise.advisor.rules.markdown import example_command

    rule = registry()[code]
    result = _at_80("explain", code)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(map(len, lines)) <= 80, max(lines, key=len)
    # Every word of the explanation comes out whole ("regist/ers" was cut at the edge).
    words = result.output.split()
    for word in rule.explanation.split():
        assert word in words, word
    assert "Triggers:" in result.output and "Does not trigger:" in result.output
    # The examples as docs/rules.md gives them, a command continued with ` \` where it wraps.
    shown = result.output.replace(" \\\n", " ")
    for example in (rule.trigger, rule.clean):
        for line in example_command(example).splitlines():
            assert " ".join(line.split()) in " ".join(shown.split()), line


def test_rules_list_keeps_names_whole_at_80_columns():
    result = _at_80("rules")
    assert result.exit_code == 0 and "…" not in result.output
    assert max(map(len, result.output.splitlines())) <= 80
    rows = [line.split() for line in result.output.splitlines()]
    for rule in registry().values():
        assert [rule.code, rule.name, rule.severity] in [row[:3] for row in rows], rule.code


def test_counted_nouns_are_singular_at_one():
    # "1 blocks/SM", "fills 1 warps with 1 idle lanes" were printed.
    resolved, result = analyze_example({"arch": "volta", "registers": 32, "block_size": 31})
    [shape] = [f for f in check_occupancy(resolved, result) if f.code == "TA201"]
    assert "fills 1 warp with 1 idle lane;" in shape.message
    resolved, result = analyze_example({"arch": "volta", "registers": 255, "block_size": 256,
                                        "dynamic_shared_mem": "90K", "opt_in": True})
    assert result.active_blocks_per_sm == 1
    [limit] = [f for f in check_occupancy(resolved, result) if f.code == "TA301"]
    assert "1 block/SM" in limit.message and "1 blocks" not in limit.message


def test_lint_takes_its_own_findings_from_the_rules_layer():
    """lint/run.py builds a LintContext and runs the registry's TA9xx rules: one kernel's findings,
    config and lint rules alike, name the one architecture the engine analysed (an sm_90a log is sm_90)."""
    from tuneadvise.advisor.lint.config import LintConfig
    from tuneadvise.advisor.lint.run import LintOptions, lint_records
    from tuneadvise.advisor.readers.compiler_output import parse_ptxas

    log = ("ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
           "ptxas info    : Used 128 registers, used 0 barriers")
    config = LintConfig.model_validate({"min_occupancy": 0.9, "budgets": [{"kernel": "k", "max_registers": 64}]})
    report = lint_records(parse_ptxas(log.splitlines()), LintOptions(config=config))
    [kernel] = report.kernels
    codes = [f.code for f in kernel.findings]
    assert {"TA901", "TA903"} <= set(codes) and any(not c.startswith("TA9") for c in codes)
    assert {f.arch for f in kernel.findings} == {"sm_90"}
    assert [f.code for f in report.source_findings] == ["TA906"]  # said once for the run, not on the kernel


def test_a_dynamically_indexed_local_array_without_spills_is_flagged(tmp_path):
    """ptxas's report for a kernel with a 256-byte stack frame and no spills (recorded with
    CUDA 13.5 for sm_90): lint gives TA502 with the local bytes, and not for spills alone."""
    import json

    from click.testing import CliRunner

    from tuneadvise.cli.main import cli

    from ..helpers import TESTS

    log = TESTS / "fixtures" / "sources" / "local_array.sm_90.log"
    result = CliRunner().invoke(cli, ["lint", str(log), "--arch", "sm_90", "--format", "json"])
    (kernel,) = json.loads(result.output)["kernels"]
    (finding,) = [f for f in kernel["findings"] if f["code"] == "TA502"]
    assert finding["details"]["local_bytes"] == 256 and kernel["stack_frame"] == 256
    assert finding["severity"] == "warning"
    spills_only = log.read_text().replace("0 bytes spill stores", "256 bytes spill stores")
    (tmp_path / "spills.log").write_text(spills_only)
    result = CliRunner().invoke(cli, ["lint", str(tmp_path / "spills.log"), "--arch", "sm_90", "--format", "json"])
    codes = {f["code"] for f in json.loads(result.output)["kernels"][0]["findings"]}
    assert "TA501" in codes and "TA502" not in codes


@pytest.mark.parametrize(("arch", "block", "fires"), [
    ("rtx4090", "16x16", False),  # 64 B rows: two full 32-byte sectors
    ("rtx4090", "8x32", False),  # 32 B rows: one sector
    ("rtx4090", "4x64", True),  # 16 B rows: half a sector each
    ("h100-sxm", "24x8", False),  # 96 B: three sectors
    ("fermi", "16x16", True),  # 64 B of a 128-byte L1 line
    ("fermi", "32x8", False),
])
def test_block_rows_are_judged_by_the_architectures_sector(arch, block, fires):
    resolved = shipped_catalog().resolve(arch)
    result = occupancy(resolved.arch, LaunchConfig.from_mapping({"registers": 32, "block_size": block}))
    assert any(f.code == "TA202" for f in check_occupancy(resolved, result)) == fires


def test_every_architecture_has_a_sourced_sector_size():
    for arch in shipped_catalog().sorted_archs():
        assert arch.global_memory_sector_bytes in (32, 128), arch.cc
        assert describe_source(arch.source_of("global_memory_sector_bytes")) != arch.source_of("global_memory_sector_bytes")


def test_a_kernel_at_full_occupancy_next_to_a_cliff_is_told_not_warned():
    """32 registers at 256 threads on 9.0: 100% occupancy, and 33 would cost a block. Nothing is
    lost, so a team failing on warnings is not failed by it."""
    resolved, result = analyze_example({"arch": "sm_90", "registers": 32, "block_size": 256})
    findings = check_occupancy(resolved, result)
    assert [f.code for f in findings if f.code == "TA304"] == ["TA304"]
    assert [f for f in findings if f.severity != "info"] == []
