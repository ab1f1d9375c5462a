"""The options every command shares are converted in one place (cli/params.py): a value one
command refuses, every command refuses, with the same line naming the option; a value one
accepts, every one accepts. The library's own parsers (advisor/inputs.py, the rule registry,
the catalog) are the outside truth of what is allowed."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.inputs import parse_block
from tuneadvise.advisor.rules import RuleSelection
from tuneadvise.cli.main import cli
from tuneadvise.specs.errors import InputError
from tuneadvise.specs.resolve import resolve

from ..helpers import ROOT

LOG = str(ROOT / "tests" / "fixtures" / "lint" / "ptxas_multi.log")
NEXT = str(ROOT / "tests" / "fixtures" / "lint" / "ptxas_multi_next.log")
SOURCE = str(ROOT / "tests" / "fixtures" / "sources" / "local_array.cu")

# Commands that take each shared option, completed so that the option is all that can be wrong.
BLOCK_SIZE = {
    "occupancy": ["occupancy", "--arch", "sm_90", "--registers", "32", "--format", "json"],
    "lint": ["lint", LOG, "--format", "json"],
    "diff": ["diff", LOG, NEXT, "--format", "json"],
}
SELECT = {
    "occupancy": ["occupancy", "--arch", "sm_90", "--registers", "32", "--block-size", "256", "--format", "json"],
    "rules": ["rules", "--format", "json"],
    "lint": ["lint", LOG, "--format", "json"],
    "check-source": ["check-source", SOURCE, "--target", "sm_90", "--format", "json"],
}
ARCH = {
    "lint": ["lint", LOG, "--format", "json"],
    "diff": ["diff", LOG, NEXT, "--format", "json"],
}


def invoke(args):
    return CliRunner().invoke(cli, args)


def error_lines(commands: dict, option: str, value: str) -> dict[str, tuple[int, str]]:
    """Each command's exit code, and its error line where it refused the value."""
    outcome = {}
    for name, args in commands.items():
        result = invoke([*args, option, value])
        outcome[name] = (result.exit_code, result.output.splitlines()[0] if result.exit_code == 2 else "")
    return outcome


def refuses(parse, value) -> bool:
    try:
        parse(value)
    except (InputError, ValueError):
        return True
    return False


texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=10)


@settings(max_examples=25, deadline=None)
@given(st.one_of(texts, st.from_regex(r"\A[0-9]{1,4}(x[0-9]{1,3}){0,3}\Z")))
@example("0")
@example("16x0")
@example("2048")
@example("16x16")
def test_block_size_is_refused_alike_by_every_command(value):
    outcome = error_lines(BLOCK_SIZE, "--block-size", value)
    if refuses(parse_block, value):
        assert {line for _, line in outcome.values()} == {outcome["occupancy"][1]}, outcome
        assert all(code == 2 for code, _ in outcome.values()) and outcome["lint"][1].startswith(
            "tuneadvise: error: --block-size: ")
    else:
        assert all(code in (0, 1) for code, _ in outcome.values()), outcome


@settings(max_examples=20, deadline=None)
@given(st.one_of(texts, st.sampled_from(["TA3", "ta301", "TA3,TA5", "TA999", "XX", "TA3,,XX"])))
def test_rule_codes_are_refused_alike_by_every_command(value):
    outcome = error_lines(SELECT, "--select", value)
    if refuses(lambda text: RuleSelection.parse(text, None), value):
        assert all(code == 2 for code, _ in outcome.values()), outcome
        assert {line for _, line in outcome.values()} == {outcome["rules"][1]}
        assert outcome["rules"][1].startswith("tuneadvise: error: --select: ")
    else:
        assert all(code in (0, 1) for code, _ in outcome.values()), outcome


@pytest.mark.parametrize("value", ["sm_99", "nope", "hopperx", "x" * 50, "", "9.9"])
def test_unknown_architectures_are_refused_alike(value):
    with pytest.raises(InputError):
        resolve(value)
    outcome = error_lines(ARCH, "--arch", value)
    assert all(code == 2 for code, _ in outcome.values()), outcome
    assert len({line for _, line in outcome.values()}) == 1 and outcome["lint"][1].startswith("tuneadvise: error: --arch: ")


def test_a_target_names_its_option():
    result = invoke(["check-source", SOURCE, "--target", "sm_80,sm_99"])
    assert result.exit_code == 2
    assert result.output.startswith("tuneadvise: error: --target: unknown architecture 'sm_99'")


def test_a_query_refusing_its_input_is_a_usage_error_naming_the_file(tmp_path):
    """An InputError raised inside a query (a config's reader) ends the command as bad input, one line."""
    config = tmp_path / "tuneadvise.toml"
    config.write_text("fail_on = 'sometimes'\n")
    result = invoke(["lint", LOG, "--config", str(config)])
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert result.output.startswith(f"tuneadvise: error: {config}")


