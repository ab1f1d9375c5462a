"""What a team adopting lint in CI relies on: the grid rules wherever the SM count is known,
TA906 once per run, a baseline that fails on a lost block, and diff that reports nothing
from a bad input. SM counts are the spec's (H100 SXM5: 132 SMs, H100 PCIe: 114)."""

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.readers.compiler_output import KernelUsage
from tuneadvise.cli.main import cli

from ..helpers import JSON_VALUES, assert_one_line_error


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def log(path, *kernels):
    """A ptxas -v log of (name, registers) on sm_90."""
    path.write_text("".join(f"ptxas info    : Compiling entry function '{name}' for 'sm_90'\n"
                            f"ptxas info    : Used {registers} registers, used 0 barriers\n"
                            for name, registers in kernels))
    return path


GRID_CONFIG = '[[kernels]]\nname = "k"\nblock_size = 256\ngrid_size = 100\n'


def grid_findings(stdout):
    doc = json.loads(stdout)
    return [f["message"] for k in doc["kernels"] for f in k["findings"] if f["code"].startswith("TA7")], doc


@pytest.mark.parametrize("setting, extra", [
    ('arch = ["h100-sxm"]\n', ()),  # the product names the SM count
    ('sm_count = 132\n', ()),  # the config gives it
    ("", ("--sm-count", "132")),  # the command line gives it
    ("", ("--arch", "h100-sxm")),  # a product on the command line
])
def test_grid_rules_run_wherever_the_sm_count_is_known(tmp_path, setting, extra):
    config = tmp_path / "tuneadvise.toml"
    config.write_text(setting + GRID_CONFIG)
    result = run("lint", log(tmp_path / "k.log", ("k", 32)), "--config", config, "--format", "json", *extra)
    messages, doc = grid_findings(result.stdout)
    occupancy = run("occupancy", "--arch", "h100-sxm", "--grid-size", "100", "-r", "32", "-b", "256", "--format",
                    "json")
    expected = [f["message"] for f in json.loads(occupancy.stdout)["findings"] if f["code"] == "TA701"]
    assert messages == expected == ["grid of 100 blocks leaves 32 of 132 SMs idle"]
    assert not doc["summary"]["warnings"]


def test_without_an_sm_count_the_run_says_once_why_the_grid_rules_did_not_run(tmp_path):
    config = tmp_path / "tuneadvise.toml"
    config.write_text(GRID_CONFIG.replace('"k"', '"k*"'))
    path = log(tmp_path / "k.log", ("k1", 32), ("k2", 40), ("k3", 64))
    result = run("lint", path, "--config", config, "--format", "json")
    messages, doc = grid_findings(result.stdout)
    assert messages == []
    [warning] = doc["summary"]["warnings"]
    assert "SM count of sm_90 is unknown" in warning and "--sm-count" in warning
    assert result.stderr.count("grid rules") == 1


def test_two_products_of_one_architecture_with_different_sm_counts_are_refused(tmp_path):
    config = tmp_path / "tuneadvise.toml"
    config.write_text('arch = ["h100-sxm", "h100-pcie"]\n')
    result = run("lint", log(tmp_path / "k.log", ("k", 32)), "--config", config)
    assert result.exit_code == 2 and "arch: h100-sxm and h100-pcie are both sm_90" in result.stderr
    result = run("lint", log(tmp_path / "k.log", ("k", 32)), "-a", "h100-sxm", "-a", "h100-pcie")
    assert result.exit_code == 2 and "(132, 114)" in result.stderr


