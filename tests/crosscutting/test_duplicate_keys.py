"""A value given twice in one user's document: every format refuses it in one line naming the
key, as TOML itself does; none keeps one of the two without a word (JSON and PyYAML readers keep
the last; kebab-case and snake_case spellings of one key were folded into one, the last kept)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tuneadvise.cli.main import cli

from ..helpers import ROOT, assert_one_line_error

LOG = str(ROOT / "tests" / "fixtures" / "lint" / "ptxas_sm_90.log")
# The [[kernels]] keys a config entry takes, with a value each accepts.
KERNEL_VALUES = {"block_size": (256, 128), "dynamic_shared_mem": (1024, 2048), "grid_size": (1000, 2000),
                 "min_blocks_per_sm": (2, 3)}


def run(args, stdin=""):
    return CliRunner().invoke(cli, [str(a) for a in args], input=stdin, env={"NO_COLOR": "1"})


def config_text(suffix: str, key: str, first, second, spelling: str) -> str:
    """A config whose one kernel entry gives `key` twice: the same spelling, or `spelling` second."""
    other = key.replace("_", "-") if spelling == "kebab" else key
    if suffix == ".toml":
        return f'[[kernels]]\nname = "producer_consumer"\n{key} = {first}\n{other} = {second}\n'
    if suffix == ".yaml":
        return f"kernels:\n  - name: producer_consumer\n    {key}: {first}\n    {other}: {second}\n"
    return f'{{"kernels": [{{"name": "producer_consumer", "{key}": {first}, "{other}": {second}}}]}}'


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(suffix=st.sampled_from([".toml", ".json", ".yaml"]), key=st.sampled_from(sorted(KERNEL_VALUES)),
       spelling=st.sampled_from(["same", "kebab"]))
def test_a_config_key_given_twice_is_refused_in_every_format(tmp_path, suffix, key, spelling):
    first, second = KERNEL_VALUES[key]
    path = tmp_path / f"c{suffix}"
    path.write_text(config_text(suffix, key, first, second, spelling), encoding="utf-8")
    result = run(["lint", LOG, "--config", path, "--format", "json"])
    assert_one_line_error(result, str(path))
    if suffix != ".toml" or spelling == "kebab":  # TOML's own words name the line, not the key
        assert key.split("_")[0] in result.output, result.output


def test_a_spec_file_value_given_twice_is_refused(tmp_path):
    shown = run(["specs", "show", "sm_89", "--format", "json"]).stdout
    doubled = shown.replace('"warp_size":', '"warp_size": {"value": 64, "source": "pg-cc#x"}, "warp_size":', 1)
    assert doubled != shown
    path = tmp_path / "gpu.json"
    path.write_text(doubled, encoding="utf-8")
    result = run(["occupancy", "--spec-file", path, "--arch", "sm_89", "-r", "32", "-b", "256"])
    assert_one_line_error(result, "--spec-file", "'warp_size' is given twice")


def test_a_config_without_duplicates_still_reads_each_spelling(tmp_path):
    """The guard refuses only a key given twice: kebab-case alone is read as before."""
    for suffix in (".toml", ".json", ".yaml"):
        path = tmp_path / f"c{suffix}"
        path.write_text(config_text(suffix, "block_size", 128, 128, "same").replace(
            "block_size: 128\n    block_size: 128", "block-size: 128").replace(
            '"block_size": 128, "block_size": 128', '"block-size": 128').replace(
            "block_size = 128\nblock_size = 128", "block-size = 128"), encoding="utf-8")
        result = run(["lint", LOG, "--config", path, "--format", "json"])
        assert result.exit_code in (0, 1), result.output
        sizes = {k["occupancy"]["input"]["block_size"] for k in json.loads(result.stdout)["kernels"]
                 if k["name"] == "producer_consumer"}
        assert sizes == {128}, (suffix, sizes)


def test_a_batch_line_that_gives_a_key_twice_is_a_bad_line():
    line = '{"arch": "sm_90", "registers": 64, "registers": 32, "block_size": 256}\n'
    result = run(["occupancy", "--batch", "-"], stdin=line)
    assert result.exit_code == 2, result.output
    assert "registers" in json.loads(result.stdout)["error"]["message"]
