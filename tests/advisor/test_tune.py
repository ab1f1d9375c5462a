"""`tune` without a GPU: the candidates it would time (each built by ptxas, each with its verdict),
the document it makes of measured times, and exit 3 naming what is missing."""

from __future__ import annotations

import os
import sys

import pytest
from click.testing import CliRunner

from tuneadvise.advisor.advice.verdict import Evidence, combine
from tuneadvise.advisor.tune import CAP_PARAM, Candidate, agrees, document, measured_outcome
from tuneadvise.cli.main import cli

from ..helpers import ROOT
from ..toolchain.test_compile_loop import required_toolchain

TILED = ROOT / "tests" / "fixtures" / "sources" / "tiled_kernels.cu"


def _candidate(label, outcome_says=None):
    evidence = [Evidence("x", {}, outcome_says, "why")] if outcome_says else []
    return Candidate(256, None, None, 4, 0.5, combine(evidence), label)


def test_the_document_puts_each_verdict_beside_its_time_and_names_the_disagreements():
    candidates = [_candidate("as built"), _candidate("gain", "gain"), _candidate("loss", "loss"),
                  _candidate("unknown"), _candidate("gain 2", "gain")]
    times = [[1.0, 1.0, 1.0], [0.8], [0.7], [1.5], [1.01]]
    doc = document("k", "sm_90", "kernel_tuner", "GPU", candidates, times)
    rows = doc["candidates"]
    assert [r["measured"] for r in rows] == ["baseline", "faster", "faster", "slower", "equal"]
    assert [r["agrees"] for r in rows] == [None, True, False, None, False]
    assert doc["best"] == 2 and doc["disagreements"] == [2, 4] and doc["predictions"] == 3
    assert rows[1]["verdict"]["outcome"] == "likely_gain"


def test_an_untimed_candidate_is_said_so():
    doc = document("k", "sm_90", "kernel_tuner", "GPU", [_candidate("as built"), _candidate("b")], [[1.0], None])
    assert doc["candidates"][1]["time_ms"] is None and doc["candidates"][1]["agrees"] is None and doc["best"] == 0


@pytest.mark.parametrize("ratio, outcome", [(0.97, "faster"), (0.99, "equal"), (1.01, "equal"), (1.03, "slower")])
def test_the_noise_band(ratio, outcome):
    assert measured_outcome(ratio, 1.0, 0.02) == outcome


def test_agreement():
    assert agrees("likely_loss", "equal") and not agrees("likely_loss", "faster") and agrees("unknown", "x") is None


@pytest.fixture
def toolchain(monkeypatch):
    from pathlib import Path

    chain = required_toolchain()
    monkeypatch.setenv("CUDA_HOME", str(Path(chain.nvcc).parent.parent))
    monkeypatch.setattr("tuneadvise.advisor.toolchain.discovery.wheel_bins", lambda: iter(()))
    return chain


def test_the_candidates_are_each_cap_at_a_cliff_and_each_block_size_where_occupancy_changes(toolchain):
    from tuneadvise.advisor.frontier import frontier
    from tuneadvise.advisor.tune import cu_candidates
    from tuneadvise.specs.resolve import resolve_arch

    arch = resolve_arch("sm_90")
    report = frontier(str(TILED), ["sm_90"], 256, "*sgemm_tile*Li4ELi8*")
    candidates = cu_candidates(report, arch, 132, 2048)
    labels = [c.label for c in candidates]
    assert labels[0] == "as built" and candidates[0].verdict.outcome == "unknown"
    caps = [c for c in candidates if c.min_blocks]
    points = {p.max_registers: p for p in report.kernels[0].points[1:]}
    assert [c.register_cap for c in caps] == [cap for cap in points if cap is not None]
    for c in caps:  # a cap ptxas had to spill for is a likely loss; one it met cleanly is not
        spilled = (points[c.register_cap].spill_stores or 0) > 8
        assert (c.verdict.outcome == "likely_loss") is spilled, (c.label, c.verdict)
        assert c.label == f"__launch_bounds__(256, {c.min_blocks})"
    assert any(c.label.startswith("block ") for c in candidates)
    assert len({round(c.occupancy, 6) for c in candidates if c.label.startswith("block ")}) == \
        len([c for c in candidates if c.label.startswith("block ")])


def test_the_source_kernel_tuner_compiles_carries_the_cap(tmp_path):
    from tuneadvise.advisor.tune import source_with_cap

    text = "// k\n__global__ void k(float* x) { x[0] = 1; }\n"
    source = source_with_cap(text, 2)
    assert source({"block_size_x": 128, CAP_PARAM: 0}) == text
    assert "__global__ __launch_bounds__(128, 6) void k" in source({"block_size_x": 128, CAP_PARAM: 6})


