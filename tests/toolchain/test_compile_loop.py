"""Compile in the loop: `lint FILE.cu`, `--compile-commands` and `frontier` against NVIDIA's
compiler run directly (its `-Xptxas -v` report, read by tests/reference/nvcc.py and not by
tuneadvise), over the project's test kernels and a ten-kernel realistic source, for sm_80
and sm_90. Needs the `[nvcc]` toolchain (see tests/reference/nvcc.py for when it skips)."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from tuneadvise.cli.main import cli

from ..helpers import ROOT
from ..reference import nvcc
from ..reference.header import required

pytestmark = pytest.mark.reference

LINT_KERNELS = ROOT / "tests" / "gpu" / "lint_kernels.cu"
PRESSURE = ROOT / "tests" / "gpu" / "occupancy_kernels.cu"
REALISTIC = ROOT / "tests" / "fixtures" / "sources" / "tiled_kernels.cu"
LIBRARY = ROOT / "tests" / "fixtures" / "sources" / "library_kernels.cu"
ARCHS = ("sm_80", "sm_90")
FIGURES = ("registers", "shared_mem", "spill_stores", "spill_loads", "stack_frame")


def required_toolchain():
    """The toolchain; else a skip saying it could not be installed, or a failure in CI."""
    return required(nvcc.toolchain, "NVIDIA's compiler (the [nvcc] extra)")


@pytest.fixture(scope="module")
def chain():
    return required_toolchain()


@pytest.fixture
def use(chain, monkeypatch):
    """Point discovery at the test's toolchain (found where tuneadvise looks, or in the test cache)."""
    monkeypatch.setenv("CUDA_HOME", str(Path(chain.nvcc).parent.parent))
    monkeypatch.setattr("tuneadvise.advisor.toolchain.discovery.wheel_bins", lambda: iter(()))
    return chain


_FIXTURE_TRUTH: dict[tuple, dict] = {}


def fixture_truth(chain, source: Path, arch: str, *flags: str) -> dict[str, dict]:
    """nvcc's report for one of the repository's own sources (which no test changes), compiled once per run."""
    key = (source, arch, flags)
    if key not in _FIXTURE_TRUTH:
        _FIXTURE_TRUTH[key] = nvcc.ptxas_report(chain, source, arch, *flags)
    return _FIXTURE_TRUTH[key]


