"""Every command's inputs, generated: argument vectors built from each
click command's own parameters (so a new option is covered the day it lands),
with values of every shape and files that are real fixtures, mutated fixtures
or arbitrary bytes, run through click's CliRunner. Whatever the input: an exit
code of the documented set (0-3 here: 70 is an internal error), no traceback,
and an error is one short line.

The number of examples per command comes from the hypothesis profile
(tests/conftest.py) scaled by EXAMPLES_SHARE, so the ci profile keeps this
suite to about a minute."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.text import MAX_ERROR
from tuneadvise.cli.main import COMMANDS, cli

from ..helpers import ROOT, assert_one_line_error

FIXTURES = ROOT / "tests" / "fixtures"
DOCUMENTED = {0, 1, 2, 3}  # 74 (output not writable), 130 and 141 need a real terminal or pipe
# The ci profile's 2,500 examples per target x this share: ~250 per command, ~1 minute in all.
EXAMPLES_SHARE = 0.1
SEEDS = [FIXTURES / "lint" / name for name in (
    "ptxas_sm_90.log", "ptxas_multi.log", "cuobjdump_sm_90.txt", "cuobjdump_multi.txt", "lint_sm_90.cubin",
    "lint_zstd.o", "lint_lz4.o", "driver_lint.toml")] + [FIXTURES / "h100" / "native.toml",
                                                        FIXTURES / "h100" / "probe_quick.json"]
SUFFIXES = [".log", ".txt", ".toml", ".yaml", ".json", ".jsonl", ".cu", ".cubin", ".o", ".sarif", ".svg", ""]


def _examples(share: float = EXAMPLES_SHARE) -> int:
    return max(20, int(settings.default.max_examples * share))


# -- values and files --------------------------------------------------------------

WORDS = st.sampled_from([
    "", " ", "-", "0", "1", "-1", "32", "256", "1024", "16x16", "32,8,2", "2x2x2x2", "12K", "1.5K", "99K", "1G",
    "1e3", "1e400", "-1e400", "nan", "inf", "1e-320", "0x10", "9" * 5000, "1" + "0" * 400, "default", "max-l1",
    "50%", "true", "no", "sm_90", "sm_90a", "volta", "hopper", "9.0", "compute_70", "h100-sxm", "v100-pcie",
    "sm_1", "sm_9999", "native", "TA3", "TA106", "ta9", "TA999", "occupancy-cliff", "table", "json", "jsonl",
    "sarif", "markdown", "error", "warning", "all", "a\nb", "é", "\udcff", "x" * 300,
])
VALUES = st.one_of(WORDS, st.text(max_size=12), st.integers().map(str), st.floats().map(repr))


def _mutate(data: bytes, edits) -> bytes:
    """Apply (position, kind, payload) edits: flip, insert, delete, repeat a slice, truncate."""
    buffer = bytearray(data)
    for position, kind, payload in edits:
        if not buffer:
            buffer += payload
            continue
        at = position % len(buffer)
        if kind == "flip":
            buffer[at] ^= payload[0] if payload else 0xFF
        elif kind == "insert":
            buffer[at:at] = payload
        elif kind == "delete":
            del buffer[at:at + len(payload) * 8 + 1]
        elif kind == "repeat":
            piece = buffer[at:at + 64]
            buffer[at:at] = piece * (len(payload) % 8 + 1)
        else:
            del buffer[at:]
    return bytes(buffer)


EDITS = st.lists(st.tuples(st.integers(0, 1 << 20), st.sampled_from(["flip", "insert", "delete", "repeat", "truncate"]),
                           st.binary(max_size=16)), max_size=6)
FILE_BODIES = st.one_of(
    st.tuples(st.sampled_from(SEEDS), EDITS).map(lambda seed: _mutate(seed[0].read_bytes(), seed[1])),
    st.sampled_from(SEEDS).map(Path.read_bytes),
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogateescape")),
)


def _bodies(seeds):
    return st.one_of(st.tuples(st.sampled_from(seeds), EDITS).map(lambda seed: _mutate(seed[0].read_bytes(), seed[1])),
                     st.sampled_from(seeds).map(Path.read_bytes), FILE_BODIES)


@st.composite
def files(draw, folder: Path, seeds=SEEDS):
    """A path for an input: a new file (a fixture, mutated or not, or arbitrary bytes, under any
    suffix), or a path that is not a readable file."""
    kind = draw(st.sampled_from(["file", "file", "file", "file", "missing", "directory", "devnull"]))
    if kind == "missing":
        return str(folder / "missing.log")
    if kind == "directory":
        return str(folder)
    if kind == "devnull":
        return os.devnull
    seed_suffixes = sorted({seed.suffix for seed in seeds})
    name = f"in{draw(st.integers(0, 10**9))}{draw(st.one_of(st.sampled_from(seed_suffixes), st.sampled_from(SUFFIXES)))}"
    path = folder / name
    path.write_bytes(draw(_bodies(seeds)))
    return str(path)


# -- argument vectors from each command's own parameters ------------------------------

OUTPUT_OPTIONS = {"output", "save", "plot", "baseline"}  # they write: kept inside the example's folder
# Values each option takes when used well: half of the values drawn are these, so examples get
# past the first check and into the readers, the engine and the writers.
VALID = {
    "arch": ["sm_90", "volta", "h100-sxm", "8.6", "sm_120", "v100-pcie", "hopper", "sm_75"],
    "registers": ["32", "64", "255", "0"], "block_size": ["256", "16x16", "1024", "32,8,2", "96"],
    "shared_mem": ["0", "12K", "48K"], "dynamic_shared_mem": ["0", "16K", "100K"],
    "carveout": ["default", "max-l1", "50"], "barriers": ["1", "16"], "max_threads_per_block": ["256", "1024"],
    "grid_size": ["1000", "1", "132"], "sm_count": ["132", "80"], "cluster_size": ["2", "8"],
    "compiled_for": ["sm_70", "sm_90"], "spill_stores": ["0", "64"], "spill_stores__alias": ["8"],
    "spill_loads": ["0", "64"], "stack_frame": ["0", "400"], "target": ["sm_70", "volta", "6.0"],
    "select": ["TA3", "TA1,TA9", "TA301"], "ignore": ["TA906", "TA5"], "min_occupancy": ["0.5", "0.9"],
    "flops": ["2.1T", "1e9"], "bytes_": ["800G", "1e9"], "intensity": ["2", "0.25", "100"],
    "shared_bytes_per_flop": ["6", "0.5"], "achieved": ["1.2T", "5e11"], "only": ["compute", "dram,l2"],
    "device": ["0", "all"], "code": ["TA301", "occupancy-cliff", "ta106"],
    "dynamic_shared_mem_per_thread": ["64", "0"], "dynamic_shared_mem_base": ["1K"],
}
BASE = {  # a valid command line the generated arguments are added to (a later option wins)
    "occupancy": ["--arch", "sm_90", "-r", "32", "-b", "256"], "suggest": ["--arch", "h100-sxm", "-r", "32"],
    "roofline": ["--arch", "h100-sxm", "--intensity", "2"], "check-source": ["-t", "sm_70"],
}
SEEDS_FOR = {  # the files an option or argument reads, to mutate
    "config_file": [FIXTURES / "lint" / "driver_lint.toml", ROOT / "docs" / "examples" / "roofline-kernels.toml"],
    "kernels_path": [ROOT / "docs" / "examples" / "roofline-kernels.toml"],
    "spec_file": [FIXTURES / "h100" / "native.toml", ROOT / "specs" / "data" / "volta.toml"],
    "path": [FIXTURES / "h100" / "native.toml", FIXTURES / "lint" / "lint_sm_90.cubin"],
    "probe_path": [FIXTURES / "h100" / "probe_quick.json"],
    "paths": [ROOT / "tests" / "fixtures" / "lint" / "ptxas_sm_90.log"],
}


@st.composite
def arguments(draw, command: click.Command, folder: Path, prefix: tuple[str, ...] = ()):
    """A list of arguments for `command`: some of its options with generated values, and its
    positional arguments (for a group: its options, then maybe one subcommand's)."""
    args = list(prefix)
    for param in command.params:
        if isinstance(param, click.Argument):
            count = draw(st.integers(0, 3)) if param.nargs == -1 else param.nargs
            args += [draw(_value(param, folder)) for _ in range(count)]
        elif param.name != "help" and draw(st.booleans()):
            option = draw(st.sampled_from(param.opts))
            args += [option] if param.is_flag else [option, draw(_value(param, folder))]
    if isinstance(command, click.Group) and draw(st.booleans()):
        name = draw(st.sampled_from(sorted(command.commands)))
        return draw(arguments(command.commands[name], folder, (*args, name)))
    if draw(st.integers(0, 9)) == 0:  # something no command takes
        args.insert(draw(st.integers(0, len(args))), draw(st.sampled_from(["--nope", "-Z", "extra"])))
    return args


def _value(param: click.Parameter, folder: Path):
    kind = param.type
    if param.name in OUTPUT_OPTIONS:
        return st.sampled_from([str(folder / "out.json"), str(folder / "out.svg"), str(folder / "out"), "-",
                                os.devnull, str(folder / "no" / "such" / "dir.json")])
    if isinstance(kind, click.Choice):
        return st.one_of(st.sampled_from(list(kind.choices)), VALUES)
    if isinstance(kind, (click.Path, click.File)):
        return st.one_of(files(folder, SEEDS_FOR.get(param.name, SEEDS)), st.just("-"))
    if param.name in VALID:
        return st.one_of(st.sampled_from(VALID[param.name]), VALUES)
    return VALUES


def check(result) -> None:
    """The contract for any input."""
    output = result.output
    assert result.exit_code in DOCUMENTED, (result.exit_code, output[-3000:])
    assert "Traceback" not in output and "internal error" not in output, output[-3000:]
    errors = [line for line in output.splitlines() if line.startswith("tuneadvise: error:")]
    assert len(errors) <= 1, errors
    assert all(len(line) <= len("tuneadvise: error: ") + MAX_ERROR for line in errors), errors


def run(args, stdin=b""):
    return CliRunner().invoke(cli, args, input=stdin, env={"NO_COLOR": "1", "TUNEADVISE_FORMAT": None})


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("properties")


# One test per command, so a failure names it and each has its own examples.
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_any_arguments_to_any_command_keep_the_contract(name, folder):
    command = cli.get_command(None, name)

    @settings(max_examples=_examples(), deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture])
    @given(arguments(command, folder), FILE_BODIES)
    def property_(args, stdin):
        check(run([name, *BASE.get(name, []), *args], stdin))

    property_()


