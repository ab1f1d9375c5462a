"""The toolchain subpackage without a compiler: discovery's one sentence and exit 3, the
compile_commands reader on good and hostile input, the build flags."""

from __future__ import annotations

import json
import os
import sys
import threading
import time

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from tuneadvise.advisor.toolchain.compile_commands import CompileCommandsError, flags_of, load_builds
from tuneadvise.advisor.toolchain.discovery import INSTALL_HINT
from tuneadvise.cli.main import cli

from ..helpers import ABORT_PAST_MEMORY, JSON_VALUES


@pytest.fixture
def no_compiler(monkeypatch):
    monkeypatch.setattr("tuneadvise.advisor.toolchain.discovery.candidates", lambda *_: iter(()))


@pytest.mark.parametrize("args", [["lint", "k.cu", "-a", "sm_90"], ["frontier", "k.cu", "-a", "sm_90", "-b", "256"]])
def test_no_compiler_is_one_sentence_and_exit_3(no_compiler, tmp_path, args):
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    result = CliRunner().invoke(cli, [str(tmp_path / a) if a == "k.cu" else a for a in args])
    assert result.exit_code == 3
    assert result.stderr.strip().splitlines() == [f"tuneadvise: {INSTALL_HINT}"]
    assert "pip install 'tuneadvise[nvcc]'" in result.stderr


