"""lint FILE.cu checks each kernel at the launches its host code makes: `launch.from` and
`launch.site` in the document, several sites checked apart, a config entry winning (and saying
so where it disagrees), run-time blocks named with their sites in TA906, the occupancy API's
block as the engine's optimizer answers it, and without libclang one sentence and the fallback."""

from __future__ import annotations

import json
import shutil

import jsonschema
import pytest
from click.testing import CliRunner

from tuneadvise.advisor.engine.optimizer import LinearSharedMem, max_potential_block_size
from tuneadvise.advisor.launch import LaunchConfig
from tuneadvise.advisor.lint.schema import LINT_OUTPUT_SCHEMA
from tuneadvise.cli.main import cli
from tuneadvise.specs.resolve import resolve

from ..readers.test_host_launches import FORMS, libclang
from ..reference.header import required
from ..toolchain.test_compile_loop import required_toolchain

pytestmark = pytest.mark.reference


@pytest.fixture(scope="module")
def ready():
    required(libclang, "libclang (the [host] extra)")
    return required_toolchain()


def lint(tmp_path, monkeypatch, *args, source: tuple[str, str] | None = None):
    """`lint FILE --format json` on the forms fixture, or on `source` (name, text), without the cache."""
    name, text = source or ("forms.cu", None)
    if text is None:
        shutil.copy(FORMS, tmp_path / name)
    else:
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUNEADVISE_CACHE_DIR", "off")
    result = CliRunner().invoke(cli, ["lint", name, "--arch", "sm_90", "--no-sass", "--format", "json", *args])
    assert result.exit_code in (0, 1), result.output
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, LINT_OUTPUT_SCHEMA)
    return doc


def line_of(fragment: str) -> int:
    """The fixture's line that holds `fragment` (the launches are found by their text, not by number)."""
    return next(n for n, line in enumerate(FORMS.read_text().splitlines(), 1) if fragment in line)


def by_site(doc) -> dict:
    return {(k["demangled"].split("(")[0], k["launch"]["site"]["line"] if k["launch"]["site"] else None): k
            for k in doc["kernels"]}


def test_each_compile_time_launch_is_checked_at_its_own_block(ready, tmp_path, monkeypatch):
    doc = lint(tmp_path, monkeypatch)
    kernels = by_site(doc)
    assert kernels[("scale", line_of("scale<<<10, THREADS>>>"))]["launch"]["block_dims"] == [128]
    assert kernels[("scale", line_of("scale<<<4, fixed>>>"))]["launch"]["block_dims"] == [96]
    assert kernels[("void tile_sum<16>", line_of("tile_sum<16><<<"))]["launch"]["block_dims"] == [16, 16]
    assert kernels[("void tile_sum<16>", line_of("tile_sum<16><<<"))]["launch"]["dynamic_shared_mem"] == 1024
    assert kernels[("pairs", line_of("cudaLaunchKernelEx(&config"))]["launch"]["cluster_size"] == 2
    assert kernels[("driver_fill", line_of("cuLaunchKernel(fill"))]["launch"]["block_dims"] == [192]
    for kernel in doc["kernels"]:
        assert kernel["launch"]["from"] == "host code"
        site = kernel["launch"]["site"]
        assert site["file"] == "forms.cu" and site["column"] >= 1
        assert kernel["occupancy"]["active_blocks_per_sm"] >= 1
    # scale_all<T> launches scale_any<T>: each instantiation compiled is checked at that launch.
    assert kernels[("void scale_any<float>", line_of("scale_any<T><<<"))]["launch"]["block_dims"] == [128]
    assert kernels[("void scale_any<double>", line_of("scale_any<T><<<"))]["launch"]["block_dims"] == [128]
    # scale is launched at eight sites, one with a run-time block: checked at each of the other seven.
    checked = [line_of(text) for text in ("scale<<<10, THREADS>>>", "scale<<<n / kWide", "scale<<<4, half * 2>>>",
                                          "scale<<<4, fixed>>>", "LAUNCH_SCALE(4096", "cudaLaunchKernel((const void",
                                          "scale<<<(n + block - 1) / block")]
    assert sorted(line for name, line in kernels if name == "scale") == sorted(checked)
    varying = line_of("scale<<<4, varying>>>")
    assert any(f"block size set at run time at forms.cu:{varying}:5" in w for w in doc["summary"]["warnings"])