def fixture_truths(chain, source: Path, requests) -> list[dict[str, dict]]:
    """fixture_truth for several (arch, flags) at once, two compilers at a time."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda request: fixture_truth(chain, source, request[0], *request[1]), requests))


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def linted(output: str) -> dict[tuple[str, str], dict]:
    return {(k["name"], k["arch"]): {f: k[f] for f in FIGURES} for k in json.loads(output)["kernels"]}


@pytest.mark.parametrize("source", [LINT_KERNELS, REALISTIC, LIBRARY], ids=lambda p: p.name)
def test_lint_source_reports_exactly_what_ptxas_reports(use, source):
    result = run("lint", source, "--arch", ARCHS[0], "--arch", ARCHS[1], "--format", "json", "--fail-on", "error")
    assert result.exit_code in (0, 1), result.output
    reports = fixture_truths(use, source, [(arch, ()) for arch in ARCHS])
    truth = {(name, arch): figures for arch, report in zip(ARCHS, reports) for name, figures in report.items()}
    assert len(truth) >= 12
    assert linted(result.stdout) == truth


def test_defines_and_flags_reach_the_compiler(use):
    flags = ("-DSTATIC_BYTES=4096", "-DNAMED_BARRIERS=3", "-maxrregcount=40")
    result = run("lint", PRESSURE, "-a", "sm_90", "-D", "STATIC_BYTES=4096", "-D", "NAMED_BARRIERS=3",
                 "--nvcc-flag=-maxrregcount=40", "--format", "json", "--fail-on", "error")
    truth = {(n, "sm_90"): f for n, f in nvcc.ptxas_report(use, PRESSURE, "sm_90", *flags).items()}
    assert linted(result.stdout) == truth
    assert truth[("pressure", "sm_90")]["shared_mem"] == 4096 and truth[("pressure", "sm_90")]["registers"] == 40


def test_compile_commands_recompiles_each_entry_with_its_own_flags(use, tmp_path):
    include = tmp_path / "include"
    include.mkdir()
    (include / "sizes.h").write_text("#define STATIC_BYTES 2048\n")
    source = tmp_path / "src" / "pressure.cu"
    source.parent.mkdir()
    source.write_text('#include "sizes.h"\n' + PRESSURE.read_text())
    build = tmp_path / "build"
    build.mkdir()
    command = (f"{shlex.quote(use.nvcc)} -I../include -DNAMED_BARRIERS=2 "
               "--generate-code=arch=compute_80,code=[compute_80,sm_80] -gencode arch=compute_90,code=sm_90 "
               "-MD -MF dep.d -x cu -c ../src/pressure.cu -o pressure.o")
    (build / "compile_commands.json").write_text(json.dumps([
        {"directory": str(build), "command": command, "file": "../src/pressure.cu", "output": "pressure.o"},
        {"directory": str(build), "command": "c++ -c main.cpp", "file": "main.cpp"}]))
    result = run("lint", "--compile-commands", build / "compile_commands.json", "--format", "json", "--fail-on", "error")
    assert result.exit_code in (0, 1), result.output
    truth = {(n, arch): f for arch in ARCHS for n, f in
             nvcc.ptxas_report(use, Path("../src/pressure.cu"), arch, "-I../include", "-DNAMED_BARRIERS=2",
                               cwd=build).items()}
    assert linted(result.stdout) == truth and truth[("pressure", "sm_90")]["shared_mem"] == 2048


HOST_PROGRAM_FLAGS = ["-Xcompiler -B{evil}/", "-Xcompiler=-fPIC,-B{evil}/", "--compiler-options -B{evil}/",
                      "-forward-unknown-to-host-compiler -B{evil}/", "-Xcompiler=@{evil}/flags"]


def test_a_database_cannot_make_the_host_compiler_run_its_program(use, tmp_path):
    """nvcc run directly with each flag runs the database's own `cc1plus` (the attack is real);
    lint refuses each entry, runs nothing of the database's, and still lints a harmless entry."""
    import subprocess

    evil, marker = tmp_path / "evil", tmp_path / "ran"
    evil.mkdir()
    for program in ("cc1plus", "cc1"):
        (evil / program).write_text(f"#!/bin/sh\necho x >> {marker}\nexit 1\n")
        (evil / program).chmod(0o755)
    (evil / "flags").write_text(f"-B{evil}/\n")
    (tmp_path / "k.cu").write_text("__global__ void k(float* x) { x[threadIdx.x] = 1; }\n")
    forms = [form.format(evil=evil) for form in HOST_PROGRAM_FLAGS]
    subprocess.run([use.nvcc, "-cubin", "-arch=sm_90", *shlex.split(forms[0]), "k.cu", "-o", "k.cubin"],
                   cwd=tmp_path, capture_output=True, timeout=300)
    assert marker.exists(), "nvcc no longer runs a -B folder's cc1plus: the attack this test holds off is gone"
    marker.unlink()
    entries = [{"directory": str(tmp_path), "file": "k.cu", "command": f"nvcc {form} -arch=sm_90 -c k.cu -o k.o"}
               for form in [*forms, "-Xcompiler=-fPIC"]]
    (tmp_path / "compile_commands.json").write_text(json.dumps(entries))
    result = CliRunner().invoke(cli, ["lint", "--compile-commands", str(tmp_path / "compile_commands.json"),
                                      "--format", "json"])
    assert not marker.exists() and result.exit_code == 2, result.output
    refused = [line for line in result.stderr.splitlines() if "host compiler" in line]
    assert [int(line.split("entry ")[1].split(" ")[0]) for line in refused] == list(range(1, len(forms) + 1))
    assert {k["name"] for k in json.loads(result.stdout)["kernels"]} == {"_Z1kPf"}


def test_a_source_the_compiler_rejects_is_one_line_and_the_rest_is_linted(use, tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text("__global__ void k(float* x) { x[0] = not_declared; }\n")
    result = CliRunner().invoke(cli, ["lint", str(bad), str(LINT_KERNELS), "-a", "sm_90", "--format", "json"])
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if str(bad) in line]
    assert len(errors) == 1 and "not_declared" in errors[0] and "sm_90" in errors[0]
    assert {k["name"] for k in json.loads(result.stdout)["kernels"]} >= {"_Z8spillingPKfPfi", "_Z5heavyPKdPdi"}