# -- explicit cases the generated inputs once reached, kept as examples -------------------

LOG = str(FIXTURES / "lint" / "ptxas_sm_90.log")


@pytest.mark.parametrize("suffix, text, message", [
    (".toml", "arch = 5\n", "arch: expected an architecture name"),
    (".yaml", "select: true\n", "select: expected rule codes such as TA301 (a string or a list of them), got True"),
    (".yaml", "ignore: {a: 1}\n", "ignore: expected rule codes"),
    (".json", '{"arch": {"sm_90": 1}}', "arch: expected an architecture name"),
    (".yaml", "x: !!timestamp 2001-13-45\n", ":1: not valid YAML: tags (!!type) are not allowed in a config"),
    (".yaml", "x: 2001-13-45\n", ":1: not valid YAML: a value cannot be read: month must be in 1..12"),
    (".yaml", "x: !!python/object/apply:os.system ['true']\n", "not valid YAML"),
    (".toml", "schema_version = " + "9" * 5000 + "\n", "not valid TOML: Exceeds the limit (4300 digits)"),
    (".json", '{"schema_version": ' + "9" * 5000 + "}", "not valid JSON: Exceeds the limit (4300 digits)"),
    (".yaml", "schema_version: " + "9" * 5000 + "\n", "not valid YAML: a value cannot be read"),
    (".json", '{"min_occupancy": 1e999}', "min_occupancy"),
    (".json", '{"\\ud800": 1}', ""),
    (".json", "[1, 2]", "expected a table of settings at the top level"),
])
def test_configs_of_the_wrong_type_are_one_line(tmp_path, suffix, text, message):
    """A value of the wrong type reaches the validators: they answer one line, never TypeError,
    AttributeError or a bare ValueError."""
    config = tmp_path / f"config{suffix}"
    config.write_text(text)
    assert_one_line_error(run(["lint", LOG, "--config", str(config)]), message)