def test_no_kernels_entry_is_said_once_per_run(tmp_path):
    path = log(tmp_path / "k.log", ("k1", 32), ("k2", 40), ("k3", 64))
    result = run("lint", path, "--format", "json")
    doc = json.loads(result.stdout)
    assert not any(f["code"] == "TA906" for k in doc["kernels"] for f in k["findings"])
    [once] = [f for f in doc["source_findings"] if f["code"] == "TA906"]
    assert once["details"] == {"kernels": 3, "block_dims": [[256]], "block_from": ["default"], "file": str(path)}
    assert once["message"] == "no [[kernels]] entry matches 3 kernels; assumed block 256, no dynamic shared memory"
    assert doc["summary"]["by_code"]["TA906"] == 1
    text = run("lint", path).stdout
    assert text.count("TA906") == 1


def test_a_lost_block_against_the_baseline_fails_by_default(tmp_path):
    """32 -> 40 registers at 256 threads on sm_90: 8 -> 6 blocks per SM, occupancy 100% -> 75%."""
    baseline = tmp_path / "baseline.json"
    assert run("lint", log(tmp_path / "old.log", ("k", 32)), "--baseline", baseline, "--update-baseline").exit_code == 0
    new = log(tmp_path / "new.log", ("k", 40))
    result = run("lint", new, "--baseline", baseline, "--format", "json")
    doc = json.loads(result.stdout)
    assert result.exit_code == 1 and not doc["summary"]["passed"]
    assert doc["summary"]["failing_findings"] == 0  # only warnings: the regression alone fails the run
    assert doc["summary"]["baseline"]["lost_occupancy"] == ["k@sm_90: occupancy 1.0 -> 0.75"]
    assert "lost occupancy: k@sm_90" in run("lint", new, "--baseline", baseline).stdout
    allowed = run("lint", new, "--baseline", baseline, "--allow-regressions", "--format", "json")
    assert allowed.exit_code == 0 and json.loads(allowed.stdout)["summary"]["passed"]
    same = run("lint", log(tmp_path / "same.log", ("k", 32)), "--baseline", baseline)
    assert same.exit_code == 0


def test_a_library_caller_options_are_not_changed_by_a_baseline(tmp_path):
    """lint_query reads the baseline's registers into its own copy of the options: a script that
    lints two builds with one LintOptions does not carry the first baseline into the second."""
    from tuneadvise.advisor.lint.records import LintOptions
    from tuneadvise.advisor.queries.lint import lint_query

    baseline = tmp_path / "baseline.json"
    assert run("lint", log(tmp_path / "old.log", ("k", 32)), "--baseline", baseline, "--update-baseline").exit_code == 0
    options = LintOptions(archs=("sm_90",))
    answer = lint_query([str(log(tmp_path / "new.log", ("k", 40)))], options, baseline=str(baseline))
    assert answer.document.summary["baseline"]["lost_occupancy"]  # the baseline was read
    assert options.previous_registers == LintOptions().previous_registers


def test_diff_prints_no_report_when_an_input_is_bad(tmp_path):
    old = log(tmp_path / "old.log", ("a", 32), ("b", 32), ("c", 32))
    new = tmp_path / "new.log"
    new.write_text("nvcc fatal   : Unsupported gpu architecture 'compute_99'\n")
    for fmt in ("table", "json", "markdown"):
        result = run("diff", old, new, "--format", fmt)
        assert result.exit_code == 2 and result.stdout == ""
        assert "new.log" in result.stderr and "removed" not in result.stderr


def test_a_kernel_record_is_immutable_and_born_with_its_file(tmp_path):
    from tuneadvise.advisor.readers.usage import read_usage

    [record] = read_usage(log(tmp_path / "k.log", ("k", 32))).records
    assert record.file == str(tmp_path / "k.log") and record.line == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.registers = 40
    assert isinstance(record, KernelUsage)


