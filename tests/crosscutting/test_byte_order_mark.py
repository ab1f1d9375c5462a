"""A user's document saved with a UTF-8 byte-order mark (Notepad, PowerShell's Out-File): read as
without it, in every format a document comes in. A TOML config with one was 'Invalid statement
(at line 1, column 1)' and a JSON config 'Unexpected UTF-8 BOM (decode using utf-8-sig)', while a
JSON spec file and a baseline were read."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tuneadvise.cli.main import cli

from ..helpers import ROOT

LOG = ROOT / "tests" / "fixtures" / "lint" / "ptxas_sm_90.log"
CONFIGS = {".toml": '[[kernels]]\nname = "producer_consumer"\nblock_size = 128\n',
           ".json": '{"kernels": [{"name": "producer_consumer", "block_size": 128}]}',
           ".yaml": "kernels:\n  - name: producer_consumer\n    block_size: 128\n"}


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.mark.parametrize("suffix", sorted(CONFIGS))
def test_a_config_with_a_byte_order_mark_is_read_as_without(tmp_path, suffix):
    path = tmp_path / f"c{suffix}"
    path.write_text(CONFIGS[suffix], encoding="utf-8-sig")
    result = run("lint", LOG, "--config", path, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    sizes = {k["occupancy"]["input"]["block_size"] for k in json.loads(result.stdout)["kernels"]
             if k["name"] == "producer_consumer"}
    assert sizes == {128}


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_a_spec_file_with_a_byte_order_mark_is_read_as_without(tmp_path, suffix):
    if suffix == ".json":
        text = run("specs", "show", "sm_89", "--format", "json").stdout
    else:
        text = (ROOT / "specs" / "data" / "ada.toml").read_text(encoding="utf-8")
    path = tmp_path / f"gpu{suffix}"
    path.write_text(text, encoding="utf-8-sig")
    plain = run("occupancy", "--arch", "sm_89", "-r", "32", "-b", "256", "--format", "json")
    marked = run("occupancy", "--spec-file", path, "--arch", "sm_89", "-r", "32", "-b", "256", "--format", "json")
    assert marked.exit_code == 0, marked.output
    assert json.loads(marked.stdout)["active_blocks_per_sm"] == json.loads(plain.stdout)["active_blocks_per_sm"]


def test_a_compile_database_with_a_byte_order_mark_is_read_as_without(tmp_path):
    path = tmp_path / "compile_commands.json"
    path.write_text(json.dumps([{"directory": str(tmp_path), "file": "missing.cu", "command": "nvcc -c missing.cu"}]),
                    encoding="utf-8-sig")
    result = run("lint", "--compile-commands", path, "--arch", "sm_90", "--format", "json")
    assert "BOM" not in result.output and "not JSON" not in result.output, result.output
    assert "missing.cu: cannot read" in result.output, result.output  # its entry was read, and its file looked for