@pytest.mark.parametrize("text", ["# [tool.tuneadvise]\ntool = 5\n", "[tool]\ntuneadvise = 5  # [tool.tuneadvise]\n",
                                  "tool = [1]  # [tool.tuneadvise\n"])
def test_a_pyproject_found_by_walking_up_with_the_wrong_types_is_one_line(tmp_path, text, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(text)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert_one_line_error(run(["lint", LOG]), "[tool.tuneadvise]: expected a table of settings")


@pytest.mark.parametrize("args, message", [
    (["occupancy", "--arch", "sm_90", "-r", "32", "-b", "256", "--shared-mem", "9" * 5000], "--shared-mem: must be"),
    (["occupancy", "--arch", "sm_90", "-r", "9" * 5000, "-b", "256"], "--registers"),
    (["suggest", "--arch", "sm_90", "-r", "32", "--dynamic-shared-mem-per-thread", "9" * 5000], "--dynamic-shared"),
])
def test_numbers_of_thousands_of_digits_are_one_line(args, message):
    result = run(args)
    assert_one_line_error(result, message)
    assert len(result.output) < 300


@settings(max_examples=_examples(0.04), deadline=None)
@given(st.dictionaries(st.sampled_from(["arch", "inputs", "select", "ignore", "fail_on", "fail-on", "min_occupancy",
                                        "block_size", "schema_version", "kernels", "budgets", "tool", "x"]),
                       st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), VALUES),
                                    lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                            st.dictionaries(VALUES, inner, max_size=3)),
                                    max_leaves=8), max_size=5),
       st.sampled_from([".json", ".yaml"]))