def test_a_compiler_run_past_its_time_output_or_memory_fails_its_build_alone(use, tmp_path, monkeypatch):
    """Past --compile-timeout, MAX_COMPILER_OUTPUT or --compile-memory a build fails alone with one
    line, and the other source is still compiled and linted."""
    # 600 dependent sinf/cosf statements: cicc and ptxas take about 40 s, far past the limit, while
    # lint_kernels.cu builds in a second or two, well inside it even on a busy machine.
    slow = tmp_path / "slow.cu"
    slow.write_text("__global__ void k(float* o, const float* x) {\n  float a = x[threadIdx.x], b = a;\n"
                    + "".join(f"  a = a * x[{i * 7 % 1024}] + sinf(b); b = b + cosf(a) * {i}.0f;\n" for i in range(600))
                    + "  o[threadIdx.x] = a + b;\n}\n")
    result = CliRunner().invoke(cli, ["lint", str(slow), str(LINT_KERNELS), "-a", "sm_90", "--format", "json",
                                      "--no-cache", "--compile-timeout", "8"])
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if str(slow) in line]
    assert errors == [f"tuneadvise: bad input: {slow}: sm_90: the compiler failed: stopped after 8 s (--compile-timeout)"]
    assert {k["name"] for k in json.loads(result.stdout)["kernels"]} >= {"_Z8spillingPKfPfi", "_Z5heavyPKdPdi"}

    # nvcc repeats the source line in each diagnostic: 1,000 warnings on a 9 KB line are 9 MB of output.
    monkeypatch.setattr("tuneadvise.advisor.toolchain.compile.MAX_COMPILER_OUTPUT", 1 << 20)
    slow.write_text("volatile " * 1000)
    loud = CliRunner().invoke(cli, ["lint", str(slow), "-a", "sm_90", "--format", "json", "--no-cache"])
    errors = [line for line in loud.stderr.splitlines() if str(slow) in line]
    assert loud.exit_code == 2 and len(errors) == 1
    assert errors[0].startswith(f"tuneadvise: bad input: {slow}: sm_90: the compiler failed: printed more than 1 MiB "
                                f"and was stopped; it began: {slow}(1): warning #83-D: type qualifier specified")

    if os.name != "posix":
        return
    # 16 MiB of address space is less than nvcc itself maps: the build fails, naming the limit.
    small = CliRunner().invoke(cli, ["lint", str(LINT_KERNELS), "-a", "sm_90", "--format", "json", "--no-cache",
                                     "--compile-memory", "16"])
    assert small.exit_code == 2 and json.loads(small.stdout)["kernels"] == []
    [error] = [line for line in small.stderr.splitlines() if f"{LINT_KERNELS}: sm_90: the compiler failed" in line]
    assert error.endswith("(each compiler process may use 16 MiB: --compile-memory)")
    # The default limit leaves a real translation unit alone (what ptxas reports, as without a limit).
    default = CliRunner().invoke(cli, ["lint", str(LINT_KERNELS), "-a", "sm_90", "--format", "json", "--no-cache"])
    unlimited = CliRunner().invoke(cli, ["lint", str(LINT_KERNELS), "-a", "sm_90", "--format", "json", "--no-cache",
                                         "--compile-memory", "0"])
    assert default.exit_code == unlimited.exit_code and default.exit_code in (0, 1)
    truth = {(name, "sm_90"): figures for name, figures in fixture_truth(use, LINT_KERNELS, "sm_90").items()}
    assert linted(default.stdout) == linted(unlimited.stdout) == truth


def test_new_rules_on_real_builds(use, tmp_path):
    # __maxnreg__(32) on `spilling`: ptxas meets it by spilling (TA907).
    result = run("lint", LINT_KERNELS, "-a", "sm_90", "--select", "TA907,TA909", "--format", "json")
    codes = {k["name"]: {f["code"] for f in k["findings"]} for k in json.loads(result.stdout)["kernels"]}
    assert codes["_Z8spillingPKfPfi"] == {"TA907"} and not codes["_Z12tiled_matmulPKfS0_Pfi"]
    # The host assumed 4 blocks of 256 per SM for sgemm_tile<8, 8>; the build reaches fewer (TA909).
    blocks = fixture_truth(use, REALISTIC, "sm_90")["_Z10sgemm_tileILi8ELi8EEvPKfS1_Pfiii"]
    assert blocks["registers"] > 64  # 4 blocks of 256 threads need at most 64 registers on sm_90
    (tmp_path / "tuneadvise.toml").write_text(
        '[[kernels]]\nname = "sgemm_tile<8, 8>*"\nblock_size = 256\nmin_blocks_per_sm = 4\n')
    result = run("lint", REALISTIC, "-a", "sm_90", "--config", tmp_path / "tuneadvise.toml", "--select", "TA909",
                 "--format", "json")
    flagged = {k["name"] for k in json.loads(result.stdout)["kernels"] if k["findings"]}
    assert flagged == {"_Z10sgemm_tileILi8ELi8EEvPKfS1_Pfiii"} and result.exit_code == 1