def test_sources_with_build_output_are_not_compiled(no_compiler, tmp_path):
    log = tmp_path / "build.log"
    log.write_text("ptxas info    : Compiling entry function 'k' for 'sm_90'\nptxas info    : Used 32 registers\n")
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    result = CliRunner().invoke(cli, ["lint", str(log), str(tmp_path / "k.cu"), "--format", "json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["kernels"][0]["location"]["line"] == 1


def test_compiling_needs_an_architecture(tmp_path):
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    result = CliRunner().invoke(cli, ["lint", str(tmp_path / "k.cu")])
    assert result.exit_code == 2 and "--arch: needed to compile CUDA sources" in result.stderr


def test_compile_commands_flags_keep_what_the_build_means():
    entry = {"directory": "/b", "file": "../k.cu", "arguments": [
        "/usr/bin/nvcc", "-ccbin", "g++-12", "-I/inc", "-isystem", "/sys", "-DA=1", "-std=c++17", "--expt-relaxed-constexpr",
        "-arch=sm_80", "-gencode", "arch=compute_90a,code=sm_90a", "-Xcompiler=-fPIC", "-MD", "-MT", "k.o",
        "-MF", "k.d", "-x", "cu", "-c", "../k.cu", "-o", "k.o"]}
    assert flags_of(entry) == (["-ccbin", "g++-12", "-I/inc", "-isystem", "/sys", "-DA=1", "-std=c++17",
                                "--expt-relaxed-constexpr", "-Xcompiler=-fPIC", "-x", "cu"], ["sm_80", "sm_90a"])


def test_compile_commands_problems_are_sentences(tmp_path):
    path = tmp_path / "compile_commands.json"
    path.write_text(json.dumps([{"file": "a.cu", "command": "nvcc -c a.cu"}, 3, {"file": "b.cu"}]))
    builds, problems = load_builds(str(path), ())
    assert builds == [] and len(problems) == 3
    assert "give --arch" in problems[0] and "expected an object" in problems[1] and "neither" in problems[2]
    path.write_text("{")
    with pytest.raises(CompileCommandsError, match="not JSON"):
        load_builds(str(path), ("sm_90",))


ENTRY_KEYS = st.sampled_from(["file", "command", "arguments", "directory"])


@given(st.one_of(JSON_VALUES, st.lists(st.dictionaries(ENTRY_KEYS, JSON_VALUES), max_size=4)))
def test_any_json_in_compile_commands_is_a_build_list_or_one_error(tmp_path_factory, value):
    path = tmp_path_factory.mktemp("cc") / "compile_commands.json"
    path.write_text(json.dumps(value))
    try:
        builds, problems = load_builds(str(path), ("sm_90",))
    except CompileCommandsError as exc:
        assert "\n" not in str(exc)
    else:
        assert all(isinstance(p, str) for p in problems) and isinstance(builds, list)


@given(st.lists(st.text(max_size=20), max_size=12))
def test_any_argument_list_gives_flags_without_a_traceback(arguments):
    kept, archs = flags_of({"file": "k.cu", "arguments": ["nvcc", *arguments]})
    assert all(isinstance(f, str) for f in kept) and all(a.startswith("sm_") for a in archs)


POINTS = st.lists(st.tuples(st.integers(0, 64), st.integers(1, 32), st.integers(0, 3)), min_size=1, max_size=8)


@given(POINTS)
def test_frontier_marks_read_the_points(rows):
    """best: the most occupancy with no spills, only where it beats the uncapped build (ties: the
    larger cap); spills begin: the first point that spills; the advice names best's cap."""
    from tuneadvise.advisor.frontier import Point, _marks
    from tuneadvise.specs.catalog import shipped_catalog

    arch = shipped_catalog().resolve("sm_90").arch
    points = [Point(None if i == 0 else 255 - 8 * i, 255 - 8 * i, spills, spills, spills, blocks, blocks * 8 / 64)
              for i, (spills, blocks, _) in enumerate(rows)]
    best, spills_begin, advice = _marks(arch, points, 256, None)
    clean = [p.occupancy for p in points if not p.spills]
    if best is None:
        assert not clean or max(clean) <= points[0].occupancy and advice is None
    else:
        assert not points[best].spills and points[best].occupancy == max(clean) > points[0].occupancy
        assert all(points[i].spills or points[i].occupancy < points[best].occupancy for i in range(best))
        assert f"-maxrregcount={points[best].max_registers}" in advice
        assert f"__launch_bounds__(256, {points[best].active_blocks_per_sm})" in advice
    spilling = [i for i, p in enumerate(points) if p.spills]
    assert spills_begin == (spilling[0] if spilling else None)


@pytest.mark.parametrize("args", [["diff", "old.log", "k.cu"], ["lint", "k.cu"]])
def test_a_source_to_compile_without_an_architecture_is_bad_input(tmp_path, args):
    """Found by the property suite: diff compiled a CUDA source with no --arch and exited 70."""
    (tmp_path / "old.log").write_text("ptxas info    : Compiling entry function 'k' for 'sm_90'\nptxas info    : Used 32 registers\n")
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    result = CliRunner().invoke(cli, [str(tmp_path / a) if "." in a else a for a in args])
    assert result.exit_code == 2, result.output
    assert "--arch" in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("option, value, message", [
    ("-I", "", "--include-dir: an empty directory name"),
    ("--nvcc-flag", "", "--nvcc-flag: an empty flag"),
    ("-D", "", "--define: '' is not NAME or NAME=VALUE"),
])
@pytest.mark.parametrize("command", [["lint", "k.cu", "-a", "sm_90"], ["frontier", "k.cu", "-a", "sm_90", "-b", "256"]])
def test_an_empty_build_option_is_refused_before_compiling(no_compiler, tmp_path, command, option, value, message):
    """`-I ""` became a bare -I: nvcc took the next argument (-Xptxas) as the directory, the build
    lost its resource report, and lint passed with no kernels."""
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    result = CliRunner().invoke(cli, [str(tmp_path / a) if a == "k.cu" else a for a in command] + [option, value])
    [line] = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and line.startswith(f"tuneadvise: error: {message}")


@pytest.mark.skipif(os.name != "posix", reason="the address-space cap is POSIX's ulimit -v")
def test_the_compiler_memory_cap_binds_the_process():
    import subprocess
    import sys

    from tuneadvise.advisor.tool_bounds import limited

    allocate = [sys.executable, "-c", "bytearray(400 << 20)"]
    assert subprocess.run(limited(allocate, 200), capture_output=True).returncode != 0
    assert subprocess.run(limited(allocate, 2048), capture_output=True).returncode == 0
    assert limited(allocate, None) == allocate


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads process groups from /proc (Linux)")
@pytest.mark.parametrize("script, error", [
    # A stage that outlives the compiler and keeps its output open: the group is killed after a grace
    # (and, no cubin written, the build fails).
    ("(sleep 60; echo late) &\nexit 0\n", "exited without compiling (no cubin written: a flag such as --dryrun or "
                                         "--version in the build's flags?)"),
    # A compiler that never ends: stopped at the timeout, with every process it started.
    ("sleep 60 &\nsleep 60\n", "stopped after 1 s (--compile-timeout)"),
    # A compiler that prints without end: stopped once its output passes the cap.
    ("yes 'k.cu(1): warning: again'\n", "printed more than 1 MiB and was stopped; it began: k.cu(1): warning: again"),
])
def test_no_process_of_a_compiler_run_outlives_it(tmp_path, monkeypatch, script, error):
    from tuneadvise.advisor.toolchain import compile as compiling
    from tuneadvise.advisor.toolchain import processes
    from tuneadvise.advisor.toolchain.discovery import Toolchain
    from tuneadvise.advisor.toolchain.settings import BuildSettings

    monkeypatch.setattr(processes, "OUTPUT_GRACE_S", 0.5)
    monkeypatch.setattr(compiling, "MAX_COMPILER_OUTPUT", 1 << 20)
    fake = tmp_path / "nvcc"
    fake.write_text("#!/bin/sh\necho $$ > " + str(tmp_path / "pid") + "\n" + script)
    fake.chmod(0o755)
    start = time.monotonic()
    result = compiling.compile_one(Toolchain(str(fake), str(fake), "test"), compiling.Build(str(tmp_path / "k.cu"), "sm_90"),
                                   BuildSettings(timeout_s=1))
    assert time.monotonic() - start < 10
    assert result.error == error
    group = int((tmp_path / "pid").read_text())
    deadline = time.monotonic() + 2  # SIGKILL is delivered at once; the dying may take a moment
    while _live_members(group) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _live_members(group) == []  # nothing of the compiler's process group is left running


def _live_members(group: int) -> list[int]:
    """The processes of a process group that are not zombies (an orphaned zombie waits for init)."""
    from pathlib import Path

    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _ppid, pgrp = stat.read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, IndexError):
            continue  # ended while being read
        if int(pgrp) == group and state != "Z":
            members.append(int(stat.parent.name))
    return members


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("command", [["lint", "k.cu", "-a", "sm_90"], ["frontier", "k.cu", "-a", "sm_90", "-b", "256"]])
def test_a_fifo_or_device_to_compile_is_refused_without_opening_it(no_compiler, tmp_path, command):
    """A FIFO named k.cu blocked lint and frontier without end on opening it (no writer), and with a
    writer the compiler, opening it again, blocked until --compile-timeout; a link to /dev/zero was
    read to the 32 MiB limit first. Refused before opening, on one line."""
    fifo = tmp_path / "k.cu"
    os.mkfifo(fifo)
    done = threading.Event()

    def writer():  # unblocks a reader that opens the FIFO, so that the test fails instead of hanging
        deadline = time.monotonic() + 10
        while not done.is_set() and time.monotonic() < deadline:
            try:
                descriptor = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet
                time.sleep(0.05)
                continue
            os.write(descriptor, b"__global__ void k() {}\n")
            os.close(descriptor)
            return

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        result = CliRunner().invoke(cli, [str(fifo) if a == "k.cu" else a for a in command])
    finally:
        done.set()
        thread.join()
    errors = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(errors) == 1
    assert errors[0].endswith("not a regular file (a FIFO or a device), which the compiler cannot read again; name a file")
    (tmp_path / "zero.cu").symlink_to(os.devnull if os.name != "posix" else "/dev/zero")
    device = CliRunner().invoke(cli, [str(tmp_path / "zero.cu") if a == "k.cu" else a for a in command])
    assert device.exit_code == 2 and "not a regular file" in device.stderr


@pytest.mark.parametrize("command", [["lint", "k.cu", "-a", "sm_90"], ["frontier", "k.cu", "-a", "sm_90", "-b", "256"]])
def test_a_source_holding_nul_bytes_is_refused_before_compiling(no_compiler, tmp_path, command):
    """The host preprocessor takes quadratic time on NUL bytes: 40,000 lines holding one took gcc -E
    22 s, and 1 MB of them ran lint past 9 minutes (the dependency scan's 120 s, then the compile)."""
    (tmp_path / "k.cu").write_bytes(b"__global__ void k() {}\n" + b"\0\n" * 40_000)
    result = CliRunner().invoke(cli, [str(tmp_path / a) if a == "k.cu" else a for a in command])
    errors = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(errors) == 1
    assert errors[0].endswith("holds NUL bytes, which no CUDA source does and the compiler's preprocessor takes "
                              "quadratic time on")


def test_the_register_cap_is_read_once_where_the_flags_come_in(tmp_path):
    """-maxrregcount leaves the flags for Build.max_registers (compile.command passes it once), from
    the command line and from compile_commands.json alike; a malformed value stays for nvcc to refuse."""
    import json as json_module

    from tuneadvise.advisor.toolchain.compile import Build, command
    from tuneadvise.advisor.toolchain.compile_commands import load_builds
    from tuneadvise.advisor.toolchain.discovery import Toolchain
    from tuneadvise.advisor.toolchain.settings import split_maxrregcount
    from tuneadvise.cli.compile_options import build_settings

    settings = build_settings((), ("N=4",), ("-O3", "-maxrregcount=64"), None, None)
    assert settings.flags == ("-DN=4", "-O3") and settings.max_registers == 64
    assert split_maxrregcount(["-maxrregcount=x", "--maxrregcount", "32", "-maxrregcount=40"]) == (("-maxrregcount=x",), 40)
    commands = tmp_path / "compile_commands.json"
    commands.write_text(json_module.dumps([{"directory": str(tmp_path), "file": "k.cu",
                                            "arguments": ["nvcc", "-maxrregcount", "48", "-c", "k.cu", "-o", "k.o"]}]))
    [build], problems = load_builds(str(commands), ("sm_90",))
    assert not problems and build.max_registers == 48 and not any("maxrregcount" in f for f in build.flags)
    toolchain = Toolchain(nvcc="nvcc", ptxas="ptxas", origin="PATH")
    argv = command(toolchain, Build("k.cu", "sm_90", build.flags, build.max_registers), "out.cubin")
    assert [a for a in argv if "maxrregcount" in a] == ["-maxrregcount=48"]


# -- a build database can never run shell commands ---------------------------------

SHELL_TEXTS = ["$(touch INJECTED)", "`touch INJECTED`", "x;touch INJECTED", "x|touch INJECTED",
               "x\ntouch INJECTED", "x&&touch INJECTED", 'x"$(touch INJECTED)"', "x>INJECTED", "${HOME}"]


def _database(tmp_path, entry: dict) -> str:
    (tmp_path / "cc.json").write_text(json.dumps([{"directory": str(tmp_path), "file": "k.cu", **entry}]))
    return str(tmp_path / "cc.json")


@pytest.mark.parametrize("text", SHELL_TEXTS)
@pytest.mark.parametrize("place", ["-D", "-I", "-include", "file", "directory", "command"])
def test_shell_text_in_an_entry_is_refused_naming_the_entry(tmp_path, text, place):
    arguments = ["nvcc", "-arch=sm_90", "-c", "k.cu"]
    entry: dict = {"arguments": arguments}
    if place in ("-D", "-I", "-include"):
        arguments += [place, f"X{text}" if place == "-D" else f"inc{text}"]
    elif place == "file":
        entry = {"arguments": arguments[:3] + [f"k{text}.cu"], "file": f"k{text}.cu"}
    elif place == "directory":
        entry = {"arguments": arguments, "directory": f"{tmp_path}/d{text}"}
    else:  # a `command` string, split as a shell would: the value still holds the text
        entry = {"command": "nvcc -arch=sm_90 -c k.cu -D " + json.dumps(f"X={text}")}
    builds, problems = load_builds(_database(tmp_path, entry), ())
    assert builds == [] and len(problems) == 1
    assert problems[0].startswith("entry 1 (") and "\n" not in problems[0] and "interpret" in problems[0]


@pytest.mark.parametrize("flag", ["-DN=4", "-Iinclude/x-y_z", "--std=c++17", "-Xcompiler=-fPIC,-Wall", "-O3"])
def test_ordinary_flags_still_build(tmp_path, flag):
    builds, problems = load_builds(_database(tmp_path, {"arguments": ["nvcc", "-arch=sm_90", "-c", "k.cu", flag]}),
                                   ())
    assert problems == [] and builds[0].flags == (flag,)


@pytest.mark.parametrize("include", ["/dev/zero", "fifo", "folder"])
def test_a_forced_include_that_is_not_a_regular_file_is_refused(tmp_path, include):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    for form in (["-include", include], [f"--pre-include={include}"]):
        builds, problems = load_builds(_database(tmp_path, {"arguments": ["nvcc", "-arch=sm_90", "-c", "k.cu", *form]}),
                                       ())
        assert builds == [] and problems == [f"entry 1 ('k.cu'): its {form[0].split('=')[0]} '{include}' is not a "
                                             "regular file"]


def test_the_host_compiler_is_a_command_not_a_path_the_database_names(tmp_path):
    entry = {"arguments": ["nvcc", "-arch=sm_90", "-ccbin", "./evil.sh", "-c", "k.cu"]}
    builds, problems = load_builds(_database(tmp_path, entry), ())
    assert builds == [] and "-ccbin './evil.sh' is a path" in problems[0]
    entry = {"arguments": ["nvcc", "-arch=sm_90", "-ccbin", "g++-12", "-c", "k.cu"]}
    assert load_builds(_database(tmp_path, entry), ())[0][0].flags == ("-ccbin", "g++-12")


@pytest.mark.parametrize("flags", [
    "-Xcompiler -B./evil/", "-Xcompiler=-B./evil/", "--compiler-options=-Wall,-B,./evil", "-Xcompiler -fplugin=./p.so",
    "-Xcompiler=-specs=./s", "--compiler-options=--specs=./s", "-Xcompiler=@opts", "-Xcompiler -wrapper,./w",
    "-Xcompiler=-Xclang,-load,-Xclang,./p.so", "-forward-unknown-to-host-compiler -B./evil/",
    "--forward-unknown-opts -fplugin=./p.so"])
def test_a_host_compiler_flag_that_runs_a_named_program_refuses_its_entry(tmp_path, flags):
    path = tmp_path / "compile_commands.json"
    path.write_text(json.dumps([{"directory": str(tmp_path), "file": "k.cu", "command": f"nvcc {flags} -c k.cu"},
                                {"directory": str(tmp_path), "file": "j.cu", "command": "nvcc -Xcompiler=-fPIC -c j.cu"}]))
    builds, problems = load_builds(str(path), ("sm_90",))
    assert [b.source for b in builds] == [str(tmp_path / "j.cu")] and list(builds[0].flags) == ["-Xcompiler=-fPIC"]
    assert len(problems) == 1 and problems[0].startswith("entry 1 ('k.cu'): its ") and "\n" not in problems[0]


HARMLESS_HOST = st.sampled_from(["-fPIC", "-Wall", "-O2", "-DX=1", "-std=c++17", "-fopenmp", "-Wno-unused", "-g"])
RUNS_PROGRAM = st.builds(lambda prefix, rest: prefix + rest,
                         st.sampled_from(["-B", "-specs=", "--specs=", "-fplugin=", "-fpass-plugin=", "-wrapper",
                                          "-Xclang", "@", "--gcc-toolchain=", "-iplugindir="]),
                         st.text("abc./_", max_size=8))
HOST_FLAG = st.tuples(st.just(False), HARMLESS_HOST) | st.tuples(st.just(True), RUNS_PROGRAM)


@given(st.lists(st.tuples(HOST_FLAG, st.sampled_from(["-Xcompiler=", "--compiler-options="])), min_size=1, max_size=5))
def test_an_entry_is_refused_exactly_when_a_host_flag_runs_a_program(tmp_path_factory, host):
    flags = " ".join(f"{option}{flag}" for (_, flag), option in host)
    path = tmp_path_factory.mktemp("cc") / "compile_commands.json"
    path.write_text(json.dumps([{"directory": ".", "file": "k.cu", "command": f"nvcc {flags} -c k.cu"}]))
    builds, problems = load_builds(str(path), ("sm_90",))
    if any(runs for (runs, _), _ in host):
        assert builds == [] and len(problems) == 1 and "host compiler" in problems[0]
    else:
        assert len(builds) == 1 and problems == []


@pytest.mark.parametrize("flags", ["-I/dev -include zero", "-I /dev -include zero", "--include-path=/dev --pre-include=zero",
                                   "-isystem/dev -imacros zero", "-iquote /dev -include=zero"])
def test_a_forced_include_found_along_the_include_path_must_be_a_regular_file(tmp_path, flags):
    """`-I/dev -include zero` is /dev/zero to the preprocessor, as `-include /dev/zero` is: it read
    until --compile-memory stopped it (10 s and 4 GB on the build machine)."""
    path = tmp_path / "compile_commands.json"
    path.write_text(json.dumps([{"directory": str(tmp_path), "file": "k.cu", "command": f"nvcc {flags} -c k.cu"}]))
    builds, problems = load_builds(str(path), ("sm_90",))
    assert builds == [] and len(problems) == 1 and "'zero' is not a regular file" in problems[0]


@pytest.mark.parametrize("includes, defines, extra, option", [([""], [], [], "--include-dir"),
                                                               ([], ["1X=2"], [], "--define"),
                                                               ([], ["A B"], [], "--define"),
                                                               ([], [], [""], "--nvcc-flag")])
def test_build_flags_a_library_caller_gives_are_checked_as_the_command_line_is(includes, defines, extra, option):
    """source_flags refuses what would make nvcc read the next argument as a directory or define
    nothing: a script building BuildSettings is held to what --include-dir, --define and
    --nvcc-flag are held to."""
    from tuneadvise.advisor.toolchain.settings import source_flags
    from tuneadvise.specs.errors import InputError

    with pytest.raises(InputError) as raised:
        source_flags(includes, defines, extra)
    assert raised.value.as_option().startswith(option + ": ")


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for nvdisasm")
@pytest.mark.parametrize("script, error", [
    # Its own error, said of the cubin rather than of the temporary file it was written to.
    ('for last; do :; done\necho "nvdisasm fatal   : File $last does not appear to be an Elf file"\nexit 1\n',
     "nvdisasm failed: nvdisasm fatal   : File the cubin does not appear to be an Elf file"),
    ("sleep 60\n", "nvdisasm failed: stopped after 1 s"),
    ("yes 'nvdisasm: again'\n", "nvdisasm failed: printed more than 1 MiB and was stopped; it began: nvdisasm: again"),
    (f"exec '{sys.executable}' -c '{ABORT_PAST_MEMORY}'\n",
     "nvdisasm failed: exited with status -6 (each nvdisasm process may use 256 MiB)"),
])
def test_nvdisasm_failing_is_said_as_every_tool_failure_is(tmp_path, monkeypatch, script, error):
    """nvdisasm's failures go through tool_bounds.failure, the compiler's wording: past its time,
    its output or its memory, or its own error line."""
    from tuneadvise.advisor.toolchain import disassembler

    monkeypatch.setattr(disassembler, "TIMEOUT_S", 1)
    monkeypatch.setattr(disassembler, "MEMORY_MIB", 256)
    monkeypatch.setattr(disassembler, "MAX_LISTING", 1 << 20)
    fake = tmp_path / "nvdisasm"
    fake.write_text("#!/bin/sh\n" + script)
    fake.chmod(0o755)
    with pytest.raises(disassembler.DisassemblyError) as failed:
        disassembler.Disassembler(str(fake), "PATH").kernels(b"\x7fELF not a cubin")
    assert str(failed.value) == error
