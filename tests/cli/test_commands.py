"""The command line, driven through click's CliRunner: output, exit codes, bad input."""

import json
import os
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.cli.main import cli

from ..helpers import assert_one_line_error


def run(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def occupancy_json(*args):
    result = run("occupancy", *args, "--format", "json")
    return result, json.loads(result.output)


def test_occupancy_json_schema_fields():
    result, doc = occupancy_json("--arch", "volta", "--registers", "64", "--block-size", "256", "--shared-mem", "12K")
    assert result.exit_code == 0
    for key in ("schema_version", "arch", "compute_capability", "active_blocks_per_sm", "active_warps_per_sm",
                "max_warps_per_sm", "occupancy", "limiters", "launchable", "errors", "findings", "provenance"):
        assert key in doc
    assert (doc["arch"], doc["compute_capability"], doc["active_blocks_per_sm"], doc["occupancy"]) == ("sm_70", "7.0", 4, 0.5)
    assert doc["provenance"]["active_blocks_per_sm"] == "model" and doc["provenance"]["max_warps_per_sm"] == "spec"
    assert "'volta' means compute capability 7.0" in doc["arch_note"]


@pytest.mark.parametrize("arch, cc", [("sm_70", "7.0"), ("7.0", "7.0"), ("compute_70", "7.0"), ("70", "7.0"),
                                      ("v100", "7.0"), ("h100-sxm", "9.0"), ("sm_90a", "9.0"), ("sm_120", "12.0"),
                                      ("blackwell", "10.0"), ("kepler", "3.5"), ("RTX-4090", "8.9")])
def test_arch_spellings(arch, cc):
    _, doc = occupancy_json("--arch", arch, "-r", "32", "-b", "128")
    assert doc["compute_capability"] == cc


def test_cannot_launch_exits_1_with_named_error():
    result, doc = occupancy_json("--arch", "fermi", "--registers", "64", "--block-size", "128")
    assert result.exit_code == 1
    assert doc["launchable"] is False and doc["errors"][0]["code"] == "registers-per-thread"
    assert any(f["code"] == "TA103" for f in doc["findings"])


@pytest.mark.parametrize("args, field", [
    (("--registers", "256"), "--registers"),
    (("--block-size", "2048"), "--block-size"),
    (("--block-size", "33x33"), "--block-size"),
    (("--carveout", "101"), "--carveout"),
    (("--shared-mem", "12Q"), "--shared-mem"),
    (("--arch", "voltta"), "--arch"),
    (("--barriers", "17"), "--barriers"),
])
def test_bad_input_exits_2_with_one_line_naming_the_field(args, field):
    base = {"--arch": "volta", "--registers": "32", "--block-size": "256"}
    base.update(dict(zip(args[::2], args[1::2])))
    result = CliRunner().invoke(cli, ["occupancy", *sum(base.items(), ()), "--format", "json"])
    assert_one_line_error(result)
    assert result.output.startswith(f"tuneadvise: error: {field}")


def test_unknown_arch_suggests_close_names():
    result = CliRunner().invoke(cli, ["occupancy", "--arch", "hoper", "-r", "1", "-b", "1"])
    assert result.exit_code == 2 and "did you mean hopper" in result.output


def test_table_output_names_the_limiter():
    result = run("occupancy", "--arch", "volta", "-r", "64", "-b", "256", "--format", "table")
    assert result.exit_code == 0
    assert "Registers (limiter)" in result.output and "= 50% (model)" in result.output and "TA301" in result.output


def test_batch_jsonl_keeps_order_reports_bad_lines_and_worst_exit():
    lines = "\n".join([
        json.dumps({"arch": "volta", "registers": 64, "block_size": 256, "shared_mem": "12K"}),
        json.dumps({"arch": "fermi", "registers": 64, "block_size": 128}),
        "{not json",
        json.dumps({"arch": "volta", "regs": 64, "block_size": 256}),
        json.dumps({"arch": "hopper", "registers": 32, "block_size": 128, "carveout": 50, "opt_in": True,
                    "dynamic_shared_mem": 65536, "barriers": 2, "max_threads_per_block": 128}),
    ])
    result = CliRunner().invoke(cli, ["occupancy", "--batch", "-", "--format", "jsonl"], input=lines)
    out = [json.loads(line) for line in result.output.splitlines()]
    assert len(out) == 5
    assert out[0]["active_blocks_per_sm"] == 4
    assert out[1]["launchable"] is False
    assert out[2]["error"]["code"] == "bad-json" and "line 3" in out[2]["error"]["message"]
    assert out[3]["error"]["code"] == "bad-input" and "did you mean 'registers'" in out[3]["error"]["message"]
    assert out[4]["launchable"] is True
    assert result.exit_code == 2


def test_batch_exit_1_when_only_launch_failures():
    lines = json.dumps({"arch": "fermi", "registers": 64, "block_size": 128})
    result = CliRunner().invoke(cli, ["occupancy", "--batch", "-", "--format", "jsonl"], input=lines)
    assert result.exit_code == 1


def test_specs_list_and_show_with_disagreements():
    result = run("specs", "--format", "json")
    doc = json.loads(result.output)
    ccs = [a["compute_capability"] for a in doc["architectures"]]
    for cc in ["2.0", "2.1", "3.0", "3.2", "3.5", "3.7", "5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2", "7.5",
               "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.3", "12.0", "12.1"]:
        assert cc in ccs
    shown = json.loads(run("specs", "show", "sm_120", "--format", "json").output)
    assert shown["values"]["max_blocks_per_sm"]["value"] == 24
    assert {d["field"] for d in shown["disagreements"]} >= {"max_blocks_per_sm", "shared_mem_per_sm"}
    assert all(v["source"] for v in shown["values"].values())


def test_spec_file_is_validated(tmp_path):
    good = tmp_path / "mine.toml"
    good.write_text("""
family = "custom"
[defaults]
warp_size = { value = 32, source = "user" }
max_threads_per_block = { value = 1024, source = "user" }
max_warps_per_sm = { value = 64, source = "user" }
max_blocks_per_sm = { value = 32, source = "user" }
registers_per_sm = { value = 65536, source = "user" }
registers_per_block = { value = 65536, source = "user" }
max_registers_per_thread = { value = 255, source = "user" }
register_allocation_unit = { value = 256, source = "user" }
warp_allocation_granularity = { value = 4, source = "user" }
shared_mem_per_sm = { value = 233472, source = "user" }
shared_mem_per_block = { value = 49152, source = "user" }
shared_mem_per_block_optin = { value = 232448, source = "user" }
reserved_shared_mem_per_block = { value = 1024, source = "user" }
shared_mem_allocation_unit = { value = 128, source = "user" }
shared_mem_model = "carveout"
shared_mem_configs = { value = [0, 8192, 16384, 32768, 65536, 102400, 135168, 167936, 200704, 233472], source = "user" }
header_max_registers_per_thread = { value = 256, source = "user" }
shared_mem_opt_in = { value = true, source = "user" }
reserved_shared_mem_in_block_limit = { value = true, source = "user" }
[[arch]]
cc = "9.9"
""")
    result, doc = occupancy_json("--spec-file", str(good), "-r", "64", "-b", "256")
    assert result.exit_code == 0 and doc["compute_capability"] == "9.9" and doc["active_blocks_per_sm"] == 4
    bad = tmp_path / "bad.toml"
    bad.write_text(good.read_text().replace("max_blocks_per_sm", "max_blocks_per_smm"))
    result = CliRunner().invoke(cli, ["occupancy", "--spec-file", str(bad), "-r", "64", "-b", "256"])
    assert result.exit_code == 2 and "max_blocks_per_smm" in result.output and "Traceback" not in result.output
    # A compute capability nothing ships must say how the header treats it.
    unstated = tmp_path / "unstated.toml"
    unstated.write_text(good.read_text().replace('shared_mem_opt_in = { value = true, source = "user" }\n', ""))
    result = CliRunner().invoke(cli, ["occupancy", "--spec-file", str(unstated), "-r", "64", "-b", "256"])
    assert result.exit_code == 2 and "shared_mem_opt_in missing" in result.output and len(result.output.splitlines()) == 1
    inconsistent = tmp_path / "inconsistent.toml"
    inconsistent.write_text(good.read_text().replace("value = 232448", "value = 240000"))
    result = CliRunner().invoke(cli, ["specs", "validate", str(inconsistent)])
    assert result.exit_code == 2 and "shared_mem_per_block_optin" in result.output


def test_rules_and_explain():
    doc = json.loads(run("rules", "--format", "json").output)
    codes = [r["code"] for r in doc["rules"]]
    assert "TA106" in codes and all({"code", "name", "severity", "source"} <= set(r) for r in doc["rules"])
    for code in codes:
        result = run("explain", code)
        assert result.exit_code == 0 and code in result.output and "Source:" in result.output
    assert CliRunner().invoke(cli, ["explain", "TA999"]).exit_code == 2


def test_suggest_json():
    result = run("suggest", "--arch", "h100-sxm", "--registers", "32", "--dynamic-shared-mem-per-thread", "64",
                 "--format", "json")
    doc = json.loads(result.output)
    assert result.exit_code == 0
    assert {"block_size", "min_grid_size", "occupancy"} <= set(doc)
    assert doc["min_grid_size"] == doc["blocks_per_sm"] * 132


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=12), st.integers(-10**6, 10**7).map(str)), min_size=3, max_size=3),
       st.sampled_from(["volta", "sm_90", "fermi", "12.0", "turing"]))