@pytest.mark.parametrize("arch", ARCHS)
def test_every_frontier_point_is_ptxas_at_that_cap(use, arch):
    result = run("frontier", REALISTIC, "--arch", arch, "--block-size", "256", "--format", "json")
    assert result.exit_code == 0, result.output
    kernels = json.loads(result.stdout)["kernels"]
    assert len(kernels) == 11  # ten kernels, one of them instantiated twice
    caps = sorted({p["max_registers"] for k in kernels for p in k["points"]} - {None})
    assert len(caps) >= 4
    reports = fixture_truths(use, REALISTIC, [(arch, (f"-maxrregcount={cap}",) if cap else ()) for cap in [None, *caps]])
    truth = dict(zip([None, *caps], reports))
    checked = 0
    for kernel in kernels:
        for point in kernel["points"]:
            expected = truth[point["max_registers"]][kernel["name"]]
            assert {f: point[f] for f in FIGURES if f != "shared_mem"} == \
                {f: expected[f] for f in FIGURES if f != "shared_mem"}, (kernel["name"], point)
            checked += 1
    assert checked >= 30
    # The marks read the points: the best spills nothing and beats the uncapped build.
    for kernel in kernels:
        points = kernel["points"]
        if kernel["best"] is not None:
            best = points[kernel["best"]]
            assert best["spill_stores"] == best["spill_loads"] == 0
            assert best["occupancy"] > points[0]["occupancy"]
            assert f"-maxrregcount={best['max_registers']}" in kernel["advice"]
        if kernel["spills_begin"] is not None:
            assert all(p["spill_stores"] == p["spill_loads"] == 0 for p in points[:kernel["spills_begin"]])


def test_frontier_of_a_kernel_with_its_own_bounds_and_a_glob(use):
    result = run("frontier", LINT_KERNELS, "-a", "sm_90", "-b", "128", "-k", "heavy", "--format", "json")
    [kernel] = json.loads(result.stdout)["kernels"]
    truth = fixture_truth(use, LINT_KERNELS, "sm_90")["_Z5heavyPKdPdi"]
    assert kernel["own_cap"] == "__launch_bounds__(128)"
    assert {p["registers"] for p in kernel["points"]} == {truth["registers"]}  # -maxrregcount does not apply