def _path_parameters():
    """(command path, parameter) for every file parameter of every command and subcommand, read
    from the commands themselves: an option added tomorrow is covered."""
    import click

    from tuneadvise.cli.params import FilePath

    def walk(group, path):
        context = click.Context(group)
        for name in group.list_commands(context):
            command = group.get_command(context, name)
            if isinstance(command, click.Group):
                yield from walk(command, (*path, name))
                continue
            for param in command.params:
                if isinstance(param.type, click.Path):
                    assert isinstance(param.type, FilePath), f"{' '.join((*path, name))} {param.name}: use FilePath"
                    yield (*path, name), param
    return list(walk(cli, ()))


@pytest.mark.parametrize("path, param", _path_parameters(),
                         ids=lambda v: " ".join(v) if isinstance(v, tuple) else getattr(v, "name", ""))
def test_an_empty_path_is_refused_naming_its_parameter(path, param):
    """`--config "$CONFIG"` with the variable unset: exit 2 naming the option, never a run that
    quietly goes without the file (no plot written, no baseline applied, no config read)."""
    import click

    is_argument = isinstance(param, click.Argument)
    command = cli
    for name in path:
        command = command.get_command(click.Context(command), name)
    before = [LOG for p in command.params[:command.params.index(param)] if isinstance(p, click.Argument)]
    given = [*before, ""] if is_argument else [f"{max(param.opts, key=len)}="]
    result = CliRunner().invoke(cli, [*path, *given])
    name = param.human_readable_name if is_argument else max(param.opts, key=len)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"tuneadvise: error: {name}: an empty path names no file"]


# Every Unicode decimal digit but 0-9: Python's int() and float() read them as numbers.
OTHER_DIGITS = [chr(c) for c in range(0x80, 0x10000) if chr(c).isdecimal()]
NUMBER_OPTIONS = [
    (["occupancy", "--arch", "sm_90", "--registers", "32", "--block-size"], "--block-size", "{}4"),
    (["occupancy", "--arch", "sm_90", "--block-size", "64", "--registers"], "--registers", "3{}"),
    (["occupancy", "--arch", "sm_90", "--block-size", "64", "--registers", "32", "--shared-mem"], "--shared-mem",
     "{}K"),
    (["lint", LOG, "--min-occupancy"], "--min-occupancy", "0.{}"),
    (["lint", LOG, "--sm-count"], "--sm-count", "1{}"),
    (["lint", LOG, "--jobs"], "--jobs", "{}"),
    (["tune", SOURCE, "--arch", "sm_90", "--iterations"], "--iterations", "{}"),
    (["occupancy", "--arch", "sm_90", "--registers", "32", "--block-size", "64", "--bytes-in-flight"],
     "--bytes-in-flight", "6{}"),
]


@settings(max_examples=40, deadline=None)
@given(digit=st.sampled_from(OTHER_DIGITS), case=st.sampled_from(NUMBER_OPTIONS))
@example(digit="\uff14", case=NUMBER_OPTIONS[0])  # full-width 4
def test_digits_other_than_0_to_9_are_refused_with_the_allowed_form(digit, case):
    """`-b ４０` launched 40 threads: int() reads every Unicode digit; C and CUDA read 0-9."""
    args, option, value = case
    result = invoke([*args, value.format(digit)])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"tuneadvise: error: {option}: expected ")
    assert "(digits 0-9)" in result.output or "such as 12288 or 12K" in result.output


def test_an_architecture_named_with_other_digits_is_unknown():
    result = invoke(["occupancy", "--arch", "sm_\uff19\uff10", "-b", "64", "-r", "32"])
    assert result.exit_code == 2 and "unknown architecture" in result.output


def test_a_block_shape_refused_in_part_quotes_what_was_given():
    """`-b 0x40` is 0 by 40: the error said `got 0`, which no one typed."""
    result = invoke(["occupancy", "--arch", "sm_90", "-r", "32", "-b", "0x40"])
    assert result.exit_code == 2
    assert result.output.strip() == "tuneadvise: error: --block-size: must be from 1 to 1024, got 0 in '0x40' " \
                                    "(dimensions such as 16x16)"


@pytest.mark.parametrize("value", ["32x", ",32", "16x16x", "x"])
def test_a_block_with_a_dimension_missing_is_refused_not_read_short(value):
    # '32x' was read as a block of 32: a dimension the user began and did not finish.
    with pytest.raises(InputError, match="expected 1 to 3 dimensions"):
        parse_block(value)


@pytest.mark.parametrize("value, dims", [("16 x 16", (16, 16)), (" 256 ", (256,)), ("32,8,2", (32, 8, 2)),
                                         ("8*8", (8, 8))])
def test_a_block_written_with_any_separator_is_read(value, dims):
    assert parse_block(value) == dims


def test_a_number_past_a_floats_range_is_out_of_range_not_an_error():
    from tuneadvise.advisor.inputs import parse_float

    with pytest.raises(InputError, match="must be from 0 to 10"):
        parse_float(10**400, "bytes_in_flight", 0, 10)
