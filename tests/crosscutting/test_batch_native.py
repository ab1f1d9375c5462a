"""'native' (this machine's GPU) where nothing measures it: `--arch native` on occupancy without
a GPU names what is missing (exit 3); a batch line, lint's --arch and frontier's --arch, which
take no measured GPU, say that 'native' is not taken there and what to give instead. They
called it an unknown architecture and guessed a product ('did you mean xavier?')."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tuneadvise.cli.main import cli

from ..helpers import ROOT, assert_one_line_error

LOG = str(ROOT / "tests" / "fixtures" / "lint" / "ptxas_sm_90.log")


def _no_gpu(what="--arch native", clusters=False):
    from tuneadvise.probes.gpu import GpuUnavailable

    raise GpuUnavailable(f"{what} needs an NVIDIA GPU and its driver; none on this machine")


def test_arch_native_without_a_gpu_names_what_is_missing(monkeypatch):
    monkeypatch.setattr("tuneadvise.probes.native.native_resolved", _no_gpu)
    result = CliRunner().invoke(cli, ["occupancy", "--arch", "native", "-r", "64", "-b", "256"])
    assert result.exit_code == 3 and "GPU" in result.output, result.output


def test_a_batch_line_naming_native_says_it_is_not_taken_there():
    line = '{"arch": "native", "registers": 64, "block_size": 256}\n'
    result = CliRunner().invoke(cli, ["occupancy", "--batch", "-"], input=line)
    assert result.exit_code == 2
    message = json.loads(result.stdout)["error"]["message"]
    assert "unknown architecture" not in message and "did you mean" not in message, message
    assert "'native' (this machine's GPU) is not taken here" in message


def test_lint_arch_native_says_it_is_not_taken_there():
    result = CliRunner().invoke(cli, ["lint", LOG, "--arch", "native"])
    assert_one_line_error(result, "--arch: 'native' (this machine's GPU) is not taken here", "sm_90")
    assert "did you mean" not in result.output