def test_the_report_cache_serves_unchanged_builds_and_never_a_stale_or_damaged_one(use, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("TUNEADVISE_CACHE_DIR", str(cache))
    monkeypatch.setenv("TUNEADVISE_HOST_LAUNCHES", "off")  # the reports alone: one entry per build
    (tmp_path / "sizes.h").write_text("#define STATIC_BYTES 1024\n")
    source = tmp_path / "k.cu"
    source.write_text('#include "sizes.h"\n' + PRESSURE.read_text())

    def figures():
        # TA301/TA304 ignored: their suggested caps are builds of their own, cached as well; --no-sass: the
        # reports alone (with the machine code read, each build's cubin is kept beside its report)
        result = run("lint", source, "-a", "sm_90", "--format", "json", "--fail-on", "error", "--ignore", "TA301,TA304",
                     "--no-sass")
        return linted(result.stdout)[("pressure", "sm_90")]

    first = figures()
    entries = sorted(cache.rglob("*.json"))
    assert first["shared_mem"] == 1024 and len(entries) == 1
    assert figures() == first and sorted(cache.rglob("*.json")) == entries  # served, not recompiled
    # A changed header is another key: ptxas's new figure, not the cached one.
    (tmp_path / "sizes.h").write_text("#define STATIC_BYTES 2048\n")
    truth = nvcc.ptxas_report(use, source, "sm_90")["pressure"]
    assert figures() == truth and truth["shared_mem"] == 2048 and len(list(cache.rglob("*.json"))) == 2
    # A damaged entry (a log that does not match its digest, a key that is not its name) is ignored.
    for entry in cache.rglob("*.json"):
        stored = json.loads(entry.read_text())
        entry.write_text(json.dumps(dict(stored, log=stored["log"].replace("Used", "Used 1"))))
    assert figures() == truth
    for entry in cache.rglob("*.json"):
        stored = json.loads(entry.read_text())
        entry.write_text(json.dumps(dict(stored, key="0" * 64)))
    assert figures() == truth
    assert run("lint", source, "-a", "sm_90", "--no-cache", "--format", "json").exit_code in (0, 1)


def test_frontier_of_ptx_is_ptxas_at_each_cap(use, tmp_path):
    import subprocess

    ptx = tmp_path / "tiled.ptx"
    subprocess.run([use.nvcc, "-ptx", "-arch=sm_80", str(REALISTIC), "-o", str(ptx)], check=True, timeout=600)
    result = run("frontier", ptx, "-a", "sm_90", "-b", "256", "-k", "*gemm*", "--format", "json")
    kernels = json.loads(result.stdout)["kernels"]
    assert result.exit_code == 0 and len(kernels) == 3
    for kernel in kernels:
        for point in kernel["points"]:
            expected = nvcc.ptxas_ptx_report(use, ptx, "sm_90", point["max_registers"])[kernel["name"]]
            assert {f: point[f] for f in FIGURES if f != "shared_mem"} == \
                {f: expected[f] for f in FIGURES if f != "shared_mem"}


def test_a_launch_bound_met_by_spilling_is_flagged_at_ptxas_own_cap(use, tmp_path):
    """__launch_bounds__(384, 2): 2 blocks of 384 threads leave 80 registers on sm_90 (the engine's
    figure); ptxas holds sgemm_tile<8, 8> to exactly that and spills (TA907), sgemm_tile<4, 8> fits."""
    source = tmp_path / "bounded.cu"
    source.write_text(REALISTIC.read_text().replace("__global__ void sgemm_tile",
                                                    "__global__ void __launch_bounds__(384, 2) sgemm_tile"))
    truth = nvcc.ptxas_report(use, source, "sm_90")
    result = run("lint", source, "-a", "sm_90", "--select", "TA907", "--format", "json")
    flagged = {k["name"]: [f["details"] for f in k["findings"]] for k in json.loads(result.stdout)["kernels"]}
    wide, narrow = "_Z10sgemm_tileILi8ELi8EEvPKfS1_Pfiii", "_Z10sgemm_tileILi4ELi8EEvPKfS1_Pfiii"
    assert truth[wide]["registers"] == 80 and truth[wide]["spill_stores"] > 0
    assert [d["register_cap"] for d in flagged[wide]] == [80] and flagged[narrow] == []
    assert sum(1 for findings in flagged.values() if findings) == 1


def test_a_cap_in_bounds_written_with_parentheses_is_built_as_the_advice_says(use, tmp_path):
    """__launch_bounds__(THREADS, (BLOCKS)): the built cap replaces the whole attribute (it once stopped at
    the first ')', leaving source the compiler rejects), and ptxas builds the kernel at that cap."""
    from tuneadvise.advisor.toolchain.cap_check import edited_source

    text = ("#define THREADS 256\n#define BLOCKS 1\n"
            + REALISTIC.read_text().replace("__global__ void sgemm_tile",
                                            "__global__ void __launch_bounds__(THREADS, (BLOCKS)) sgemm_tile", 1))
    line = next(n for n, code in enumerate(text.split("\n"), 1) if "__launch_bounds__" in code)
    edited = tmp_path / "edited.cu"
    edited.write_text(edited_source(text, line, {"launch_bounds": (256, 3)}))
    report = nvcc.ptxas_report(use, edited, "sm_90")
    wide = report["_Z10sgemm_tileILi8ELi8EEvPKfS1_Pfiii"]
    assert wide["registers"] <= 65536 // (256 * 3)  # the cap ptxas was given: 3 blocks of 256 threads


@pytest.mark.parametrize("flags", ["--keep --keep-dir {d}/kept", "-save-temps", "--output-file={d}/written",
                                   "-optf {d}/opts", "-Xptxas --output-file={d}/written",
                                   "--time {d}/timing.csv", "--fdevice-time-trace={d}/trace.json",
                                   "-Xcompiler -MF,{d}/dep.d,-MD", "-Xcicc -o,{d}/cicc.out"])
def test_a_compile_commands_entry_cannot_make_the_compiler_write_beside_the_build(use, tmp_path, flags):
    """--keep, --keep-dir and -save-temps in an entry once left the compiler's intermediate files in the
    entry's directory (or any directory it named); only the build's temporary folder is written."""
    (tmp_path / "k.cu").write_text("__global__ void k(float *x) { x[0] = 1; }\n")
    (tmp_path / "kept").mkdir()
    (tmp_path / "opts").write_text(f"--keep -o {tmp_path}/written\n")
    entry = {"directory": str(tmp_path), "file": "k.cu",
             "command": f"nvcc {flags.format(d=tmp_path)} -arch=sm_90 -c k.cu -o k.o"}
    (tmp_path / "cc.json").write_text(json.dumps([entry]))
    before = sorted(p.name for p in tmp_path.rglob("*"))
    result = CliRunner().invoke(cli, ["lint", "--compile-commands", str(tmp_path / "cc.json"), "--no-cache"])
    assert result.exit_code in (0, 1, 2) and "Traceback" not in result.output, result.output
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


@pytest.mark.skipif(os.name != "posix", reason="the address-space limit is POSIX's ulimit")
def test_the_report_cache_dependency_scan_runs_within_the_compile_bounds(use, tmp_path):
    """Before compiling, the cache asks `nvcc -M` what the build reads; its preprocessor reads what
    the source includes, and `#include "/dev/zero"` grew it without end (2.1 GB when the test stopped
    it, the machine's memory otherwise) while the compile itself was held to --compile-memory."""
    import resource
    import subprocess
    import sys

    source = tmp_path / "zero.cu"
    source.write_text('#include "/dev/zero"\n__global__ void k(float* x) { x[0] = 1; }\n')
    env = dict(os.environ, TUNEADVISE_CACHE_DIR=str(tmp_path / "cache"))

    def ceiling():  # what this test lets the run take, whatever tuneadvise does
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    # A fresh interpreter runs the command and prints the peak of its processes (RUSAGE_CHILDREN: the
    # largest of the command and every process it and they waited for).
    measure = ("import resource, subprocess, sys; code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL); "
               "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", measure, sys.executable, "-m", "tuneadvise.cli", "lint", str(source),
                           "-a", "sm_90", "--compile-memory", "256"], capture_output=True, text=True, env=env,
                          preexec_fn=ceiling, timeout=120)
    code, peak_kib = map(int, done.stdout.split())
    assert code == 2
    [error] = [line for line in done.stderr.splitlines() if str(source) in line]
    assert error.endswith("(each compiler process may use 256 MiB: --compile-memory)")
    assert peak_kib < 512 << 10, f"a process of the run peaked at {peak_kib >> 10} MiB"


