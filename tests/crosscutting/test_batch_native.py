"""`--arch native` and a batch line's "arch": "native" on a machine without a GPU: the command
line says what is missing (exit 3); a batch line should say the same of its line, not call
'native' an unknown name with a guess at a product."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tuneadvise.cli.main import cli


def test_arch_native_without_a_gpu_names_what_is_missing(monkeypatch):
    monkeypatch.setattr("tuneadvise.probes.native.native_resolved", _no_gpu)
    result = CliRunner().invoke(cli, ["occupancy", "--arch", "native", "-r", "64", "-b", "256"])
    assert result.exit_code == 3 and "GPU" in result.output, result.output


@pytest.mark.xfail(strict=True, reason="advisor/batch.py resolves a line's arch without the native hook "
                   "(specs/resolve.py's `native`): 'native' is 'unknown architecture ...; did you mean xavier?'")
def test_a_batch_line_naming_native_says_it_needs_a_gpu_not_an_unknown_name(monkeypatch):
    monkeypatch.setattr("tuneadvise.probes.native.native_resolved", _no_gpu)
    line = '{"arch": "native", "registers": 64, "block_size": 256}\n'
    result = CliRunner().invoke(cli, ["occupancy", "--batch", "-"], input=line)
    message = json.loads(result.stdout)["error"]["message"]
    assert "unknown architecture" not in message and "did you mean" not in message, message


def _no_gpu(what="--arch native", clusters=False):
    from tuneadvise.probes.gpu import GpuUnavailable

    raise GpuUnavailable(f"{what} needs an NVIDIA GPU and its driver; none on this machine")