@example({"kernels": [{"name": "k", "block_size": True, "arch": 5}]}, ".json")
@example({"budgets": [{"kernel": None, "max_shared_mem": [1]}]}, ".yaml")
def test_any_config_structure_validates_or_is_one_line(tmp_path_factory, doc, suffix):
    import yaml

    path = tmp_path_factory.mktemp("config") / f"config{suffix}"
    text = json.dumps(doc) if suffix == ".json" else yaml.safe_dump(doc, allow_unicode=False)
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    result = run(["lint", LOG, "--config", str(path), "--format", "json"])
    check(result)
    if result.output.startswith("tuneadvise: error:"):
        assert_one_line_error(result)


ZERO = "/dev/zero"


@pytest.mark.skipif(not os.path.exists(ZERO), reason="no /dev/zero")
@pytest.mark.parametrize("args, message", [
    (["lint", LOG, "--config", ZERO], "larger than 16 MiB"),
    (["lint", LOG, "--baseline", ZERO], "--baseline: cannot read /dev/zero: larger than 16 MiB"),
    (["check-source", "-t", "sm_70", ZERO], "PATHS: cannot read /dev/zero: larger than 32 MiB"),
    (["specs", "validate", ZERO], "larger than 16 MiB"),
    (["roofline", "--arch", "h100-sxm", "--intensity", "2", "--probe", ZERO], "--probe: cannot read /dev/zero"),
])
def test_an_endless_device_as_an_input_file_is_one_line_in_bounded_memory(args, message):
    """/dev/zero given as a config, spec, probe document, baseline or source took gigabytes (6 to 19 GB
    in 20 s) before; each read now stops one byte past its limit."""
    assert_one_line_error(run(args), message)


@pytest.mark.skipif(not os.path.exists(ZERO), reason="no /dev/zero")
def test_endless_build_output_and_batch_lines_are_bounded():
    from tuneadvise.advisor.batch import MAX_LINE_BYTES, lines_of

    result = run(["lint", ZERO, "--format", "json"])
    check(result)
    assert "cannot read" in result.output
    with open(ZERO, "rb") as zeros:
        first = next(iter(lines_of(_Limited(zeros, 3 * MAX_LINE_BYTES))))
    assert len(first) == MAX_LINE_BYTES + 1


