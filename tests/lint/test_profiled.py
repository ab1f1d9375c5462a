"""lint and diff on Nsight Compute exports (tests/fixtures/ncu): one kernel entry per profiled
launch, the engine's occupancy beside the report's figures, every format, a CI budget on the
achieved occupancy."""

import json

import jsonschema
from click.testing import CliRunner

from tuneadvise.advisor.lint.schema import LINT_OUTPUT_SCHEMA
from tuneadvise.advisor.measured import measure
from tuneadvise.advisor.report import occupancy_document
from tuneadvise.cli.main import cli

from ..advisor.ncu_fixtures import launches, text
from ..helpers import assert_one_line_error


def export(tmp_path, name="processes"):
    path = tmp_path / f"{name}.csv"
    path.write_text(text(name), newline="")
    return path


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_each_launch_is_a_kernel_entry_with_its_measured_figures(tmp_path):
    result = run("lint", export(tmp_path), "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    jsonschema.validate(doc, LINT_OUTPUT_SCHEMA)
    recorded = launches("processes")
    entries = {k["measured"]["launch_index"]: k for k in doc["kernels"]}
    assert sorted(entries) == [launch.launch_id for launch in recorded]
    for launch in recorded:
        entry = entries[launch.launch_id]
        measured = entry["measured"]
        assert measured["process"] == launch.process
        assert measured["achieved_occupancy"] == round(launch.metrics["achieved_occupancy"] / 100, 6)
        assert measured["shared_mem_config_size"] == launch.metrics["shared_mem_config_size"]
        assert measured["block_limits"]["registers"] == launch.metrics["block_limit_registers"]
        # the occupancy document is the engine's, from the launch's own figures
        engine = measure(launch).result
        assert entry["occupancy"]["active_blocks_per_sm"] == engine.active_blocks_per_sm
        assert entry["occupancy"] == json.loads(json.dumps(occupancy_document(engine, engine.kernel.dims)))
        assert abs(100 * entry["occupancy"]["occupancy"] - launch.metrics["theoretical_occupancy"]) <= 0.005 + 1e-9
        assert "predicted_shared_mem_config" in entry["occupancy"]
        assert entry["variant"] == f"launch {launch.launch_id}"


def test_every_format_carries_the_launches(tmp_path):
    path = export(tmp_path, "ncu_tails")
    sarif = json.loads(run("lint", path, "--format", "sarif").output)
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} >= {"TA002", "TA003"}
    markdown = run("lint", path, "--format", "markdown").output
    assert "spin" in markdown and "TA003" in markdown
    table = run("lint", path).output
    assert "measured: achieved 3.1% of theoretical 100.0%, grid 66x1x1" in table
    assert max(len(line) for line in table.splitlines() if not line.startswith("  at ")) <= 80  # paths are never cut


def test_min_achieved_occupancy_fails_ci(tmp_path):
    path = export(tmp_path, "ncu_tails")
    (tmp_path / "tuneadvise.toml").write_text("min_achieved_occupancy = 0.5\n")
    result = run("lint", path, "--config", tmp_path / "tuneadvise.toml", "--format", "json")
    assert result.exit_code == 1
    doc = json.loads(result.output)
    below = [k for k in doc["kernels"] if k["measured"]["achieved_occupancy"] < 0.5]
    flagged = [k for k in doc["kernels"] if any(f["code"] == "TA007" for f in k["findings"])]
    assert below and flagged == below
    (tmp_path / "tuneadvise.toml").write_text("min_achieved_occupancy = 0.01\n")
    assert run("lint", path, "--config", tmp_path / "tuneadvise.toml").exit_code == 0


def test_diff_pairs_launches(tmp_path):
    old, new = export(tmp_path, "smem_import"), export(tmp_path, "smem_import_base")
    result = run("diff", old, new, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    # the same launches, one export printing sizes in Kbyte: read as the same figures
    assert doc["summary"]["unchanged"] == 62, doc["summary"]


def test_a_saved_report_without_ncu_is_exit_3(tmp_path, monkeypatch):
    from tuneadvise.advisor.readers import ncu

    monkeypatch.setattr(ncu.shutil, "which", lambda name: None)
    report = tmp_path / "R.ncu-rep"
    report.write_bytes(b"NVR\0" + bytes(60))
    result = CliRunner().invoke(cli, ["lint", str(report)])
    assert_one_line_error(result, "ncu --import R.ncu-rep --csv", exit_code=3)


def test_a_broken_export_is_bad_input_with_the_line(tmp_path):
    path = tmp_path / "bad.csv"
    body = text("ncu_templates").replace('"Registers Per Thread","register/thread","16"',
                                         '"Registers Per Thread","register/thread","many"', 1)
    path.write_text(body)
    result = run("lint", path, "--format", "json")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert "Registers Per Thread: expected a number" in doc["problems"][0]["message"]
    assert doc["problems"][0]["line"] == 21
    assert "lacks registers" in doc["problems"][1]["message"]  # that launch is left out, the other 8 are linted
    assert len(doc["kernels"]) == 8


def test_launches_are_ranked_with_the_build_output_kernels_through_one_linter(tmp_path):
    """A profiled launch goes through the one linter and ranking: the report's order is worst first
    across the export and a ptxas log alike, and --arch keeps only the launches of its architectures."""
    from tuneadvise.advisor.lint.records import LintOptions, worst_severity
    from tuneadvise.advisor.lint.run import lint_paths

    from ..helpers import TESTS

    log = TESTS / "fixtures" / "lint" / "ptxas_multi.log"
    report = lint_paths([export(tmp_path, "ncu_sweep"), log], LintOptions(machine_code=False))
    kinds = {kernel.usage.source for kernel in report.kernels}
    assert kinds == {"ncu", "ptxas"}
    worst = [kernel.worst for kernel in report.kernels]
    firsts = {}  # the first place of each kernel: variants are gathered where the first of them stands
    for place, kernel in enumerate(report.kernels):
        firsts.setdefault((kernel.name, kernel.arch), (place, kernel))
    ordered = [kernel for _, kernel in sorted(firsts.values(), key=lambda entry: entry[0])]
    ranks = [max(worst_severity(k.findings) for k in report.kernels if (k.name, k.arch) == (o.name, o.arch))
             for o in ordered]
    assert ranks == sorted(ranks, reverse=True) and len(worst) == len(report.kernels)
    only = lint_paths([export(tmp_path, "ncu_sweep"), log], LintOptions(machine_code=False, archs=("sm_80",)))
    assert only.kernels and {kernel.arch for kernel in only.kernels} == {"sm_80"}


def test_launch_n_of_two_exports_stays_two_entries(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    paths = [export(first, "ncu_sweep"), export(second, "ncu_sweep")]
    doc = json.loads(run("lint", *paths, "--format", "json").output)
    alone = json.loads(run("lint", paths[0], "--format", "json").output)
    assert len(doc["kernels"]) == 2 * len(alone["kernels"])
    assert len({(k["name"], k["variant"]) for k in doc["kernels"]}) == len(doc["kernels"])
