"""lint and diff on Nsight Compute exports (tests/fixtures/ncu): one kernel entry per profiled
launch, the engine's occupancy beside the report's figures, every format, a CI budget on the
achieved occupancy."""

import json
import re

import jsonschema
from click.testing import CliRunner

from tuneadvise.advisor.lint.profiled import profiled_record
from tuneadvise.advisor.lint.records import LintOptions
from tuneadvise.advisor.lint.run import lint_records
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


# -- every launch of every export in the input, or the run fails saying which ---------------

def linted_findings(measured, options: LintOptions | None = None) -> tuple:
    """The findings lint gives one profiled launch."""
    [kernel] = lint_records([profiled_record(measured)], options or LintOptions()).kernels
    return kernel.findings


def kernels_of(result) -> list:
    return json.loads(result.stdout)["kernels"]


def test_appended_exports_are_every_launch(tmp_path):
    names = ("ncu_tails", "ncu_cupy", "ncu_templates")
    path = tmp_path / "all.csv"
    path.write_text("".join(text(name) for name in names), newline="")
    result = run("lint", path, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    assert len(kernels_of(result)) == sum(len(launches(name)) for name in names)


def test_a_pipe_is_read_whole_once(tmp_path):
    """`lint <(cat a.csv b.csv)`: a pipe, sniffed and read on one stream."""
    import os
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    body = (text("ncu_cupy") + text("ncu_templates")).encode()

    def write():
        with open(fifo, "wb") as handle:
            handle.write(body)

    writer = threading.Thread(target=write)
    writer.start()
    result = run("lint", fifo, "--format", "json")
    writer.join()
    assert len(kernels_of(result)) == len(launches("ncu_cupy")) + len(launches("ncu_templates")), result.output


def test_standard_input_takes_an_export():
    result = CliRunner().invoke(cli, ["lint", "-", "--format", "json"], input=text("ncu_templates"))
    assert result.exit_code in (0, 1), result.output
    assert len(kernels_of(result)) == len(launches("ncu_templates"))


def test_an_empty_csv_says_so_as_an_export(tmp_path):
    path = tmp_path / "report.csv"
    path.write_text("")
    result = CliRunner().invoke(cli, ["lint", str(path)])
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert all(word in result.stderr for word in ("report.csv", "empty", "ncu --csv")), result.stderr


def test_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_text("\ufeff" + text("ncu_templates"), newline="")
    result = run("lint", path, "--format", "json")
    assert result.exit_code in (0, 1) and len(kernels_of(result)) == len(launches("ncu_templates"))


def test_a_gzipped_export_is_linted(tmp_path):
    from ..advisor.ncu_fixtures import FIXTURES

    result = run("lint", FIXTURES / "ncu_templates.csv.gz", "--format", "json")
    assert result.exit_code in (0, 1) and len(kernels_of(result)) == len(launches("ncu_templates"))


def test_the_run_wide_library_finding_points_at_the_export_in_sarif():
    """TA008, said once for a profile's library launches, has a location like every other result:
    code scanning drops a result without one."""
    from ..advisor.ncu_fixtures import FIXTURES

    export = FIXTURES / "ncu_torch.csv.gz"
    results = json.loads(run("lint", export, "--format", "sarif").stdout)["runs"][0]["results"]
    (library,) = [r for r in results if r["ruleId"] == "TA008"]
    assert library["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("ncu_torch.csv.gz")
    assert all(r.get("locations") for r in results)


def test_a_cause_shared_by_many_launches_is_said_once_with_a_count(tmp_path):
    """An export without the Occupancy section: one problem for all its launches, not one each."""
    rows = [line for line in text("ncu_tails").splitlines(keepends=True) if '"Occupancy"' not in line
            and '"Shared Memory Configuration Size"' not in line]
    message = _the_one_problem(tmp_path / "no_occupancy.csv", "".join(rows))
    assert "lacks shared_mem_config_size" in message
    assert f"and {len(launches('ncu_tails')) - 1} more launches" in message


def _the_one_problem(path, export: str) -> str:
    """The message of the one problem lint reports (exit 2) on `export` written at `path`."""
    path.write_text(export, newline="")
    result = run("lint", path, "--format", "json")
    assert result.exit_code == 2
    problems = json.loads(result.stdout)["problems"]
    assert len(problems) == 1, problems
    return problems[0]["message"]


def test_an_optional_column_after_the_required_ones_is_bad_input_not_a_crash(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text('"ID","Process ID","Process Name","Kernel Name","Block Size","Grid Size","Metric Name",'
                    '"Metric Unit","Metric Value","CC"\n"0","1","p","k","(1, 1, 1)","(1, 1, 1)",'
                    '"Registers Per Thread","register/thread","32"\n')
    result = CliRunner().invoke(cli, ["lint", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert len(result.stderr.splitlines()) == 1 and "c.csv:2" in result.stderr and "lacks" in result.stderr


# -- the sections beyond occupancy, in `measured` ----------------------------------------------

def csv_figure(name: str, launch, label: str) -> float:
    """A figure of one launch read from the export's text by the test itself."""
    import csv
    import io

    rows = csv.reader(io.StringIO(text(name)))
    for row in rows:
        if len(row) > 14 and row[0] == str(launch.launch_id) and row[1] == launch.process_id and row[12] == label:
            return float(row[14].replace(",", ""))
    raise KeyError(label)


def test_speed_of_light_figures_of_every_launch(tmp_path):
    result = run("lint", export(tmp_path, "ncu_cupy"), "--format", "json")
    entries = {k["measured"]["launch_index"]: k["measured"] for k in kernels_of(result)}
    for launch in launches("ncu_cupy"):
        measured = entries[launch.launch_id]
        assert measured["throughput"]["compute_pct"] == csv_figure("ncu_cupy", launch, "Compute (SM) Throughput")
        assert measured["throughput"]["memory_pct"] == csv_figure("ncu_cupy", launch, "Memory Throughput")
        assert measured["throughput"]["dram_pct"] == csv_figure("ncu_cupy", launch, "DRAM Throughput")
        # the fixture was recorded with Occupancy, LaunchStats and SpeedOfLight only: each launch says so
        assert measured["missing_sections"] == ["WarpStateStats", "SchedulerStats", "MemoryWorkloadAnalysis"]
        assert measured["warp_state"] is None and measured["scheduler"] is None and measured["memory"] is None


def with_rows(name: str, rows: list[tuple[str, str, str, str]]) -> str:
    """The export with rows (section, label, unit, value) added to every launch, as ncu prints them."""
    import csv
    import io

    out, seen = io.StringIO(), set()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for row in csv.reader(io.StringIO(text(name))):
        writer.writerow(row)
        if len(row) > 14 and row[0].isdigit() and (row[1], row[0]) not in seen:
            seen.add((row[1], row[0]))
            for section, label, unit, value in rows:
                writer.writerow(row[:11] + [section, label, unit, value] + [""] * (len(row) - 15))
    return out.getvalue()


def test_warp_state_scheduler_and_memory_figures(tmp_path):
    rows = [("Warp State Statistics", "Warp Cycles Per Issued Instruction", "cycle", "12.34"),
            ("Warp State Statistics", "Avg. Active Threads Per Warp", "", "31.5"),
            ("Warp State Statistics", "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
             "", "7.5"),
            ("Warp State Statistics", "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", "", "1.25"),
            ("Scheduler Statistics", "Eligible Warps Per Scheduler", "warp", "0.8"),
            ("Scheduler Statistics", "Issued Warp Per Scheduler", "", "0.41"),
            ("Scheduler Statistics", "No Eligible", "%", "59"),
            ("Memory Workload Analysis", "Memory Throughput", "Gbyte/second", "1,234.5"),
            ("Memory Workload Analysis", "L2 Hit Rate", "%", "88.1")]
    path = tmp_path / "sections.csv"
    path.write_text(with_rows("ncu_templates", rows), newline="")
    result = run("lint", path, "--format", "json")
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, LINT_OUTPUT_SCHEMA)
    for entry in doc["kernels"]:
        measured = entry["measured"]
        assert measured["missing_sections"] == []
        assert measured["warp_state"]["cycles_per_issued_instruction"] == 12.34
        assert measured["warp_state"]["stalls"] == {"long_scoreboard": 7.5, "barrier": 1.25}
        assert measured["scheduler"]["eligible_warps"] == 0.8 and measured["scheduler"]["issued_warps"] == 0.41
        assert measured["scheduler"]["no_eligible_pct"] == 59 and measured["scheduler"]["active_warps"] is None
        assert measured["memory"]["dram_bytes_per_second"] == 1234.5e9
        # Speed Of Light's "Memory Throughput" (%) is not Memory Workload Analysis's (bytes per second)
        assert measured["throughput"]["memory_pct"] < 100


# -- what-if advice starts from the program's preference, not the driver's choice -------------

def test_no_false_shared_memory_cliff_on_launches_that_set_no_carveout():
    """Every shared-memory step TA304 and TA301 give on a launch that set no carveout (the programs'
    logs say which) is what `occupancy` answers under no preference: at the size TA304 names one
    block is lost, one byte under it none; TA301's smaller size gains the block it says."""
    from tuneadvise.advisor.engine import whatif
    from tuneadvise.advisor.engine.limits import CARVEOUT_DEFAULT
    from tuneadvise.advisor.engine.occupancy import occupancy

    from ..engine.test_shared_config import logged_launches

    checked = 0
    options = LintOptions()
    for launch, carveout in logged_launches():
        if carveout >= 0:
            continue
        measured = measure(launch)
        unset = measured.config._replace(carveout=CARVEOUT_DEFAULT)
        blocks = occupancy(measured.arch, unset).active_blocks_per_sm
        for finding in linted_findings(measured, options):
            if finding.code == "TA304" and finding.details["resource"] == "shared_memory":
                drops_at = finding.details["drops_at"]
                assert occupancy(measured.arch, whatif.with_total_shared_mem(unset, drops_at)).active_blocks_per_sm \
                    == finding.details["blocks_after"] < blocks, finding.message
                assert occupancy(measured.arch, whatif.with_total_shared_mem(unset, drops_at - 1)) \
                    .active_blocks_per_sm == blocks, finding.message
                checked += 1
            for step in finding.details.get("next_steps", []) if finding.code == "TA301" else []:
                if step["resource"] == "shared_memory":
                    assert occupancy(measured.arch, whatif.with_total_shared_mem(unset, step["value"])) \
                        .active_blocks_per_sm == step["blocks_per_sm"] > blocks
                    checked += 1
    assert checked > 0


def test_the_reported_1025_byte_case_keeps_its_blocks():
    """16 registers, 32 threads, 1 KB dynamic, 64 KB configured by the driver (32 blocks fill it):
    in that configuration 1025 B would drop to 30 blocks, but under no preference (the program's)
    `occupancy --arch sm_90 -r 16 -b 32 -d 1025` keeps 32, so there is no cliff to warn of."""
    from tuneadvise.advisor.engine.occupancy import occupancy as occupancy_of
    from tuneadvise.advisor.readers.ncu import read_lines

    body = text("ncu_templates").splitlines(keepends=True)
    launch = read_lines(body, "t.csv").launches[0]
    metrics = {**launch.metrics, "registers": 16.0, "dynamic_shared_mem": 1024.0, "static_shared_mem": 0.0,
               "shared_mem_config_size": 65536.0}
    for key in ("block_limit_warps", "block_limit_registers", "block_limit_shared_mem", "block_limit_sm",
                "block_limit_barriers", "theoretical_warps", "theoretical_occupancy", "waves_per_sm"):
        metrics.pop(key, None)
    edited = type(launch)(**{**launch.__dict__, "block": (32, 1, 1), "metrics": metrics})
    measured = measure(edited)
    assert measured.result.active_blocks_per_sm == 32
    assert occupancy_of(measured.arch, measured.config._replace(dynamic_shared_mem=1025)).active_blocks_per_sm == 30
    findings = linted_findings(measured)
    assert not [f for f in findings if f.code == "TA304" and f.details["resource"] == "shared_memory"], findings


def test_a_profiled_launch_gets_one_finding_per_grid_cause(tmp_path):
    """The grid under one wave and the tail are the measured rules' (TA002, TA003): the
    configuration rules on the same cause (TA701, TA703) are not repeated beside them."""
    doc = json.loads(run("lint", export(tmp_path, "ncu_tails"), "--format", "json").stdout)
    codes = [{f["code"] for f in k["findings"]} for k in doc["kernels"]]
    assert any("TA002" in c for c in codes) and any("TA003" in c for c in codes)
    assert not any(c & {"TA701", "TA703"} for c in codes)


def test_an_export_without_the_cc_column_says_what_it_lacks(tmp_path):
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for row in csv.reader(io.StringIO(text("ncu_templates"))):
        if row and (row[0] == "ID" or row[0].isdigit()):
            writer.writerow(row[:10] + row[11:])  # column 10 is CC
    path = tmp_path / "nocc.csv"
    path.write_text(out.getvalue())
    result = CliRunner().invoke(cli, ["lint", str(path)])
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert "no CC column" in result.stderr and "and 8 more launches of 9" in result.stderr


FIGURE_LABELS = {  # (section as the export names it, label) -> (measured object, field)
    ("GPU Speed Of Light Throughput", "Compute (SM) Throughput"): ("throughput", "compute_pct"),
    ("GPU Speed Of Light Throughput", "Memory Throughput"): ("throughput", "memory_pct"),
    ("GPU Speed Of Light Throughput", "DRAM Throughput"): ("throughput", "dram_pct"),
    ("GPU Speed Of Light Throughput", "L2 Cache Throughput"): ("throughput", "l2_pct"),
    ("Warp State Statistics", "Warp Cycles Per Issued Instruction"): ("warp_state", "cycles_per_issued_instruction"),
    ("Warp State Statistics", "Avg. Active Threads Per Warp"): ("warp_state", "active_threads_per_warp"),
    ("Scheduler Statistics", "Eligible Warps Per Scheduler"): ("scheduler", "eligible_warps"),
    ("Scheduler Statistics", "Issued Warp Per Scheduler"): ("scheduler", "issued_warps"),
    ("Scheduler Statistics", "No Eligible"): ("scheduler", "no_eligible_pct"),
    ("Memory Workload Analysis", "Memory Throughput"): ("memory", "dram_bytes_per_second"),
    ("Memory Workload Analysis", "L2 Hit Rate"): ("memory", "l2_hit_rate_pct"),
}


def test_every_section_figure_of_every_recorded_launch(tmp_path):
    """The six-section re-recordings (tests/fixtures/ncu/sections), every launch: each figure in
    `measured` is the export's own (read here from the text by section and label), and the
    configuration sweep recorded without those sections says it lacks them."""
    import csv
    import io

    from ..advisor.ncu_fixtures import SECTION_EXPORTS

    checked = 0
    for name in SECTION_EXPORTS:
        path = tmp_path / f"{name.split('/')[1]}.csv"
        path.write_text(text(name), newline="")
        doc = json.loads(run("lint", path, "--format", "json").stdout)
        jsonschema.validate(doc, LINT_OUTPUT_SCHEMA)
        entries = {(k["measured"]["process"], k["measured"]["launch_index"]): k["measured"] for k in doc["kernels"]}
        assert len(entries) == len(launches(name))
        expected = {}
        for row in csv.reader(io.StringIO(text(name))):
            if len(row) > 14 and row[0].isdigit() and (row[11], row[12]) in FIGURE_LABELS:
                expected[(f"{row[2]} ({row[1]})", int(row[0]), *FIGURE_LABELS[(row[11], row[12])])] = \
                    float(row[14].replace(",", ""))
        for (process, index, section, field), value in expected.items():
            assert entries[(process, index)][section][field] == value, (name, index, section, field)
            checked += 1
        missing = {tuple(m["missing_sections"]) for m in entries.values()}
        assert missing == ({("SpeedOfLight", "WarpStateStats", "SchedulerStats", "MemoryWorkloadAnalysis")}
                           if name.endswith("smem_config") else {()}), (name, missing)
    assert checked > 5000


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


def test_launch_figures_no_architecture_allows_are_said_once_with_a_count(tmp_path):
    """A hand-edited export whose every launch has a 0-thread block: the parser's refusal is one
    problem with a count, as any other cause shared by many launches, not one line per launch
    (an export of 100,000 launches would print 100,000 lines)."""
    launch_count = len(launches("ncu_tails"))
    message = _the_one_problem(tmp_path / "zero_block.csv",
                               re.sub(r'"\(\d+, 1, 1\)","\(', '"(0, 1, 1)","(', text("ncu_tails")))
    assert "block_size: must be from 1 to 1024" in message
    assert f"and {launch_count - 1} more launches of {launch_count}" in message


def test_two_exports_appended_into_one_file_keep_every_launch(tmp_path):
    """`ncu --csv ... >> profile.csv` twice: ncu numbers each run's launches from 0, and the second
    run's launch 0 was merged into the first's and dropped without a word. Each is kept apart,
    with the grid its own export gives."""
    first = text("ncu_tails")
    second = re.sub(r'"\(66, 1, 1\)"', '"(999, 1, 1)"', first)
    assert second != first
    path = tmp_path / "appended.csv"
    path.write_text(first + second, newline="")
    result = run("lint", path, "--format", "json")
    assert result.exit_code == 0, result.output
    kernels = json.loads(result.stdout)["kernels"]
    assert len(kernels) == 2 * len(launches("ncu_tails"))
    grids = sorted(k["measured"]["grid_dims"][0] for k in kernels if k["measured"]["launch_index"] == 0)
    assert grids == [66, 999]
    assert len({(k["name"], k["variant"]) for k in kernels}) == len(kernels)