def test_fuzzed_values_never_traceback(values, arch):
    registers, block, smem = values
    result = CliRunner().invoke(cli, ["occupancy", "--arch", arch, "--registers", registers, "--block-size", block,
                                      "--shared-mem", smem, "--format", "json"])
    assert result.exit_code in (0, 1, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    if result.exit_code == 2:
        assert result.output.startswith("tuneadvise: error: --") and len(result.output.strip().splitlines()) == 1


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_fuzzed_batch_lines_never_traceback(line):
    result = CliRunner().invoke(cli, ["occupancy", "--batch", "-", "--format", "jsonl"], input=line)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code in (0, 1, 2)
    for out in result.output.splitlines():
        json.loads(out)


def test_version_is_the_installed_packages():
    # cli/version.py is the one place the version is written; pyproject.toml reads it from there
    from importlib.metadata import version

    from tuneadvise.cli.version import __version__
    from tuneadvise.specs.releases import DEFAULT_RELEASE

    assert version("tuneadvise") == __version__
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and result.output == (
        f"tuneadvise, version {__version__} (occupancy exact to cuda_occupancy.h of CUDA {DEFAULT_RELEASE})\n")


# --------------------------------------------------------------------------
# Human text by default; machine formats on request
# --------------------------------------------------------------------------

BOX_DRAWING = set("─│┌┐└┘├┤┬┴┼━┃┏┓┗┛╭╮╯╰═║")
VOLTA = ("occupancy", "--arch", "volta", "-r", "64", "-b", "256")


def test_text_is_the_default_when_piped():
    result = CliRunner().invoke(cli, list(VOLTA))
    assert result.exit_code == 0
    assert not result.output.lstrip().startswith("{")
    assert "Registers (limiter)" in result.output and "= 50% (model)" in result.output
    assert not BOX_DRAWING & set(result.output) and "\x1b[" not in result.output
    assert all(line == line.rstrip() for line in result.output.splitlines())


@pytest.mark.parametrize("command", [VOLTA, ("suggest", "--arch", "h100-sxm", "-r", "32")])
def test_the_environment_default_format(command):
    result = CliRunner().invoke(cli, list(command), env={"TUNEADVISE_FORMAT": "json"})
    assert json.loads(result.output)["schema_version"] == 1
    explicit = CliRunner().invoke(cli, [*command, "--format", "table"], env={"TUNEADVISE_FORMAT": "json"})
    assert not explicit.output.startswith("{")
    unknown = CliRunner().invoke(cli, list(command), env={"TUNEADVISE_FORMAT": "sarif"})
    assert not unknown.output.startswith("{") and unknown.exit_code == 0


def test_batch_is_json_lines_whatever_the_environment_says():
    line = json.dumps({"arch": "volta", "registers": 64, "block_size": 256}) + "\n"
    result = CliRunner().invoke(cli, ["occupancy", "--batch", "-"], input=line, env={"TUNEADVISE_FORMAT": "table"})
    assert json.loads(result.output)["active_blocks_per_sm"] == 4


def test_no_colour_under_no_color_even_on_a_terminal(monkeypatch):
    from tuneadvise.cli import common

    monkeypatch.setattr(common, "stdout_is_terminal", lambda: True)
    monkeypatch.setenv("NO_COLOR", "1")
    out = common.console()
    assert out.no_color
    monkeypatch.delenv("NO_COLOR")
    assert not common.console().no_color


# --------------------------------------------------------------------------
# 80 columns, plurals, one percent
# --------------------------------------------------------------------------

def text80(*args):
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "80"})