def test_a_compiler_stopped_at_its_time_leaves_no_files_behind(use, tmp_path, monkeypatch):
    """nvcc removes its intermediate files (the preprocessed source, cudafe's output) when it ends,
    but not when it is killed: each build stopped by --compile-timeout left eight in the system's
    temporary folder. The compiler's temporary folder is now the build's own."""
    system_tmp = tmp_path / "system-tmp"
    system_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(system_tmp))
    monkeypatch.setattr("tempfile.tempdir", str(system_tmp))
    slow = tmp_path / "slow.cu"  # as in the test above: cicc and ptxas take about 40 s
    slow.write_text("__global__ void k(float* o, const float* x) {\n  float a = x[threadIdx.x], b = a;\n"
                    + "".join(f"  a = a * x[{i * 7 % 1024}] + sinf(b); b = b + cosf(a) * {i}.0f;\n" for i in range(600))
                    + "  o[threadIdx.x] = a + b;\n}\n")
    result = CliRunner().invoke(cli, ["lint", str(slow), "-a", "sm_90", "--compile-timeout", "1",
                                      "--no-cache", "--format", "json"])
    assert result.exit_code == 2 and "stopped after 1 s (--compile-timeout)" in result.stderr
    assert sorted(p.name for p in system_tmp.iterdir()) == []


