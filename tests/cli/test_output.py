"""What every command promises about its output stream: a reader that goes away ends it with 141
and nothing printed (through a real pipe), and text for a pipe fits COLUMNS, without escape
sequences or box drawing, with user and rule text shown as written (never read as markup)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from tuneadvise.cli.main import cli

from ..helpers import ROOT

LINT = ROOT / "tests" / "fixtures" / "lint"
H100 = ROOT / "tests" / "fixtures" / "h100"

# Every command that needs neither a compiler nor a GPU, with inputs that make it print the most.
COMMANDS = [
    ["occupancy", "--arch", "volta", "-r", "64", "-b", "256", "--shared-mem", "12K"],
    ["occupancy", "--arch", "h100-sxm", "-r", "32", "-b", "128", "--cluster-size", "8", "--grid-size", "100",
     "--bytes-in-flight", "64"],
    ["occupancy", "--arch", "rtx-4090", "-r", "32", "-b", "16x16", "--spill-stores", "8", "--stack-frame", "256"],
    ["occupancy", "--arch", "sm_70", "-r", "32", "-b", "256", "--graphs"],
    ["occupancy", "--arch", "sm_90", "-r", "32", "-b", "128", "--dynamic-shared-mem", "60K"],
    ["suggest", "--arch", "h100-sxm", "--registers", "32", "--grid-size", "1000"],
    ["max-dynamic-smem", "--arch", "h100-sxm", "--blocks-per-sm", "2", "-r", "32", "-b", "256", "--opt-in"],
    ["specs"],
    ["specs", "show", "sm_120"],
    ["specs", "show", "h100-sxm"],
    ["specs", "show", "volta", "--cuda", "12.9"],
    ["rules"],
    ["explain", "TA906"],
    ["lint", str(LINT / "ptxas_multi.log"), str(LINT / "ptxas_sm_80.log")],
    ["lint", str(LINT / "ptxas_sm_90.log"), "--statistics"],
    ["lint", str(LINT / "lint_multi.o")],
    ["diff", str(LINT / "ptxas_sm_80.log"), str(LINT / "ptxas_sm_90.log")],
    ["roofline", "--arch", "v100-pcie", "--intensity", "2", "--shared-bytes-per-flop", "6"],
    ["roofline", "--arch", "v100-pcie", "--kernels", str(ROOT / "docs" / "examples" / "roofline-kernels.toml")],
    ["roofline", "--arch", "v100-pcie", "--probe", str(H100 / "probe.json"), "--intensity", "4"],
]
PIPED = [*COMMANDS, ["specs", "--format", "json"], ["schema", "lint"], ["--help"], ["--version"], ["occupancy", "--help"],
         ["lint", str(LINT / "ptxas_multi.log"), "--format", "sarif"], ["occupancy", "--batch", str(LINT / "ptxas_multi.log")]]


def _id(args):
    return " ".join(a if "/" not in a else a.rsplit("/", 1)[1] for a in args)


@pytest.mark.parametrize("args", PIPED, ids=_id)
def test_a_closed_pipe_ends_the_command_with_141_and_nothing_printed(args):
    """`tuneadvise specs | head -1` under `set -o pipefail`: 141 (128 + SIGPIPE), as a shell reports
    a writer its reader left, never 1 ("cannot launch"). The pipe is closed before the command writes."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "tuneadvise.cli", *args], stdout=write, stderr=subprocess.PIPE,
                              timeout=120, env={**os.environ, "TUNEADVISE_CACHE_DIR": "off"})
    finally:
        os.close(write)
    assert done.returncode == 141, done.stderr
    assert done.stderr == b""


BOX_DRAWING = {chr(c) for c in range(0x2500, 0x25A0)} | {"▲", "×", "…"}