def test_80_columns_wrap_between_words_and_keep_names_whole():
    result = text80("occupancy", "--arch", "rtx-4090", "-r", "64", "-b", "200", "--cluster-size", "4",
                    "--grid-size", "100")
    lines = result.output.splitlines()
    assert max(map(len, lines)) <= 80 and "…" not in result.output
    assert "GeForce RTX 4090" in result.output  # the product's name, whole
    header = next(line for line in lines if line.startswith("Resource"))
    right = header.index("Blocks/SM allowed") + len("Blocks/SM allowed")
    rows = [line for line in lines if line.split(" ")[0] in ("Warps", "Registers", "Blocks")]
    assert rows and all(len(row) == right for row in rows)  # numbers right-aligned under their heading


def test_findings_wrap_without_losing_a_word():
    args = ("occupancy", "--arch", "volta", "-r", "64", "-b", "256")
    text = " ".join(text80(*args).output.split())
    for finding in json.loads(text80(*args, "--format", "json").output)["findings"]:
        assert " ".join(finding["message"].split()) in text


def test_plurals_agree():
    one = text80("occupancy", "--arch", "volta", "-r", "255", "-b", "256").output
    assert "Occupancy: 1 block/SM" in one and "1 blocks" not in one
    many = text80(*VOLTA).output
    assert "Occupancy: 4 blocks/SM" in many
    suggested = text80("suggest", "--arch", "h100-sxm", "-r", "255", "--sm-count", "1").output
    assert "1 block/SM" in suggested and "fill 1 SM:" in suggested and "1 blocks" not in suggested