def _running_with(text: str) -> list[int]:
    """The live processes (not zombies) whose command line mentions `text`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read()
            with open(f"/proc/{entry}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if text.encode() in cmdline and state != b"Z":
            found.append(int(entry))
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="lists processes through /proc")
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_a_terminated_run_stops_its_compilers(use, tmp_path, signame):
    """The compilers run in their own process groups (so that a timeout kills each whole), which a
    signal to tuneadvise, or to its process group as `timeout` sends, never reaches: after
    `timeout 4 tuneadvise lint slow.cu` nvcc and cicc went on compiling, orphans, for their 600 s."""
    import signal
    import subprocess
    import sys
    import time

    slow = tmp_path / "terminated.cu"  # as above: cicc and ptxas take about 40 s
    slow.write_text("__global__ void k(float* o, const float* x) {\n  float a = x[threadIdx.x], b = a;\n"
                    + "".join(f"  a = a * x[{i * 7 % 1024}] + sinf(b); b = b + cosf(a) * {i}.0f;\n" for i in range(600))
                    + "  o[threadIdx.x] = a + b;\n}\n")
    process = subprocess.Popen([sys.executable, "-m", "tuneadvise.cli", "lint", str(slow), "-a", "sm_90", "--no-cache"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while len(_running_with(str(slow))) < 2 and time.monotonic() < deadline:  # tuneadvise and its nvcc
            time.sleep(0.05)
        time.sleep(0.5)
        process.send_signal(getattr(signal, signame))
        assert process.wait(timeout=30) == -getattr(signal, signame)
        deadline = time.monotonic() + 5
        while _running_with(str(slow)) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = _running_with(str(slow))
    finally:
        process.kill()
        for pid in _running_with(str(slow)):  # whatever the run left, not to outlive the test
            os.kill(pid, signal.SIGKILL)
    assert left == []


@pytest.mark.parametrize("flags", ["--dryrun", "--version", "-Xcompiler -MD", "-Xcompiler=-fPIC,-MD,-MF,k.d"])
def test_an_entry_flag_that_stops_the_compile_is_dropped_and_a_build_without_a_cubin_fails(use, tmp_path, flags):
    """An entry's --dryrun or --version made nvcc exit 0 without compiling, and lint passed with no
    kernels; `-Xcompiler -MD` lost -MD and handed the next flag (-Xptxas) to gcc. The entry's kernel
    is now reported; a build that writes no cubin (a --nvcc-flag of the user's) fails on one line."""
    (tmp_path / "k.cu").write_text("__global__ void k(float *x) { x[0] = 1; }\n")
    entry = {"directory": str(tmp_path), "file": "k.cu", "command": f"nvcc {flags} -arch=sm_90 -c k.cu -o k.o"}
    (tmp_path / "cc.json").write_text(json.dumps([entry]))
    result = run("lint", "--compile-commands", tmp_path / "cc.json", "--no-cache", "--format", "json")
    assert [k["name"] for k in json.loads(result.stdout)["kernels"]] == ["_Z1kPf"]
    if flags.startswith("--"):
        given = CliRunner().invoke(cli, ["lint", str(tmp_path / "k.cu"), "-a", "sm_90", "--no-cache", f"--nvcc-flag={flags}"])
        errors = [line for line in given.stderr.splitlines() if "k.cu" in line]
        assert given.exit_code == 2 and len(errors) == 1
        assert errors[0].endswith("the compiler failed: exited without compiling (no cubin written: a flag such as "
                                  "--dryrun or --version in the build's flags?)")


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="drops a Linux capability")
def test_the_default_memory_limit_never_asks_above_the_hard_limit(use, tmp_path):
    """Only a privileged process may raise its hard limit: wherever the hard limit was below
    --compile-memory (8192 MiB by default; a cluster's login node, a CI runner), every build failed
    with '8388608: 1: ulimit: error setting limit (Operation not permitted)'."""
    import ctypes
    import resource
    import subprocess
    import sys

    def unprivileged_under_6_gib():
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
        try:  # as root, give up raising limits (CAP_SYS_RESOURCE) as everyone else lacks it
            ctypes.CDLL(None, use_errno=True).prctl(24, 24, 0, 0, 0)  # PR_CAPBSET_DROP, CAP_SYS_RESOURCE
        except (OSError, AttributeError):
            pass

    source = tmp_path / "k.cu"
    source.write_text("__global__ void k(float *x) { x[0] = 1; }\n")
    done = subprocess.run([sys.executable, "-m", "tuneadvise.cli", "lint", str(source), "-a", "sm_90", "--no-cache",
                           "--format", "json"], capture_output=True, text=True, timeout=120,
                          preexec_fn=unprivileged_under_6_gib)
    assert done.returncode in (0, 1), done.stderr
    assert [k["name"] for k in json.loads(done.stdout)["kernels"]] == ["_Z1kPf"]


def test_a_compiler_crashing_under_the_memory_limit_names_the_limit(use, tmp_path):
    """At 64 MiB cicc dies with 'Segmentation fault' and a positive status: the line did not say
    that the limit was the likely cause."""
    source = tmp_path / "k.cu"
    source.write_text("__global__ void k(float *x) { x[0] = 1; }\n")
    result = CliRunner().invoke(cli, ["lint", str(source), "-a", "sm_90", "--no-cache", "--compile-memory", "64"])
    [error] = [line for line in result.stderr.splitlines() if str(source) in line]
    assert result.exit_code == 2 and error.endswith("(each compiler process may use 64 MiB: --compile-memory)")


