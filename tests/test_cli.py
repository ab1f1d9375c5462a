"""The command line, driven through click's CliRunner: output, exit codes, bad input."""

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import assert_one_line_error
from tuneadvise.cli.main import cli


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
[[arch]]
cc = "9.9"
""")
    result, doc = occupancy_json("--spec-file", str(good), "-r", "64", "-b", "256")
    assert result.exit_code == 0 and doc["compute_capability"] == "9.9" and doc["active_blocks_per_sm"] == 4
    bad = tmp_path / "bad.toml"
    bad.write_text(good.read_text().replace("max_blocks_per_sm", "max_blocks_per_smm"))
    result = CliRunner().invoke(cli, ["occupancy", "--spec-file", str(bad), "-r", "64", "-b", "256"])
    assert result.exit_code == 2 and "max_blocks_per_smm" in result.output and "Traceback" not in result.output
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

    assert version("tuneadvise") == __version__
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and result.output == f"tuneadvise, version {__version__}\n"
