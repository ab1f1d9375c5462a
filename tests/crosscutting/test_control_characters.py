"""A kernel name that carries terminal control characters (ESC, BEL: a build's output is outside
text) reaches no output raw, in any of lint's formats: each writes them escaped, as its syntax
allows, so `lint ... --format F` on a terminal cannot be made to recolour, retitle or hide text."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tuneadvise.cli.main import cli

EVIL = "evil\x1b]0;owned\x07\x1b[31mRED\x1b[0m\x08\x0b\x7f"
LOG = (f"ptxas info    : Compiling entry function '{EVIL}' for 'sm_90'\n"
       f"ptxas info    : Function properties for {EVIL}\n"
       "    0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
       "ptxas info    : Used 255 registers, used 1 barriers, 60000 bytes smem\n")
# Line ends and tabs are the formats' own; any other C0 control written raw is the name's (a terminal acts on them).
RAW = {chr(c) for c in range(0x20)} - {"\n", "\t"}
FORMATS = ["table", "json", "sarif", "github", "junit", "markdown", "csv"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_format_writes_a_names_control_characters_raw(tmp_path, fmt):
    path = tmp_path / "evil.log"
    path.write_text(LOG, encoding="utf-8")
    result = CliRunner().invoke(cli, ["lint", str(path), "--format", fmt], env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code in (0, 1), result.output
    assert "evil" in result.stdout
    raw = sorted({hex(ord(c)) for c in result.stdout if c in RAW})
    assert not raw, raw