class _Limited:
    """A binary stream that ends after `size` bytes (so the test itself ends)."""

    def __init__(self, stream, size):
        self.stream, self.left = stream, size

    def readline(self, limit):
        data = self.stream.read(max(0, min(limit, self.left)))
        self.left -= len(data)
        return data


def test_a_batch_line_over_the_limit_is_one_error_line_and_the_batch_goes_on():
    good = json.dumps({"arch": "sm_90", "registers": 32, "block_size": 256}).encode() + b"\n"
    result = run(["occupancy", "--batch", "-"], good + b"x" * (3 << 20) + b"\n" + good)
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert len(lines) == 3 and lines[0]["launchable"] and lines[2]["launchable"]
    assert lines[1]["error"]["message"] == "line 2: longer than 1048576 bytes, more than any configuration"


def test_control_characters_in_names_reach_the_terminal_escaped(tmp_path):
    """A kernel name (or a malformed line) holding ESC [31m recoloured the user's terminal in the
    human report and in the bad-input lines."""
    log = tmp_path / "names.log"
    log.write_bytes(b"ptxas info    : Compiling entry function 'k\x01\x1b[31m' for 'sm_90'\n"
                    b"ptxas info    : Used 32 registers\n"
                    b"ptxas info    : Compiling entry function 'j' for 'sm_90'\n"
                    b"ptxas info    : Used \x1b[2J registers\n")
    for command in (["lint", str(log), "--format", "table"], ["diff", str(log), str(log), "--format", "table"]):
        result = run(command)
        check(result)
        assert "\x1b" not in result.output and "\x01" not in result.output, result.output
    assert "k\\x01\\x1b[31m [sm_90]" in run(["lint", str(log), "--format", "table"]).output


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_full_device_as_an_output_file_exits_74(tmp_path):
    """lint -o on a full disk is the output failing (74), as stdout on a full disk is, not bad input (2)."""
    result = run(["lint", LOG, "-o", "/dev/full", "--format", "json"])
    assert_one_line_error(result, "cannot write the output: /dev/full: No space left on device (--output)",
                          exit_code=74)


@pytest.mark.skipif(not os.path.exists(ZERO), reason="no /dev/zero")
@pytest.mark.parametrize("source", ["path", "stdin"])
def test_an_endless_batch_line_ends_the_batch_with_its_error_line(source):
    """`occupancy --batch /dev/zero` (or `- < /dev/zero`) skipped its one endless line without end,
    printing nothing; now past MAX_SKIPPED_BYTES its error line is written and the input ends."""
    import subprocess
    import sys

    args = [sys.executable, "-m", "tuneadvise.cli", "occupancy", "--batch", ZERO if source == "path" else "-"]
    with open(ZERO, "rb") as zeros:
        done = subprocess.run(args, stdin=zeros, capture_output=True, timeout=60)
    lines = done.stdout.decode().splitlines()
    assert done.returncode == 2 and len(lines) == 1, (done.returncode, lines, done.stderr[-300:])
    assert json.loads(lines[0])["error"]["message"] == (
        "line 1: no line end within 64 MiB: not a batch of configurations; the rest of the input is not read")


@pytest.mark.skipif(not os.path.exists(ZERO), reason="no /dev/zero")
@pytest.mark.parametrize("name", ["report.csv", "report.csv.gz", "report.ncu-rep"])
def test_a_device_named_as_an_export_is_read_as_what_it_holds(tmp_path, name):
    """`lint report.csv` where report.csv links to /dev/zero was streamed as an export without end
    (an export's name makes it one, whatever it holds); a device is told by its content."""
    import subprocess
    import sys

    (tmp_path / name).symlink_to(ZERO)
    done = subprocess.run([sys.executable, "-m", "tuneadvise.cli", "lint", name, "--format", "json"], cwd=tmp_path,
                          capture_output=True, timeout=60)
    assert done.returncode == 2
    assert [json.loads(done.stdout)["problems"][0]["file"]] == [name]