@pytest.mark.parametrize("fixture", ["ptxas_multi.log", "lint_multi.o", "cuobjdump_multi.txt"])
def test_diff_reads_each_kernel_as_lint_does(fixture):
    """diff indexes each build a kernel at a time; its figures are lint's, kernel for kernel."""
    from ..helpers import TESTS

    path = TESTS / "fixtures" / "lint" / fixture
    linted = json.loads(run("lint", path, "--format", "json").stdout)
    figures = {(k["name"], k["arch"]): (k["registers"], k["occupancy"]["occupancy"]) for k in linted["kernels"]}
    result = run("diff", path, path, "--format", "json")
    rows = json.loads(result.stdout)["kernels"]
    assert result.exit_code == 0 and {r["status"] for r in rows} == {"unchanged"}
    assert {(r["name"], r["arch"]): (r["new"]["registers"], r["new"]["occupancy"]) for r in rows} == figures


def test_select_prints_only_the_kernels_with_a_selected_finding(tmp_path):
    path = log(tmp_path / "k.log", ("wide", 100), ("narrow", 16))
    text = run("lint", path, "--select", "TA302").stdout
    assert "wide [sm_90]" in text and "narrow [sm_90]" not in text
    assert "kernels x architectures      2" in text  # still counted
    assert "narrow [sm_90]" in run("lint", path).stdout


def test_which_kernels_a_selection_lists_is_the_documents_decision(tmp_path):
    from tuneadvise.advisor.queries.lint import choose_config, lint_options, lint_query

    path = str(log(tmp_path / "k.log", ("wide", 100), ("narrow", 16)))
    for select, listed in (("TA302", ["wide"]), (None, ["wide", "narrow"])):
        doc = lint_query([path], lint_options(choose_config(None, [path]), select=select)).document
        assert [k["name"] for k in doc.listed()] == listed
        assert [k["name"] for k in doc.whole()["kernels"]] == ["wide", "narrow"]  # machine formats hold all


def test_a_kernel_that_lost_half_its_occupancy_is_not_called_improved(tmp_path):
    """It lost TA304 (no longer near a cliff) by falling off one: the summary said 'improved: no longer TA304'."""
    baseline = tmp_path / "baseline.json"
    before = log(tmp_path / "before.log", ("k", 64))
    assert run("lint", before, "--baseline", baseline, "--update-baseline").exit_code == 0
    recorded = json.loads(baseline.read_text())["kernels"]["k@sm_90"]
    after = log(tmp_path / "after.log", ("k", 96))
    result = run("lint", after, "--baseline", baseline, "--format", "json")
    doc = json.loads(result.stdout)
    current = doc["kernels"][0]
    assert current["occupancy"]["occupancy"] <= recorded["occupancy"] / 2 and result.exit_code == 1
    assert set(recorded["findings"]) - {f["code"] for f in current["findings"]}  # it did lose a finding
    assert not any(line.startswith("k@sm_90") for line in doc["summary"]["baseline"]["improved"])


BASELINE_LOG = Path(__file__).parents[1] / "fixtures" / "lint" / "ptxas_sm_90.log"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(["registers", "shared_mem", "spill_stores", "spill_loads", "stack_frame", "occupancy",
                              "findings", None]),
       value=st.one_of(JSON_VALUES, st.lists(JSON_VALUES, max_size=3), st.floats()))
def test_a_hand_edited_baseline_is_read_or_refused_in_one_line(tmp_path, field, value):
    """A baseline entry's figure or findings of any JSON type (findings [1] and occupancy 'abc'
    were internal errors, exit 70): compared, or refused naming the kernel and the field."""
    path = tmp_path / "baseline.json"
    written = run("lint", BASELINE_LOG, "--baseline", path, "--update-baseline")
    assert written.exit_code == 0, written.output
    baseline = json.loads(path.read_text())
    key = sorted(baseline["kernels"])[0]
    if field is None:
        baseline["kernels"][key] = value
    else:
        baseline["kernels"][key][field] = value
    path.write_text(json.dumps(baseline))
    result = run("lint", BASELINE_LOG, "--baseline", path, "--format", "json")
    assert result.exit_code in (0, 1, 2), result.output
    if result.exit_code == 2:
        assert_one_line_error(result, "--baseline", key[:20])
