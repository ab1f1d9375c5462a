"""Register-cap advice against NVIDIA's compiler: every change TA301 and TA304 suggest for
the suite's kernels, applied (the kernel's __launch_bounds__ written or changed in a copy
of the source, or -maxrregcount added to the build), gives the register count the advice
promised or fewer, on sm_80, sm_90 and sm_120. The figures are ptxas's own (read by
tests/reference/nvcc.py, not by tuneadvise). Needs the `[nvcc]` toolchain."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tuneadvise.advisor.engine.occupancy import occupancy
from tuneadvise.advisor.launch import LaunchConfig
from tuneadvise.advisor.readers.source_index import SourceIndex
from tuneadvise.advisor.rules import LaunchContext
from tuneadvise.advisor.rules.families.ta3_occupancy import near_cliff, occupancy_limiter
from tuneadvise.specs.resolve import resolve_arch

from ..helpers import ROOT
from ..reference import nvcc
from ..toolchain import test_compile_loop
from ..toolchain.test_compile_loop import fixture_truth, required_toolchain, run

use = test_compile_loop.use  # the fixture that points tuneadvise's discovery at the test's toolchain

pytestmark = pytest.mark.reference

SOURCES = (ROOT / "tests" / "gpu" / "lint_kernels.cu", ROOT / "tests" / "gpu" / "occupancy_kernels.cu",
           ROOT / "tests" / "fixtures" / "sources" / "tiled_kernels.cu",
           ROOT / "tests" / "fixtures" / "sources" / "library_kernels.cu",
           ROOT / "tests" / "fixtures" / "sources" / "launch_bounds.cu")
LAUNCH_BOUNDS = SOURCES[-1]
ARCHS = ("sm_80", "sm_90", "sm_120")
DEFAULT_BLOCK = 256
_BOUNDS = re.compile(r"__launch_bounds__\s*\([^)]*\)")
_MAXNREG = re.compile(r"__maxnreg__\s*\([^)]*\)")


@pytest.fixture(scope="module")
def chain():
    return required_toolchain()


def suggestions(chain, source: Path, arch: str):
    """(mangled name, its source definition, the change TA301/TA304 suggest) for each kernel of
    `source` on `arch`, at the block lint assumes (its bounds' maximum if below 256)."""
    index = SourceIndex()
    index.add_file(str(source), source.read_text())
    resolved = resolve_arch(arch)
    found = []
    for name, figures in fixture_truth(chain, source, arch).items():
        definition = index.lookup(nvcc_base_name(name))
        bound = definition.max_threads if definition is not None else None
        launch = LaunchConfig(registers=figures["registers"], block_size=min(DEFAULT_BLOCK, bound or DEFAULT_BLOCK),
                              static_shared_mem=figures["shared_mem"], max_threads_per_block=bound)
        if definition is not None and definition.max_registers is not None:
            launch = launch._replace(register_control="__maxnreg__")  # as lint reads the source
        result = occupancy(resolved, launch)
        for rule in (occupancy_limiter, near_cliff):
            context = LaunchContext(result, None) if rule.context is LaunchContext else result
            for finding in rule.check(context, dict(rule.params)):
                change = finding[1].get("register_change")
                if change is not None:
                    found.append((name, definition, change, figures["registers"]))
    return found


def nvcc_base_name(mangled: str) -> str:
    from tuneadvise.advisor.lint.run import kernel_names

    return kernel_names(mangled)[2]


def with_bounds(text: str, line: int, change: dict) -> str:
    """`text` with the kernel defined at `line` (1-based, its __global__ line) changed as `change` says."""
    lines = text.split("\n")
    here = lines[line - 1]
    if change["maxnreg"] is not None:
        assert _MAXNREG.search(here), here
        lines[line - 1] = _MAXNREG.sub(f"__maxnreg__({change['maxnreg']})", here, count=1)
        return "\n".join(lines)
    bounds = "__launch_bounds__({}, {})".format(*change["launch_bounds"])
    lines[line - 1] = (_BOUNDS.sub(bounds, here, count=1) if _BOUNDS.search(here)
                       else here.replace("__global__", f"__global__ {bounds}", 1))
    return "\n".join(lines)


def bounds_rounds(found):
    """The bounds edits in rounds: one edit per kernel definition in each, so that one build checks many."""
    rounds: list[dict] = []
    for name, definition, change, _ in found:
        if definition is None:
            continue  # defined in a header: checked through the flag alone
        key = (definition.file, definition.line)
        target = next((r for r in rounds if key not in r), None)
        if target is None:
            target = {}
            rounds.append(target)
        target[key] = (name, change)
    return rounds


@pytest.mark.parametrize("arch", ARCHS)
def test_every_suggested_cap_takes_effect(chain, arch, tmp_path):
    checked = 0
    for source in SOURCES:
        found = suggestions(chain, source, arch)
        for number, edits in enumerate(bounds_rounds(found)):
            text = source.read_text()
            for (_, line), (_, change) in edits.items():
                text = with_bounds(text, line, change)
            copy = tmp_path / f"{source.stem}_{number}.cu"
            copy.write_text(text)
            report = nvcc.ptxas_report(chain, copy, arch)
            for name, change in edits.values():
                assert report[name]["registers"] <= change["register_cap"], (source.name, name, change)
                checked += 1
        for cap in sorted({c["maxrregcount"] for _, _, c, _ in found if c["maxrregcount"] is not None}):
            report = nvcc.ptxas_report(chain, source, arch, f"-maxrregcount={cap}")
            for name, definition, change, _ in found:
                if change["maxrregcount"] == cap:
                    assert definition is None or (definition.max_threads is None and
                                                  definition.max_registers is None), (name, change)
                    assert report[name]["registers"] <= cap, (source.name, name, change)
                    checked += 1
    assert checked >= 10  # the suite's sources hold register-limited kernels on every architecture


def test_a_kernel_with_bounds_is_never_offered_maxrregcount_and_the_flag_would_not_apply(chain):
    found = [(name, change) for name, definition, change, _ in suggestions(chain, LAUNCH_BOUNDS, "sm_90")
             if definition.max_threads is not None]
    assert found and all(change["maxrregcount"] is None for _, change in found)
    uncapped = fixture_truth(chain, LAUNCH_BOUNDS, "sm_90")
    flagged = fixture_truth(chain, LAUNCH_BOUNDS, "sm_90", "-maxrregcount=32")
    for name, _ in found:
        assert flagged[name]["registers"] == uncapped[name]["registers"] > 32  # the flag is ignored there


def test_lint_of_a_source_with_bounds_offers_no_maxrregcount(use):
    result = run("lint", LAUNCH_BOUNDS, "--arch", "sm_90", "--arch", "sm_80", "--format", "json")
    kernels = json.loads(result.output)["kernels"]
    messages = [f["message"] for k in kernels for f in k["findings"]]
    assert any("__launch_bounds__(" in m for m in messages)
    assert not any("maxrregcount" in m and "ignored" not in m for m in messages)
    [said] = [f for f in json.loads(result.output)["source_findings"] if f["code"] == "TA906"]
    # bounded_dgemv's block is its bounds' 128; heavy_fma's 256 its bounds' too; softmax_1024's the default
    assert "assumed block 128 (from __launch_bounds__) or 256 or 256 (from __launch_bounds__)," in said["message"]
    assert said["details"]["block_from"] == ["launch_bounds", "default", "launch_bounds"]


@pytest.mark.parametrize("source", [LAUNCH_BOUNDS, SOURCES[1]], ids=["bounds", "flag"])
def test_lint_builds_the_suggested_cap_and_reports_what_ptxas_gave(use, source, tmp_path):
    """Each TA301/TA304 register change lint suggests for a compiled source carries ptxas's figures at
    that cap (the edited bounds, or -maxrregcount for a kernel without), and says so when they spill."""
    result = run("lint", source, "--arch", "sm_90", "--format", "json")
    index = SourceIndex()
    index.add_file(str(source), source.read_text())
    checked = 0
    for kernel in json.loads(result.output)["kernels"]:
        for finding in kernel["findings"]:
            change = finding["details"].get("register_change")
            if finding["code"] not in ("TA301", "TA304") or change is None:
                continue
            if change["maxrregcount"] is not None:
                truth = nvcc.ptxas_report(use, source, "sm_90", f"-maxrregcount={change['maxrregcount']}")
            else:
                copy = tmp_path / f"{checked}_{source.name}"
                copy.write_text(with_bounds(source.read_text(), kernel["location"]["line"], change))
                truth = nvcc.ptxas_report(use, copy, "sm_90")
            figures = truth[kernel["name"]]
            at_cap = finding["details"]["at_cap"]
            assert {k: at_cap[k] for k in ("registers", "spill_stores", "spill_loads", "stack_frame")} == \
                {k: figures[k] for k in ("registers", "spill_stores", "spill_loads", "stack_frame")}
            spills = figures["spill_stores"] or figures["spill_loads"]
            assert ("B spill stores" in finding["message"]) == bool(spills)
            assert ("no spills" in finding["message"]) == (not spills)
            checked += 1
    assert checked >= 2


def test_ta302s_verdict_on_ta301s_step_weighs_the_same_build(use):
    """TA302 names TA301's register step as its next step: where lint built that step's change, both
    findings give one verdict on it, on the same evidence (a build that spills makes both a likely loss)."""
    compared, losses = 0, 0
    for source in SOURCES[:3]:
        result = run("lint", source, "--arch", "sm_90", "--format", "json")
        for kernel in json.loads(result.output)["kernels"]:
            by_code = {f["code"]: f["details"] for f in kernel["findings"]}
            limiter, low = by_code.get("TA301", {}), by_code.get("TA302", {})
            if "at_cap" not in limiter or "next_step" not in low:
                continue
            assert low["next_step"]["value"] == next(s for s in limiter["next_steps"] if s["resource"] == "registers")["value"]
            assert low["verdict"]["outcome"] == limiter["verdict"]["outcome"], kernel["name"]
            assert sorted(map(json.dumps, low["verdict"]["evidence"])) == \
                sorted(map(json.dumps, limiter["verdict"]["evidence"])), kernel["name"]
            compared += 1
            losses += limiter["verdict"]["outcome"] == "likely_loss"
    assert compared >= 3 and losses >= 2, (compared, losses)

def _budget_changes(chain, source: Path, arch: str, under: int):
    """(name, definition, TA901's register_change, registers) for each kernel of `source` over 40
    registers, with a budget `under` registers below its count."""
    from tuneadvise.advisor.rules import BudgetLimits, LintContext
    from tuneadvise.advisor.rules.families.ta9_lint import register_budget

    index = SourceIndex()
    index.add_file(str(source), source.read_text())
    found = []
    for name, figures in fixture_truth(chain, source, arch).items():
        definition = index.lookup(nvcc_base_name(name))
        if definition is None or figures["registers"] <= 40 or definition.max_registers is not None:
            continue
        bound = definition.max_threads
        launch = LaunchConfig(registers=figures["registers"], block_size=min(DEFAULT_BLOCK, bound or DEFAULT_BLOCK),
                              max_threads_per_block=bound)
        context = LintContext(occupancy(resolve_arch(arch), launch),
                              budget=BudgetLimits(kernel="*", max_registers=figures["registers"] - under))
        for _, details in register_budget.check(context, dict(register_budget.params)):
            found.append((name, definition, details["register_change"], figures["registers"]))
    return found


def _with_maxnreg(text: str, line: int, registers: int) -> str:
    lines = text.split("\n")
    here = _BOUNDS.sub("", lines[line - 1], count=1)  # nvcc refuses __maxnreg__ beside __launch_bounds__
    lines[line - 1] = here.replace("__global__", f"__global__ __maxnreg__({registers})", 1)
    return "\n".join(lines)


@pytest.mark.parametrize("source", [SOURCES[2], LAUNCH_BOUNDS], ids=["tiled", "bounds"])
def test_a_budget_is_met_exactly_and_the_bounds_alternative_costs_what_it_says(chain, source, tmp_path):
    """TA901 offered __launch_bounds__ whose cap lay under the budget as if it were the budget; its change now
    gives exactly the budget (the flag for a kernel without bounds, else __maxnreg__), and the bounds it names
    beside it give the lower cap it states."""
    checked = 0
    for number, (name, definition, change, registers) in enumerate(_budget_changes(chain, source, "sm_90", 8)):
        budget = change["register_cap"]
        assert change["via"] == "__maxnreg__" and change["maxnreg"] == budget == registers - 8
        copy = tmp_path / f"{number}_{source.name}"
        copy.write_text(_with_maxnreg(source.read_text(), definition.line, budget))
        capped = nvcc.ptxas_report(chain, copy, "sm_90")[name]["registers"]
        assert capped <= budget, name  # the cap is the budget; ptxas may need a register or two fewer
        if change["maxrregcount"] is not None:
            assert definition.max_threads is None
            flagged = nvcc.ptxas_report(chain, source, "sm_90", f"-maxrregcount={budget}")
            assert flagged[name]["registers"] <= budget, name
        other = change["alternative"]
        if other is not None:
            assert other["register_cap"] <= budget
            copy.write_text(with_bounds(source.read_text(), definition.line, other))
            bounded = nvcc.ptxas_report(chain, copy, "sm_90")[name]["registers"]
            assert bounded <= other["register_cap"] <= budget, name
        checked += 1
    assert checked >= 2