def test_occupancy_is_printed_as_one_percent_everywhere():
    assert "occupancy 100% on sm_90" in text80("suggest", "--arch", "h100-sxm", "-r", "32").output
    assert "= 50% (model)" in text80(*VOLTA).output


# --------------------------------------------------------------------------
# One error style, and how a run ends (exit codes, signals, closed pipes)
# --------------------------------------------------------------------------

@pytest.mark.parametrize("args, start", [
    (("occupancy", "--arch", "volta", "-r", "1", "-b", "1", "--nope"), "tuneadvise: error: No such option '--nope'"),
    (("occupancy", "--arch", "volta", "-r", "1", "-b", "1", "--format", "xml"), "tuneadvise: error: --format: "),
    (("suggest", "--arch", "volta"), "tuneadvise: error: --registers: required"),
    (("suggest", "--arch", "volta", "-r", "32", "--sm-count", "0"), "tuneadvise: error: --sm-count: must be from 1"),
    (("explain",), "tuneadvise: error: CODE (argument): missing"),
    (("occupancy", "--select", "XX9", "--arch", "volta", "-r", "1", "-b", "1"), "tuneadvise: error: --select: "),
])
def test_one_error_style(args, start):
    result = CliRunner().invoke(cli, list(args))
    assert_one_line_error(result)
    assert result.output.startswith(start), result.output


def test_internal_error_is_one_line_and_a_distinct_exit(monkeypatch):
    from tuneadvise.advisor.engine import occupancy as engine

    def broken(*args):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(engine, "occupancy", broken)
    result = CliRunner().invoke(cli, list(VOLTA))
    assert_one_line_error(result, "internal error: RuntimeError: boom\\nsecond line", "--debug", exit_code=70)
    debug = CliRunner().invoke(cli, ["--debug", *VOLTA])
    assert debug.exit_code == 70 and "Traceback" in debug.stderr


