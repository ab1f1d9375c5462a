"""The one configuration path: FIELDS -> the generated options -> LaunchConfig.from_mapping.

One parser: numbers and their text parse alike, and a configuration reads back from its mapping;
every FIELDS key is an option of `occupancy` (and the keys `suggest` takes, of
`suggest`), with FIELDS' help; a bad value is one line naming the option."""

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.inputs import InputError
from tuneadvise.advisor.launch import FIELDS, KEYS, LaunchConfig
from tuneadvise.cli.main import cli
from tuneadvise.cli.occupancy_cmd import occupancy
from tuneadvise.cli.options import launch_values
from tuneadvise.cli.suggest_cmd import SUGGEST_KEYS, suggest

from ..helpers import JSON_VALUES, assert_one_line_error

KERNEL_KEYS = sorted(KEYS)


def outcome(function, values):
    try:
        return function(values)
    except InputError as exc:
        return ("InputError", str(exc))


NUMBER_KEYS = sorted(KEYS - {"compiled_for"})  # a target name is text, never a number


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.sampled_from(NUMBER_KEYS), st.integers(0, 1024)))
def test_numbers_and_their_text_parse_alike(values):
    """A batch line's 256 and the command line's "256" reach the same configuration, or the same error."""
    as_text = {key: str(value) for key, value in values.items()}
    number, text = outcome(LaunchConfig.from_mapping, values), outcome(LaunchConfig.from_mapping, as_text)
    if isinstance(number, LaunchConfig) or isinstance(text, LaunchConfig):
        assert number == text
    else:  # the same field refused (the message quotes the value as it was given)
        assert number[1].split(":")[0] == text[1].split(":")[0]


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.sampled_from(KERNEL_KEYS), JSON_VALUES))
def test_a_configuration_reads_back_from_its_mapping(values):
    parsed = outcome(LaunchConfig.from_mapping, values)
    if isinstance(parsed, LaunchConfig):
        assert LaunchConfig.from_mapping(parsed.to_mapping()) == parsed


def _options(command) -> dict:
    return {opt: param for param in command.params for opt in param.opts}


def test_every_field_is_an_occupancy_option_with_the_fields_help():
    options = _options(occupancy)
    for field in FIELDS:
        param = options[field.option]
        assert param.name == field.key
        assert param.help.startswith(field.help)


def test_suggest_takes_the_fields_it_names_and_every_option_has_help():
    options = _options(suggest)
    for key in SUGGEST_KEYS:
        assert options["--" + key.replace("_", "-")].name == key
    assert "--block-size" not in options
    for command in (occupancy, suggest):
        for param in command.params:
            if getattr(param, "hidden", False) or param.name == "help":
                continue
            assert param.help, f"{command.name} {param.opts} has no help"


def test_option_values_go_to_the_parser_as_one_mapping():
    values = launch_values({"registers": "64", "block_size": "16x16", "opt_in": True, "carveout": None,
                            "spill_stores": None, "spill_stores__alias": "12"})
    assert values == {"registers": "64", "block_size": "16x16", "opt_in": True, "spill_stores": "12"}
    config = LaunchConfig.from_mapping(values)
    assert (config.block_dims, config.opt_in, config.spill_stores) == ((16, 16), True, 12)


def run(*args):
    return CliRunner().invoke(cli, list(args))


BASE = ("occupancy", "--arch", "sm_90", "--registers", "32", "--block-size", "256", "--format", "json")


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.key)
def test_a_bad_value_of_every_option_is_one_line_naming_it(field):
    if field.parse.__name__ == "parse_bool":
        pytest.skip("a flag takes no value")
    args = list(BASE)
    if field.option in args:
        args[args.index(field.option) + 1] = "x\ny"
    else:
        args += [field.option, "x\ny"]
    result = run(*args)
    assert_one_line_error(result, f"tuneadvise: error: {field.option}: ")


def test_spill_bytes_is_a_hidden_alias_of_spill_stores():
    import json

    new = json.loads(run(*BASE, "--spill-stores", "64").output)
    old = json.loads(run(*BASE, "--spill-bytes", "64").output)
    assert new == old and any(f["code"].startswith("TA5") for f in new["findings"])
    help_text = run("occupancy", "--help").output
    help_text = " ".join(help_text.split())
    assert "--spill-stores" in help_text and "(--spill-bytes, its old name, is accepted until 0.2.)" in help_text
    assert help_text.count("--spill-bytes") == 1  # hidden: only named in --spill-stores' help
    both = run(*BASE, "--spill-stores", "64", "--spill-bytes", "64")
    assert_one_line_error(both, "--spill-stores: given twice")


def test_spill_loads_and_stack_frame_are_options():
    import json

    result = run(*BASE, "--spill-loads", "32", "--stack-frame", "128")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["launchable"] is True
    assert_one_line_error(run(*BASE, "--spill-loads", "-1"), "--spill-loads: must be from 0")
    assert_one_line_error(run(*BASE, "--stack-frame", "1T"), "--stack-frame: ")


@settings(max_examples=200, deadline=None)
@given(st.permutations([key for key in KEYS if key not in ("registers", "block_size")]))
def test_from_mapping_names_the_first_bad_key_in_fields_order_whatever_the_mapping_order(keys):
    # Every optional key bad at once, inserted in any order: the error names the first in FIELDS.
    values = {"registers": 32, "block_size": 128, **dict.fromkeys(keys, "bad value")}
    first = next(field.key for field in FIELDS if field.key in keys)
    with pytest.raises(InputError) as raised:
        LaunchConfig.from_mapping(values)
    assert raised.value.field == first


GOOD = {"registers": 32, "block_size": 128, "shared_mem": "4K", "dynamic_shared_mem": 0, "carveout": 50,
        "opt_in": True, "barriers": 2, "virtual_resources": 0, "max_threads_per_block": 256, "grid_size": 10,
        "sm_count": 4, "cluster_size": 2, "compiled_for": "sm_70", "spill_stores": 8, "spill_loads": 8, "stack_frame": 16}


@settings(max_examples=300, deadline=None)
@given(st.permutations(sorted(KEYS)), st.data())
def test_from_mapping_names_the_first_missing_or_bad_key_in_fields_order(keys, data):
    # Some keys left out, some bad, in any order: the first required key missing or bad, else the first bad
    # in FIELDS' order.
    assert set(GOOD) == KEYS
    given_keys = [key for key in keys if data.draw(st.booleans())]
    bad = {key for key in given_keys if data.draw(st.booleans())}
    values = {key: ("bad value" if key in bad else GOOD[key]) for key in given_keys}
    required = [field.key for field in FIELDS if field.required and (field.key not in values or field.key in bad)]
    first_bad = [field.key for field in FIELDS if field.key in bad]
    if not required and not first_bad:
        assert LaunchConfig.from_mapping(values).registers == 32
        return
    with pytest.raises(InputError) as raised:
        LaunchConfig.from_mapping(values)
    assert raised.value.field == (required or first_bad)[0]