def test_without_a_gpu_or_kernel_tuner_tune_exits_3_naming_what_is_missing(toolchain, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # as on a machine without CuPy or cuda-python
    monkeypatch.setitem(sys.modules, "cuda", None)
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    args = tmp_path / "args.py"
    args.write_text("import numpy as np\nproblem_size = 1024\narguments = [np.zeros(1024, np.float32)]\n")
    result = CliRunner().invoke(cli, ["tune", str(TILED), "--kernel", "complex_mac16", "--args", str(args),
                                      "--arch", "sm_90"])
    assert result.exit_code == 3, result.output
    assert "tune needs" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_cu_kernel_without_its_arguments_file_is_bad_input():
    result = CliRunner().invoke(cli, ["tune", str(TILED), "--arch", "sm_90"])
    assert result.exit_code == 2 and "--args" in result.output


@pytest.mark.parametrize("make", ["huge", "fifo"])
def test_the_source_kernel_tuner_compiles_is_read_once_bounded_before_anything_is_built(tmp_path, monkeypatch, make):
    from tuneadvise.advisor import frontier, tune
    from tuneadvise.specs.files import MAX_SOURCE_BYTES

    def never(*_):
        raise AssertionError("the source was compiled before it was read")

    monkeypatch.setattr(tune, "kernel_tuner_ready", lambda: (None, "cupy", "a GPU"))
    monkeypatch.setattr(frontier, "frontier", never)
    source = tmp_path / "k.cu"
    if make == "huge":
        with open(source, "wb") as handle:
            handle.truncate(MAX_SOURCE_BYTES + 1)
    else:
        os.mkfifo(source)
    args = tmp_path / "args.py"
    args.write_text("problem_size = 1\narguments = []\n")
    result = CliRunner().invoke(cli, ["tune", str(source), "--args", str(args), "--arch", "sm_90"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"tuneadvise: error: FILE: cannot read {source}: ")
    assert ("larger than 32 MiB" if make == "huge" else "not a regular file") in result.output
    assert len(result.output.strip().splitlines()) == 1


def _fake_cuda_bindings(monkeypatch, runtime=None):
    """`cuda.bindings` as importable (its spec), with `runtime` standing for the real bindings' module."""
    import importlib.machinery
    import types

    package = types.ModuleType("cuda")
    package.__path__ = []
    bindings = types.ModuleType("cuda.bindings")
    bindings.__spec__ = importlib.machinery.ModuleSpec("cuda.bindings", None, is_package=True)
    bindings.runtime = runtime
    package.bindings = bindings
    monkeypatch.setitem(sys.modules, "cuda", package)
    monkeypatch.setitem(sys.modules, "cuda.bindings", bindings)


def test_the_backend_is_cuda_python_where_its_bindings_are_installed_else_cupy(monkeypatch):
    from tuneadvise.advisor.tune import kernel_tuner_backend

    monkeypatch.setitem(sys.modules, "cuda", None)
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    assert kernel_tuner_backend() == "cupy"
    _fake_cuda_bindings(monkeypatch)
    assert kernel_tuner_backend() == "nvcuda"


def test_with_cuda_python_and_no_usable_driver_tune_exits_3_in_one_line(toolchain, tmp_path, monkeypatch):
    import enum
    import types

    class Error(enum.Enum):
        cudaSuccess = 0
        cudaErrorInsufficientDriver = 35

    runtime = types.SimpleNamespace(cudaError_t=Error,
                                    cudaGetDeviceCount=lambda: (Error.cudaErrorInsufficientDriver, None))
    _fake_cuda_bindings(monkeypatch, runtime)
    args = tmp_path / "args.py"
    args.write_text("import numpy as np\nproblem_size = 1024\narguments = [np.zeros(1024, np.float32)]\n")
    result = CliRunner().invoke(cli, ["tune", str(TILED), "--kernel", "complex_mac16", "--args", str(args),
                                      "--arch", "sm_90"])
    assert result.exit_code == 3, result.output
    assert "cudaErrorInsufficientDriver" in result.output and len(result.output.strip().splitlines()) == 1


def test_kernel_tuner_is_asked_for_the_chosen_backend_and_its_failure_is_one_line():
    from tuneadvise.advisor.tune import TuneRunFailed, run_kernel_tuner

    seen = {}

    def tune_kernel(*args, **options):
        seen.update(options)
        raise TypeError("bytes is not a 16-char string")

    given = {"problem_size": 1024, "arguments": []}
    with pytest.raises(TuneRunFailed, match="^Kernel Tuner failed: TypeError: bytes is not a 16-char string$"):
        run_kernel_tuner(tune_kernel, "nvcuda", "__global__ void k() {}\n", 1, "k", [_candidate("as built")],
                         given, 3)
    assert seen["lang"] == "nvcuda" and seen["iterations"] == 3


def test_the_cuda_python_bindings_keep_all_16_bytes_of_a_uuid():
    # Kernel Tuner's nvcuda backend builds uuid.UUID(bytes=...) from this field: it must never come
    # back cut short at a zero byte, as the CuPy backend's did (an empty field is all zeros).
    runtime = pytest.importorskip("cuda.bindings.runtime")
    assert len(runtime.cudaDeviceProp().uuid.bytes) == 16


@pytest.mark.parametrize("option, said", [("args", "--args: "), (None, "FILE: ")])
def test_a_file_that_raises_is_bad_input_named_as_the_command_line_names_it(tmp_path, option, said):
    """The --args file, or a Triton FILE argument, that raises: one line naming the option as typed
    (an option spelled with its dashes once printed as '----args')."""
    from tuneadvise.advisor.tune import arguments_file
    from tuneadvise.specs.errors import InputError

    broken = tmp_path / "broken.py"
    broken.write_text("1 / 0\n")
    with pytest.raises(InputError) as raised:
        arguments_file(str(broken), option)
    assert raised.value.as_option().startswith(said + f"{broken} raised ZeroDivisionError")