def test_the_occupancy_apis_block_is_the_optimizers(ready, tmp_path, monkeypatch):
    kernel = by_site(lint(tmp_path, monkeypatch))[("scale", line_of("scale<<<(n + block - 1) / block, block>>>"))]
    assert kernel["launch"]["site"]["block_from"] == "cudaOccupancyMaxPotentialBlockSize"
    config = LaunchConfig.from_mapping({"registers": kernel["registers"], "shared_mem": kernel["shared_mem"],
                                        "block_size": 32})
    choice = max_potential_block_size(resolve("sm_90").arch, config, LinearSharedMem(0, 0), 1)
    assert kernel["launch"]["block_dims"] == [choice.block_size]


def test_a_config_entry_wins_and_says_it_disagrees(ready, tmp_path, monkeypatch):
    (tmp_path / "lint.toml").write_text('[[kernels]]\nname = "cooperative_fill*"\nblock_size = 320\n')
    doc = lint(tmp_path, monkeypatch, "--config", str(tmp_path / "lint.toml"))
    [kernel] = [k for k in doc["kernels"] if k["demangled"].startswith("cooperative_fill")]
    assert kernel["launch"]["block_dims"] == [320] and kernel["launch"]["from"] == "config"
    [finding] = [f for f in kernel["findings"] if f["code"] == "TA905"]
    assert f"config 320, host code 160 at forms.cu:{line_of('cudaLaunchCooperativeKernel(')}:5" in finding["message"]


def test_without_libclang_one_sentence_and_the_assumed_block(ready, tmp_path, monkeypatch):
    from tuneadvise.advisor.readers import host_expressions

    def missing():
        raise host_expressions.HostParserMissing()

    monkeypatch.setattr(host_expressions, "clang", missing)
    doc = lint(tmp_path, monkeypatch)
    assert [w for w in doc["summary"]["warnings"] if "libclang" in w] == [str(host_expressions.HostParserMissing())]
    assert "tuneadvise[host]" in str(host_expressions.HostParserMissing())
    assert {k["launch"]["from"] for k in doc["kernels"]} == {"assumed"}
    assert {tuple(k["launch"]["block_dims"]) for k in doc["kernels"]} == {(256,)}


def test_run_time_blocks_are_named_in_ta906(ready, tmp_path, monkeypatch):
    doc = lint(tmp_path, monkeypatch, source=("runtime.cu", "__global__ void grow(float *x) { x[threadIdx.x] += 1; }\n"
                                                             "void go(float *x, int n) {\n  grow<<<1, n>>>(x);\n}\n"))
    [kernel] = doc["kernels"]
    assert kernel["launch"]["from"] == "assumed" and kernel["launch"]["site"]["run_time"] == ["block size"]
    [ta906] = [f for f in doc["source_findings"] if f["code"] == "TA906"]
    assert "grow(float*): block size set at run time at runtime.cu:3:3" in ta906["message"]


def test_a_launch_through_a_function_pointer_is_named_not_guessed(ready, tmp_path, monkeypatch):
    doc = lint(tmp_path, monkeypatch, source=("pointer.cu", "__global__ void bump(float *x) { x[threadIdx.x] += 1; }\n"
                                                             "void go(void (*kernel)(float *), float *x) {\n"
                                                             "  kernel<<<1, 64>>>(x);\n}\n"))
    [kernel] = doc["kernels"]
    assert kernel["launch"]["from"] == "assumed" and kernel["launch"]["site"] is None
    assert any(w.startswith("launch at pointer.cu:3:3 (<<<>>>): which kernel it launches is not known")
               for w in doc["summary"]["warnings"])


def test_launches_are_served_from_the_report_cache(ready, tmp_path, monkeypatch):
    source = tmp_path / "cached.cu"
    source.write_text("__global__ void bump(float *x) { x[threadIdx.x] += 1; }\n"
                      "void go(float *x) {\n  bump<<<2, 96>>>(x);\n}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUNEADVISE_CACHE_DIR", str(tmp_path / "cache"))

    def blocks():
        result = CliRunner().invoke(cli, ["lint", "cached.cu", "--arch", "sm_90", "--no-sass", "--format", "json"])
        return [(k["launch"]["from"], k["launch"]["block_dims"]) for k in json.loads(result.stdout)["kernels"]]

    assert blocks() == [("host code", [96])]

    def never(*args):
        raise AssertionError("the host half ran again for an unchanged source")

    monkeypatch.setattr("tuneadvise.advisor.toolchain.compile.compile_host", never)
    assert blocks() == [("host code", [96])]
