"""Nsight Compute exports as files arrive from other tools: a byte-order mark (Excel, PowerShell's
Out-File), CRLF line ends, the header alone, ncu's preamble cut off. Each is read as ncu wrote
it, or refused in one line; none is a different set of launches."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tuneadvise.cli.main import cli

from ..advisor.ncu_fixtures import launches, text

BOM = "\ufeff"


def from_header(export: str) -> str:
    """The export without ncu's ==PROF== preamble: its header row first, as a tool re-saving it writes."""
    return export[export.index('"ID","Process ID"'):]


def lint(tmp_path, body: str):
    path = tmp_path / "export.csv"
    path.write_bytes(body.encode("utf-8"))
    return CliRunner().invoke(cli, ["lint", str(path), "--format", "json"])


@pytest.mark.parametrize("shape", [
    "as_written", "crlf", "bom_before_preamble", "header_first",
    "bom_before_header",
])
def test_each_shape_of_an_export_reads_the_launches_ncu_wrote(tmp_path, shape):
    export = text("ncu_tails")
    body = {"as_written": export, "crlf": export.replace("\n", "\r\n"), "bom_before_preamble": BOM + export,
            "header_first": from_header(export), "bom_before_header": BOM + from_header(export)}[shape]
    result = lint(tmp_path, body)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert sorted(k["measured"]["launch_index"] for k in doc["kernels"]) == \
        sorted(launch.launch_id for launch in launches("ncu_tails"))


def test_the_header_alone_is_one_line_of_bad_input(tmp_path):
    """lint's document still goes to stdout (with the problem in it); stderr says it in one line."""
    header = from_header(text("ncu_tails")).splitlines()[0]
    result = lint(tmp_path, header + "\n")
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1 and "no profiled launch" in result.stderr, result.stderr
