"""A source that includes the CUDA libraries' headers (cuBLAS, cuBLASLt, cuRAND's device API,
cuFFT, cuSPARSE) compiles in lint's loop under the [cuda-libs] extra, and its kernel is checked
at the launch its host code makes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tuneadvise.cli.main import cli

from ..readers.test_host_launches import libclang
from ..reference.header import Unavailable, required
from .test_compile_loop import required_toolchain

pytestmark = pytest.mark.reference

SOURCE = Path(__file__).resolve().parents[1] / "fixtures" / "sources" / "launches" / "library_headers.cu"
HEADERS = ("cublas_v2.h", "cublasLt.h", "curand_kernel.h", "cufft.h", "cusparse.h")


def library_headers():
    """The toolchain, where the [cuda-libs] extra's headers are beside its own."""
    chain = required_toolchain()
    include = Path(chain.root) / "include"
    missing = [name for name in HEADERS if not (include / name).is_file()]
    if missing:
        raise Unavailable(f"{', '.join(missing)} not in {include} (the [cuda-libs] extra)")
    return chain


def test_a_source_including_the_libraries_compiles_and_is_checked_at_its_launch(tmp_path, monkeypatch):
    required(library_headers, "the CUDA libraries' headers (the [cuda-libs] extra)")
    required(libclang, "libclang (the [host] extra)")
    shutil.copy(SOURCE, tmp_path / "libs.cu")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUNEADVISE_CACHE_DIR", "off")
    result = CliRunner().invoke(cli, ["lint", "libs.cu", "--arch", "sm_90", "--no-sass", "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    doc = json.loads(result.stdout)
    assert doc["problems"] == []
    [kernel] = doc["kernels"]
    assert kernel["name"] == "_Z4drawP17curandStateXORWOWPfy"
    assert kernel["launch"]["block_dims"] == [128] and kernel["launch"]["from"] == "host code"
    assert kernel["launch"]["site"]["line"] == 18 and kernel["launch"]["site"]["run_time"] == ["grid"]
