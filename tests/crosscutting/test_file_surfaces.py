"""Inputs that come from files, and outputs that are not files: one property per surface.

- YAML configs: any explicit tag, and any plain value the safe loader cannot read, is bad
  input (one line naming the file and line, exit 2), never an internal error.
- Names read from files (a TOML config's `inputs`, a compile_commands.json entry's file,
  directory, command and arguments): a NUL byte is refused before the name reaches the OS.
- Outside text quoted in a message (a batch line's `arch`, a compile_commands file name,
  an architecture name given to the catalog) is clipped: no error line over 500 characters.
- Output paths: checked before any output goes out, and named by their own option.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tuneadvise.cli.main import cli
from tuneadvise.specs.catalog import Catalog
from tuneadvise.specs.names import UnknownArchError

from ..helpers import ROOT, assert_one_line_error

LOG = str(ROOT / "tests" / "fixtures" / "lint" / "ptxas_sm_90.log")
MAX_LINE = 500  # characters of any one line a bad input gives (the reliability contract)
FOLDER_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def run(args, stdin=b""):
    return CliRunner().invoke(cli, args, input=stdin, env={"NO_COLOR": "1", "TUNEADVISE_FORMAT": None})


def assert_bounded(result) -> None:
    """No internal error, a documented exit code and no error line over MAX_LINE characters."""
    assert result.exit_code in (0, 1, 2, 3), result.output[-2000:]
    assert "internal error" not in result.output and "Traceback" not in result.output, result.output[-2000:]
    errors = [line for line in result.output.splitlines() if line.startswith("tuneadvise:")]
    assert max(map(len, errors), default=0) <= MAX_LINE, max(errors, key=len)[:300]


# -- YAML configs -------------------------------------------------------------------------

TAGS = st.sampled_from(["!!timestamp", "!!bool", "!!int", "!!float", "!!binary", "!!str", "!!null", "!!seq",
                        "!!map", "!!set", "!!omap", "!!pairs", "!", "!local", "!!python/object:os.system",
                        "!<tag:yaml.org,2002:int>"])
PLAIN = st.one_of(st.sampled_from(["maybe", "''", "2001-12-14t21:59:xx.10-05:00", "0x", "1e", "[]", "{}", "-",
                                   "0b2", "0o9", "1_000", ".inf", "~", "sm_90", "'x'"]),
                  st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12).map(json.dumps))
KEYS = st.sampled_from(["arch", "block_size", "ignore", "select", "fail_on", "min_occupancy", "inputs"])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=KEYS, tag=TAGS, value=PLAIN, in_list=st.booleans(), line=st.integers(0, 3))
@example(key="arch", tag="!!timestamp", value="2001-12-14t21:59:xx.10-05:00", in_list=False, line=0)
@example(key="block_size", tag="!!bool", value="maybe", in_list=False, line=0)
@example(key="ignore", tag="!!int", value="''", in_list=True, line=0)
def test_a_yaml_tag_is_bad_input_naming_file_and_line(tmp_path, key, tag, value, in_list, line):
    item = f"{tag} {value}"
    text = "# settings\n" * line + f"{key}: {f'[{item}]' if in_list else item}\n"
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    result = run(["lint", LOG, "--config", str(path)])
    assert_one_line_error(result, f"{path}:", ": not valid YAML: ")
    assert re.search(rf"{re.escape(str(path))}:{line + 1}: not valid YAML: ", result.output), result.output


@pytest.mark.parametrize("text, line", [("arch: 2001-13-45\n", 1), ("fail_on: error\nselect: [2001-02-30]\n", 2)])
def test_a_plain_yaml_value_its_constructor_refuses_names_its_line(tmp_path, text, line):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    assert_one_line_error(run(["lint", LOG, "--config", str(path)]), f"{path}:{line}: ", "cannot be read")


def test_plain_yaml_still_reads(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("arch: [sm_90]\nfail_on: 'warning'\nblock_size: 128\n")
    result = run(["lint", LOG, "--config", str(path), "--format", "json"])
    assert result.exit_code in (0, 1), result.output


# -- NUL bytes in names read from files ----------------------------------------------------

PART = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
NAMES = st.tuples(PART, PART).map(lambda parts: f"{parts[0]}\0{parts[1]}")


@FOLDER_SETTINGS
@given(name=NAMES)
@example(name="a\0b.log")
def test_a_nul_byte_in_a_config_input_is_bad_input(tmp_path, name):
    config = tmp_path / "tuneadvise.toml"
    config.write_text(f"inputs = [{toml_string(name)}]\n", encoding="utf-8")
    result = run(["lint", "--config", str(config)])
    assert_one_line_error(result, "inputs", "NUL byte")


def toml_string(text: str) -> str:
    """A TOML basic string holding `text`: anything but printable ASCII as a \\u or \\U escape."""
    def escaped(c):
        if " " <= c <= "~" and c not in '"\\':
            return c
        return f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"
    return '"' + "".join(map(escaped, text)) + '"'


ENTRY_KEYS = st.sampled_from(["file", "directory", "arguments", "command"])


@FOLDER_SETTINGS
@given(key=ENTRY_KEYS, name=NAMES)
@example(key="file", name="a\0.cu")
@example(key="arguments", name="-D\0=1")
def test_a_nul_byte_in_a_compile_commands_entry_is_a_problem_not_a_crash(tmp_path, key, name):
    (tmp_path / "a.cu").write_text("__global__ void k() {}\n")
    entry = {"directory": str(tmp_path), "file": "a.cu", "arguments": ["nvcc", "-c", "a.cu"]}
    if key == "file":
        entry["file"] = name + ".cu"
    elif key == "directory":
        entry["directory"] = name
    elif key == "arguments":
        entry["arguments"] = ["nvcc", name, "-c", "a.cu"]
    else:
        del entry["arguments"]
        entry["command"] = f"nvcc -c a.cu {shlex.quote(name)}"
    commands = tmp_path / "compile_commands.json"
    commands.write_text(json.dumps([entry]))
    result = run(["lint", "--compile-commands", str(commands), "--arch", "sm_90"])
    assert_bounded(result)
    assert result.exit_code == 2 and "NUL byte" in result.output, result.output[-2000:]


# -- bounded echo --------------------------------------------------------------------------

LONG = st.one_of(st.integers(500, 200_000).map(lambda n: "x" * n),
                 st.text(min_size=501, max_size=3000), st.integers(600, 6000).map(lambda n: "sm_" + "9" * n))


@settings(max_examples=40, deadline=None)
@given(arch=LONG)
@example(arch="x" * 200_000)
def test_a_batch_error_line_quotes_a_long_arch_clipped(arch):
    line = json.dumps({"arch": arch, "registers": 32, "block_size": 256}) + "\n"
    result = run(["occupancy", "--batch", "-"], stdin=line.encode("utf-8", "surrogatepass"))
    assert result.exit_code == 2, result.output[-500:]
    # The message as a reader of the JSON line gets it (JSON's own escapes aside).
    message = json.loads(result.output)["error"]["message"]
    assert len(message) <= MAX_LINE, len(message)


@settings(max_examples=40, deadline=None)
@given(text=LONG)
@example(text="x" * 5000)
@example(text="sm_" + "9" * 5000)
def test_the_catalog_quotes_an_unknown_name_clipped(text):
    with pytest.raises(UnknownArchError) as raised:
        Catalog().resolve(text)
    assert len(str(raised.value)) <= MAX_LINE


FILE_NAMES = st.integers(200, 6000).map(lambda n: "a" * n + ".cu")
SHAPES = st.sampled_from(["no arch", "bad command", "no command"])


@FOLDER_SETTINGS
@given(name=FILE_NAMES, shape=SHAPES)
@example(name="a" * 4997 + ".cu", shape="no arch")
def test_a_long_compile_commands_file_name_is_quoted_clipped(tmp_path, name, shape):
    entry = {"directory": ".", "file": name}
    if shape == "no arch":
        entry["arguments"] = ["nvcc", "-c", name]
    elif shape == "bad command":
        entry["command"] = f"nvcc '-c {name}"
    commands = tmp_path / "compile_commands.json"
    commands.write_text(json.dumps([entry]))
    result = run(["lint", "--compile-commands", str(commands)])
    assert_bounded(result)
    assert result.exit_code == 2


# -- output paths checked first, named by their option ---------------------------------------

UNWRITABLE = ["/proc/tuneadvise-test.json", "/proc/self/no-such-folder/x.json"]


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="no /proc")
@pytest.mark.parametrize("path", UNWRITABLE)
@pytest.mark.parametrize("args, option", [
    (["occupancy", "--arch", "sm_90", "-r", "32", "-b", "256", "--format", "json", "--plot", "{}.png"], "--plot"),
    (["roofline", "--arch", "h100-sxm", "--intensity", "2", "--format", "json", "--plot", "{}.svg"], "--plot"),
    (["lint", LOG, "--format", "json", "-o", "{}"], "--output"),
    (["lint", LOG, "--baseline", "{}", "--update-baseline"], "--baseline"),
    (["probe", "--save", "{}.toml"], "--save"),  # before CuPy is looked for
])
def test_an_unwritable_output_fails_before_any_output_naming_its_option(path, args, option):
    pytest.importorskip("matplotlib") if "--plot" in args else None
    result = run([arg.format(path) for arg in args])
    assert_one_line_error(result, f"{option}: ")


def test_a_folder_that_is_a_file_fails_before_the_report(tmp_path):
    (tmp_path / "file").write_text("")
    result = run(["lint", LOG, "--format", "json", "--update-baseline", "--baseline", str(tmp_path / "file" / "b.json")])
    assert_one_line_error(result, "--baseline: cannot write")
    assert [p.name for p in Path(tmp_path).iterdir()] == ["file"]


# -- sizes: a file read whole is bounded before it is parsed ------------------------------------

def test_a_yaml_config_of_megabytes_is_refused_before_it_is_parsed(tmp_path):
    # PyYAML builds some 100 KB/s: a 1 MB config took 9 to 70 s to refuse.
    path = tmp_path / "c.yaml"
    path.write_text("a: 1\n" * 200_000)
    assert_one_line_error(run(["lint", LOG, "--config", str(path)]), f"{path}: a YAML config of more than 128 KiB")


def test_a_yaml_config_under_the_limit_still_reads(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("kernels:\n" + "  - name: k\n    block_size: 256\n" * 3000)
    assert run(["lint", LOG, "--config", str(path), "--format", "json"]).exit_code in (0, 1)


@pytest.mark.parametrize("body, message", [
    (b"[" + b"9" * 5000 + b"]", "is not JSON: Exceeds the limit"),  # json.loads' ValueError: exit 70 before
    (b"[" * 100_000 + b"]" * 100_000, "is not JSON"),
])
def test_compile_commands_json_python_will_not_read_is_bad_input(tmp_path, body, message):
    path = tmp_path / "compile_commands.json"
    path.write_bytes(body)
    assert_one_line_error(run(["lint", "--compile-commands", str(path), "--arch", "sm_90"]), message)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_an_endless_compile_commands_is_read_in_bounded_memory():
    result = run(["lint", "--compile-commands", "/dev/zero", "--arch", "sm_90"])
    assert_one_line_error(result, "cannot read /dev/zero: larger than 64 MiB")