@pytest.mark.parametrize("columns", [40, 60, 80, 120])
@pytest.mark.parametrize("args", COMMANDS, ids=_id)
def test_piped_text_fits_the_columns_without_escapes_or_box_drawing(args, columns):
    result = CliRunner().invoke(cli, args, env={"COLUMNS": str(columns), "NO_COLOR": None, "TUNEADVISE_FORMAT": None})
    assert result.exit_code in (0, 1), result.output
    for line in result.stdout.splitlines():
        # A file:line location stays whole (editors and terminals jump to it), as compilers print it.
        location = re.fullmatch(r"  at \S+", line)
        assert len(line) <= columns or location, f"{len(line)} > {columns}: {line!r}"
        assert "\x1b" not in line and not (set(line) & BOX_DRAWING), line


@pytest.mark.parametrize("columns", ["0", "1", "-5", "39"])
@pytest.mark.parametrize("args", COMMANDS, ids=_id)
def test_a_columns_below_the_narrowest_is_the_narrowest_not_an_empty_or_shredded_answer(args, columns):
    """COLUMNS=0 (a CI runner's) made rich's tables print nothing at all and COLUMNS=1 one
    character a line, while lint's own layout took 40: every renderer takes 40 at least."""
    narrowest = CliRunner().invoke(cli, args, env={"COLUMNS": "40", "NO_COLOR": None, "TUNEADVISE_FORMAT": None})
    result = CliRunner().invoke(cli, args, env={"COLUMNS": columns, "NO_COLOR": None, "TUNEADVISE_FORMAT": None})
    assert result.exit_code == narrowest.exit_code
    assert result.stdout == narrowest.stdout


@pytest.mark.parametrize("columns", [80, 100])
def test_explain_wraps_words_whole_and_commands_that_still_run(columns):
    """Every rule's explanation at 80 and 100 columns: its paragraphs are its own words, broken only
    between them (a hyphen or a flag is never split), and each example command, continued with
    ` \\`, is the command the example runs."""
    from tuneadvise.advisor.rules import registry
    from tuneadvise.advisor.rules.markdown import example_command

    for rule in registry().values():
        result = CliRunner().invoke(cli, ["explain", rule.code], env={"COLUMNS": str(columns)})
        assert result.exit_code == 0, result.output
        blocks = result.stdout.rstrip("\n").split("\n\n")
        for block, text in zip(blocks[1:3], (f"{rule.summary}.", rule.explanation)):
            assert " ".join(block.splitlines()) == text
            assert all(len(line) <= columns or " " not in line for line in block.splitlines()), block
        shown = "\n".join(blocks[4:])
        commands = [line for line in example_command(rule.trigger).splitlines() if line.startswith("tuneadvise ")]
        for command in commands:
            assert command in shown.replace(" \\\n      ", " ").replace("\n  tuneadvise", "\ntuneadvise")


def test_rule_text_is_shown_as_written_not_read_as_markup():
    result = CliRunner().invoke(cli, ["rules", "--select", "TA906"], env={"COLUMNS": "200"})
    assert "No [[kernels]] entry" in result.stdout


def test_the_opt_in_error_names_how_to_opt_in_from_the_command_line():
    result = CliRunner().invoke(cli, ["occupancy", "--arch", "sm_90", "-r", "32", "-b", "128", "--dynamic-shared-mem",
                                      "60K", "--format", "json"])
    message = next(f["message"] for f in __import__("json").loads(result.stdout)["findings"] if f["code"] == "TA106")
    assert "--opt-in" in message and "pass opt_in" not in message


