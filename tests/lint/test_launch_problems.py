"""A launch in host code whose figures no architecture allows (`k<<<1, 2048>>>`, a block of 33
warps): the problem names that launch's file, line and column, where the user fixes it, not
the kernel's file alone (a source launches a kernel from many places)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tuneadvise.cli.main import cli

from ..readers.test_host_launches import libclang
from ..reference.header import required
from ..toolchain.test_compile_loop import required_toolchain

pytestmark = pytest.mark.reference

SOURCE = """__global__ void scale(float* p, int n) { if (threadIdx.x < n) p[threadIdx.x] *= 2; }
int main() {
  float* p = nullptr;
  scale<<<4, 128>>>(p, 1);
  scale<<<1, 2048>>>(p, 1);
  scale<<<1, 32 * 33>>>(p, 1);
  return 0;
}
"""


def test_a_launch_no_architecture_allows_is_named_at_its_line(tmp_path, monkeypatch):
    required(libclang, "libclang (the [host] extra)")
    required_toolchain()
    (tmp_path / "k.cu").write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUNEADVISE_CACHE_DIR", "off")
    result = CliRunner().invoke(cli, ["lint", "k.cu", "--arch", "sm_90", "--no-sass", "--format", "json"])
    assert result.exit_code == 2, result.output
    doc = json.loads(result.stdout)
    problems = sorted((p["line"], p["message"]) for p in doc["problems"])
    assert [line for line, _ in problems] == [5, 6], problems
    assert "column 3" in problems[0][1] and "got 2048" in problems[0][1]
    assert "got 1056" in problems[1][1]
    assert [k["launch"]["site"]["line"] for k in doc["kernels"]] == [4]  # the launch that is allowed is linted