def test_ctrl_c_exits_130(monkeypatch):
    from tuneadvise.advisor.engine import occupancy as engine

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "occupancy", interrupted)
    result = CliRunner().invoke(cli, list(VOLTA))
    assert result.exit_code == 130 and "Traceback" not in result.output and "Aborted" not in result.output


def test_completion_of_arch_names_and_rule_codes():
    from tuneadvise.cli.options import arch_names, complete_arch, complete_rule, complete_rule_codes

    names = arch_names()
    assert {"volta", "hopper", "sm_90", "9.0", "ga102", "h100-sxm", "v100", "rtx-4090"} <= set(names)
    assert "h100-sxm" in complete_arch(None, None, "H1") and all(n.startswith("h1") for n in complete_arch(None, None, "h1"))
    assert complete_arch(None, None, "sm_8") == sorted(n for n in names if n.startswith("sm_8"))
    assert "TA301" in complete_rule_codes(None, None, "ta30")
    assert complete_rule_codes(None, None, "TA1,TA30")[0].startswith("TA1,TA30")
    assert "TA106" in complete_rule(None, None, "TA10") and "dynamic-shared-mem-needs-opt-in" in complete_rule(None, None, "dyn")


def test_completion_through_the_shell_protocol():
    env = {"_TUNEADVISE_COMPLETE": "bash_complete", "COMP_WORDS": "tuneadvise occupancy --arch hop", "COMP_CWORD": "3"}
    result = CliRunner().invoke(cli, [], prog_name="tuneadvise", env=env)
    assert "plain,hopper" in result.output.split()
    env = {"_TUNEADVISE_COMPLETE": "bash_complete", "COMP_WORDS": "tuneadvise occupancy --select TA60", "COMP_CWORD": "3"}
    result = CliRunner().invoke(cli, [], prog_name="tuneadvise", env=env)
    assert "plain,TA603" in result.output.split()


ENTRY = [sys.executable, "-c", "from tuneadvise.cli.main import main; main()"]