@pytest.mark.parametrize("command", ["probe", "verify", "specs", "roofline", "occupancy", "lint"])
def test_help_never_promises_json_when_piped(command):
    result = CliRunner().invoke(cli, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "json otherwise" not in result.output and "else json" not in result.output


def test_a_kernel_name_is_shown_as_written_not_read_as_markup(tmp_path):
    path = tmp_path / "k.toml"
    names = ["[bold]gemm[/bold]", "stencil[[7]]"]
    path.write_text("".join(f'[[kernels]]\nname = "{n}"\nroofline = {{ intensity = {i}, achieved = "1T" }}\n'
                            for n, i in zip(names, (30, 2))))
    result = CliRunner().invoke(cli, ["roofline", "--arch", "v100-pcie", "--kernels", str(path)], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    for name in names:
        assert f"{name}: at " in result.stdout


@pytest.mark.parametrize("words, expected", [("tuneadvise explain TA90", "TA906"),
                                             ("tuneadvise lint --select TA1", "TA106"),
                                             ("tuneadvise lint --ignore TA101,TA90", "TA101,TA906")])
def test_rule_codes_complete_in_the_shell(words, expected):
    env = {"_TUNEADVISE_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)}
    result = CliRunner().invoke(cli, [], env=env, prog_name="tuneadvise")
    assert f"plain,{expected}" in result.output.splitlines(), result.output


def test_probe_figures_keep_one_line_each_with_the_method_in_notes(monkeypatch, capsys):
    """Piped at 100 columns the method column wrapped each figure into ten lines; the method is a note now."""
    from tuneadvise.cli.common import console
    from tuneadvise.cli.probe_render import render_probe

    from ..probes.test_probes import computed

    monkeypatch.setenv("COLUMNS", "100")
    doc = computed()
    render_probe(console(), doc, None)
    lines = capsys.readouterr().out.splitlines()
    for r in doc["results"]:
        [row] = [line for line in lines if line.startswith(r["name"] + " ")]
        assert row.rstrip().endswith(")"), row  # the note's number ends the row: nothing wrapped below it
        assert any(r["method"][:30] in line for line in lines)


def _command_paths(group=cli, prefix=()):
    """Every command and subcommand, by the names a user types (the group loads them lazily)."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        yield (*prefix, name)
        if isinstance(command, click.Group):
            yield from _command_paths(command, (*prefix, name))


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_the_top_level_help_fits_the_columns(columns):
    """Its exit-code paragraph was kept unwrapped (click's \\b): 77 columns at 60. (click formats help
    at least 50 columns wide, so 40 is not asked.)"""
    done = subprocess.run([sys.executable, "-m", "tuneadvise.cli", "--help"], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": str(columns)}, timeout=60)
    assert done.returncode == 0
    assert max(len(line) for line in done.stdout.splitlines()) <= columns


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("path", list(_command_paths()), ids=" ".join)
def test_every_help_fits_the_columns(path, columns):
    """`tuneadvise CMD --help | less` at 80 columns: examples and exit codes (kept as written, not
    rewrapped) as well as the text click wraps."""
    result = CliRunner().invoke(cli, [*path, "--help"], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    wide = [line for line in result.stdout.splitlines() if len(line) > columns]
    assert not wide, wide


def test_a_problem_line_is_one_line_with_its_control_characters_escaped(tmp_path, monkeypatch):
    """frontier wrote the compiler's rejection as it came: an escape sequence or a line break in a
    file's name or a compiler's message reached the terminal."""
    from tuneadvise.advisor.frontier import FrontierReport
    from tuneadvise.advisor.queries import frontier

    said = "k\x1b[31m.cu: sm_90 at -maxrregcount=32: the compiler failed: a\nb"
    monkeypatch.setattr(frontier, "frontier_query", lambda *_: FrontierReport([], [said], "ptxas"))
    source = tmp_path / "k.cu"
    source.write_text("__global__ void k() {}\n")
    result = CliRunner().invoke(cli, ["frontier", str(source), "--arch", "sm_90", "-b", "256"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["tuneadvise: bad input: k\\x1b[31m.cu: sm_90 at -maxrregcount=32: "
                                          "the compiler failed: a\\nb"]


def test_lint_text_says_one_block_per_sm_in_the_singular():
    """lint's kernel line printed '1 blocks/SM' (occupancy's own text says '1 block/SM')."""
    result = CliRunner().invoke(cli, ["lint", str(LINT / "ptxas_multi.log")], env={"COLUMNS": "200"})
    lines = [line for line in result.stdout.splitlines() if "/SM, occupancy" in line]
    assert any(": 1 block/SM, occupancy" in line for line in lines), lines
    assert not any(" 1 blocks/SM" in line for line in lines)