def test_a_build_keeps_only_its_resource_report(use, tmp_path, monkeypatch):
    """A build's log was kept whole, per architecture and cap, and cached: nvcc prints the source
    line again with each warning, so a 15 KB line of repeated `volatile` that compiles printed 26 MB
    per build, 388 MB of lint's memory and 204 MB of cache for eight architectures."""
    from tuneadvise.advisor.toolchain.compile import Build, Compiler
    from tuneadvise.advisor.toolchain.discovery import find_toolchain
    from tuneadvise.advisor.toolchain.settings import BuildSettings

    loud = tmp_path / "loud.cu"
    loud.write_text("__device__ " + "volatile " * 300 + "int g;\n__global__ void k(float *p) { p[0] = g; }\n")
    cache = tmp_path / "cache"
    monkeypatch.setenv("TUNEADVISE_CACHE_DIR", str(cache))
    [result] = Compiler(find_toolchain(), BuildSettings()).run([Build(str(loud), "sm_90")])
    assert result.error is None
    assert all(line.startswith("ptxas") or "bytes stack frame" in line for line in result.log.splitlines())
    assert len(result.log) < 2000 and sum(entry.stat().st_size for entry in cache.rglob("*.json")) < 4000
    truth = nvcc.ptxas_report(use, loud, "sm_90")["_Z1kPf"]
    assert [{f: getattr(u, f) for f in FIGURES} for u in result.usage()] == [truth]


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads the peak memory from /proc")
def test_compiler_output_is_never_held_as_text_whole(use, tmp_path):
    """A build's output (up to 32 MiB) was decoded whole and split into lines: with four-byte
    characters in the source line that nvcc repeats with each warning, two such builds at -j 2
    (24 MB of output each) took lint to 268 MB; one buffer per build and line-by-line reading, 72 MB."""
    import subprocess
    import sys

    sources = []
    for n in (1, 2):
        source = tmp_path / f"wide{n}.cu"
        source.write_text(f"__device__ {'volatile ' * 1250}int g{n}; __device__ const char s{n}[] = \"{chr(0x1F600) * 500}\";\n"
                          f"__global__ void k{n}(float *p) {{ p[0] = g{n} + s{n}[0]; }}\n", encoding="utf-8")
        sources.append(str(source))
    peak = ("import atexit, sys; atexit.register(lambda: print(open('/proc/self/status').read().split('VmHWM:')[1]"
            ".split()[0], file=sys.stderr)); from tuneadvise.cli.main import main; sys.argv[0] = 'tuneadvise'; main()")
    # The compiles' output alone: libclang's parse of the host code (the [host] extra) is not measured here.
    done = subprocess.run([sys.executable, "-c", peak, "lint", *sources, "-a", "sm_90", "-j", "2", "--no-cache",
                           "--format", "json"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TUNEADVISE_HOST_LAUNCHES": "off"})
    assert done.returncode in (0, 1), done.stderr
    assert sorted(k["name"] for k in json.loads(done.stdout)["kernels"]) == ["_Z2k1Pf", "_Z2k2Pf"]
    peak_kib = int(done.stderr.split()[-1])
    assert peak_kib < 160 << 10, f"lint peaked at {peak_kib >> 10} MiB"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_compile_commands_entry_that_cannot_be_read_is_not_compiled(use, tmp_path):
    """An entry whose file is a FIFO was refused as a source but compiled all the same: nvcc opened
    the FIFO and blocked until --compile-timeout."""
    os.mkfifo(tmp_path / "k.cu")
    entry = {"directory": str(tmp_path), "file": "k.cu", "command": "nvcc -arch=sm_90 -c k.cu -o k.o"}
    (tmp_path / "cc.json").write_text(json.dumps([entry]))
    result = CliRunner().invoke(cli, ["lint", "--compile-commands", str(tmp_path / "cc.json"), "--no-cache",
                                      "--compile-timeout", "2"])
    errors = [line for line in result.stderr.splitlines() if "k.cu" in line]
    assert result.exit_code == 2 and len(errors) == 1 and "not a regular file" in errors[0], result.stderr


@pytest.mark.parametrize("how", ["arguments", "command"])
def test_a_compile_commands_entry_runs_no_shell_command(use, tmp_path, how):
    """nvcc hands -D values to sh in double quotes: `X=$(touch INJECTED)` ran `touch INJECTED` (exit 0)."""
    (tmp_path / "k.cu").write_text("__global__ void k(float *p) { p[0] = X; }\n")
    value = "X=$(touch INJECTED)`touch INJECTED2`1"
    entry = {"directory": str(tmp_path), "file": "k.cu"}
    if how == "arguments":
        entry["arguments"] = ["nvcc", "-arch=sm_90", "-c", "k.cu", "-D", value]
    else:
        entry["command"] = "nvcc -arch=sm_90 -c k.cu -D '" + value + "'"
    (tmp_path / "cc.json").write_text(json.dumps([entry]))
    result = CliRunner().invoke(cli, ["lint", "--compile-commands", str(tmp_path / "cc.json"), "--no-cache"])
    assert result.exit_code == 2 and "entry 1 ('k.cu')" in result.output
    assert not (tmp_path / "INJECTED").exists() and not (tmp_path / "INJECTED2").exists()