def test_a_closed_pipe_ends_quietly_with_141(tmp_path):
    lines = tmp_path / "lines.jsonl"
    lines.write_text("".join(json.dumps({"arch": "sm_90", "registers": r % 256, "block_size": 128}) + "\n"
                               for r in range(20000)))
    process = subprocess.Popen([*ENTRY, "occupancy", "--batch", str(lines)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    process.stdout.readline()
    process.stdout.close()
    assert process.wait(timeout=60) == 141
    assert process.stderr.read() == b""


def test_a_full_disk_is_one_line_and_74():
    with open("/dev/full", "w") as full:
        done = subprocess.run([*ENTRY, *VOLTA, "--format", "json"], stdout=full, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 74
    assert done.stderr.startswith("tuneadvise: error: cannot write the output") and done.stderr.count("\n") == 1


def test_closed_stdout_and_stdin(tmp_path):
    closed_out = subprocess.run([*ENTRY, *VOLTA], stderr=subprocess.PIPE, text=True, preexec_fn=lambda: os.close(1))
    assert closed_out.returncode == 74 and closed_out.stderr.count("\n") == 1 and "Traceback" not in closed_out.stderr
    closed_in = subprocess.run([*ENTRY, "occupancy", "--batch", "-"], capture_output=True, text=True,
                               preexec_fn=lambda: os.close(0))
    assert (closed_in.returncode, closed_in.stdout, closed_in.stderr) == (0, "", "")


def _as_a_foreground_job():
    """Ctrl-C reaches a terminal's foreground job with SIGINT at its default; a suite started in
    the background of a shell without job control inherits it ignored, and Python keeps it so."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_sigint_exits_130():
    process = subprocess.Popen([*ENTRY, "occupancy", "--batch", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, preexec_fn=_as_a_foreground_job)
    process.stdin.write(json.dumps({"arch": "volta", "registers": 64, "block_size": 256}) + "\n")
    process.stdin.flush()
    process.stdout.readline()  # running: the batch loop is waiting for the next line
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 130
    assert "Traceback" not in process.stderr.read()


# --------------------------------------------------------------------------
# Fuzzed inputs: never a traceback, every error one bounded line
# --------------------------------------------------------------------------

ANY_TEXT = st.one_of(st.text(max_size=12), st.integers(-10**6, 10**7).map(str), st.text(min_size=500, max_size=2000))


@settings(max_examples=150, deadline=None)
@given(st.lists(ANY_TEXT, min_size=4, max_size=4), st.sampled_from(["volta", "sm_90", "fermi", "h100-sxm"]))
def test_fuzzed_suggest_never_tracebacks(values, arch):
    registers, smem, per_thread, grid = values
    result = CliRunner().invoke(cli, ["suggest", "--arch", arch, "--registers", registers, "--shared-mem", smem,
                                      "--dynamic-shared-mem-per-thread", per_thread, "--grid-size", grid])
    assert result.exit_code in (0, 1, 2), result.output
    if result.exit_code == 2:
        assert_one_line_error(result)
        assert result.output.startswith("tuneadvise: error: --") and len(result.output) < 500


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([f.option for f in __import__("tuneadvise.advisor.launch", fromlist=["FIELDS"]).FIELDS
                        if f.key != "opt_in"]), ANY_TEXT)
def test_fuzzed_occupancy_options_never_traceback(option, value):
    args = {"--arch": "sm_90", "--registers": "32", "--block-size": "256", option: value}
    result = CliRunner().invoke(cli, ["occupancy", *sum(args.items(), ()), "--format", "json"])
    assert result.exit_code in (0, 1, 2), result.output
    if result.exit_code == 2:
        assert_one_line_error(result, f"tuneadvise: error: {option}: ")
        assert len(result.output) < 500


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["arch", "registers", "block_size", "cluster_size", "compiled_for", "grid_size"]),
                       st.one_of(st.integers(-5, 2000), st.text(max_size=3000), st.none(), st.booleans())))
def test_fuzzed_batch_error_lines_are_bounded(item):
    result = CliRunner().invoke(cli, ["occupancy", "--batch", "-", "--arch", "volta"], input=json.dumps(item) + "\n")
    assert result.exit_code in (0, 1, 2)
    [line] = [json.loads(out) for out in result.output.splitlines()]
    if "error" in line:
        assert len(line["error"]["message"]) < 300 and "\n" not in line["error"]["message"]


@pytest.mark.parametrize("grid", ["1" + "0" * 400, "1e400", "-1", "nan", "9" * 5000])
def test_suggest_grid_size_out_of_range_is_one_line(grid):
    """A number too large for a float (10**400) is one line naming --grid-size and its range."""
    result = CliRunner().invoke(cli, ["suggest", "--arch", "sm_90", "--registers", "32", "--grid-size", grid])
    assert_one_line_error(result, "--grid-size:", "2147483647")
    assert len(result.output) < 300


@pytest.mark.parametrize("args", [["lint", "a\0b"], ["diff", "a", "b\0"], ["occupancy", "--spec-file", "x\0"],
                                  ["check-source", "k\0.cu"]])
def test_a_nul_byte_in_an_argument_given_in_process_is_bad_input(args):
    """No OS passes one, but cli([...]) can: click's path checks raised ValueError (exit 70)."""
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and result.output.count("\n") == 1 and "NUL byte" in result.output


@pytest.mark.parametrize("command", [["occupancy", "-a", "volta", "-r", "64", "-b", "256"],
                                     ["suggest", "-a", "volta", "-r", "64"]])
def test_text_says_which_cuda_release_answered(command):
    """Only the JSON said it: `--cuda 12.9` answered silently as 12.9's header does."""
    assert "cuda_occupancy.h of CUDA 12.9" in " ".join(CliRunner().invoke(cli, [*command, "--cuda", "12.9"]).output.split())
    from tuneadvise.specs.records import DEFAULT_RELEASE

    assert f"cuda_occupancy.h of CUDA {DEFAULT_RELEASE}" in " ".join(CliRunner().invoke(cli, command).output.split())


@pytest.mark.parametrize("value", ["-" + "0" * 600 + "=\0", "-1=\0"])
def test_a_nul_in_a_value_that_looks_like_an_option_names_the_option_it_was_given_to(value):
    """Found by test_fuzzed_suggest_never_tracebacks: `--grid-size '-000...=<NUL>'` was named by
    the value itself, hundreds of characters long, rather than by --grid-size."""
    result = CliRunner().invoke(cli, ["suggest", "--arch", "volta", "--registers", "32", "--grid-size", value])
    assert result.exit_code == 2
    assert result.output.startswith("tuneadvise: error: --grid-size: holds a NUL byte") and len(result.output) < 200


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_check_source_on_a_binary_file_is_bad_input_naming_it(tmp_path, fmt):
    """An object file given by mistake was scanned as text: `0 findings`, exit 0."""
    binary = tmp_path / "k.o"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(64) + b"__shfl(x, 1)")
    result = CliRunner().invoke(cli, ["check-source", str(binary), "-t", "sm_90", "--format", fmt])
    assert result.exit_code == 2
    assert result.output.strip() == f"tuneadvise: error: PATHS: {binary} is a binary file (build output), " \
                                    "not CUDA source"


BATCH_LINE = '{"registers": 32, "block_size": 128}\n'


@pytest.mark.parametrize("option", [["-r", "72"], ["-b", "384"], ["--shared-mem", "0"], ["--grid-size", "500"],
                                    ["--carveout", "default"], ["--opt-in"], ["--bytes-in-flight", "64"]])
def test_a_launch_option_beside_batch_is_refused_not_dropped(option):
    """`occupancy --batch lines.jsonl -r 72` answered each line for its own registers and dropped
    72 without a word (even given at its default value): the option is named as unused."""
    result = run("occupancy", "--arch", "h100-sxm", *option, "--batch", "-", input=BATCH_LINE)
    assert_one_line_error(result, option[0] if option[0].startswith("--") else "--", "not used with --batch")
    assert "schema_version" not in result.output


def test_batch_defaults_are_still_taken_from_arch_and_cuda():
    result = run("occupancy", "--arch", "h100-sxm", "--cuda", "12.0", "--batch", "-", input=BATCH_LINE)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["cuda_release"] == "12.0"


@settings(max_examples=60, deadline=None)
@given(arch=st.sampled_from(["sm_70", "sm_80", "sm_86", "sm_90", "sm_120"]), registers=st.integers(16, 255),
       block=st.sampled_from([64, 128, 256, 512]), blocks=st.integers(1, 8), opt_in=st.booleans())
def test_max_dynamic_smem_text_says_the_figures_its_json_gives(arch, registers, block, blocks, opt_in):
    """The text said '49,152 B keep 2 blocks/SM' where the JSON's blocks_per_sm_at_max was 4:
    text and JSON of one answer carry the same figures."""
    args = ["max-dynamic-smem", "--arch", arch, "-r", str(registers), "-b", str(block), "--blocks-per-sm",
            str(blocks), *(["--opt-in"] if opt_in else [])]
    doc = json.loads(run(*args, "--format", "json").stdout)
    text = " ".join(run(*args).stdout.split())
    if doc["max_dynamic_shared_mem"] is None:
        return
    assert f"Up to {doc['max_dynamic_shared_mem']:,} B" in text
    at_max = doc["blocks_per_sm_at_max"]
    if at_max > blocks:
        assert f"At that size {at_max} block{'s' if at_max != 1 else ''}/SM reside" in text, text


def test_suggest_refuses_a_base_without_a_size_per_thread():
    """`suggest --dynamic-shared-mem-base 1K` answered for no dynamic shared memory at all (the
    base only adds to a per-thread size): it names what to give instead."""
    result = run("suggest", "--arch", "h100-sxm", "-r", "32", "--dynamic-shared-mem-base", "1K")
    assert_one_line_error(result, "--dynamic-shared-mem-base", "--dynamic-shared-mem-per-thread")
    both = run("suggest", "--arch", "h100-sxm", "-r", "32", "--dynamic-shared-mem-base", "1K",
               "--dynamic-shared-mem-per-thread", "8", "--format", "json")
    assert json.loads(both.output)["dynamic_shared_mem_function"].startswith("1024")
