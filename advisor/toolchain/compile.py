"""Run NVIDIA's compiler with its resource report (`-Xptxas -v`) and read what it says.

A `Build` is one source for one architecture with its flags and, for the register
frontier, a `-maxrregcount` cap. `Compiler.run(builds)` compiles them in a bounded
thread pool (each build is its own nvcc or ptxas process; the threads only wait),
each distinct build once per Compiler (the cache is local to it, keyed by the
build's values), and returns one `BuildResult` per build: the log, or one line
saying why the compiler failed.

A CUDA source (.cu) goes through nvcc, which passes the cap to both of its
stages (cicc and ptxas), exactly as `nvcc -maxrregcount=N` does; a PTX file goes
straight to ptxas.

Each compiler run is bounded (BuildSettings.timeout_s and memory_mib, and
MAX_COMPILER_OUTPUT) by processes.py, as is the `nvcc -M` the report cache runs.
"""

from __future__ import annotations

import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import NamedTuple

from ...specs.files import read_bounded
from ..readers.compiler_output import MAX_LINE, KernelUsage, parse_ptxas
from ..tool_bounds import failure, output_lines
from .discovery import Toolchain
from .host_code import LAUNCHES_KEY, compile_host, launches_from_json, launches_json
from .processes import RunningCompilers, run_limited
from .settings import BuildSettings

PTX_SUFFIX = ".ptx"
CUBIN_KEY = "-cubin"  # the cache entry of a build's cubin: its report's key and this
DEFAULT_SETTINGS = BuildSettings()
MAX_KEPT_CUBIN = 64 << 20  # bytes of a compiled cubin kept for its machine code; larger ones are not read
# What a compiler may print before its build is stopped. ptxas's report is a few hundred bytes a
# kernel; nvcc repeats the whole source line in every diagnostic, so a long line with many
# warnings prints quadratically (a 200 KB line of repeated `volatile`: 22,000 warnings, 5 GB).
MAX_COMPILER_OUTPUT = 32 << 20
COMPILER_BOUNDS = ("--compile-timeout", "--compile-memory")  # the options that raise a compiler run's bounds


class Build(NamedTuple):
    source: str  # a .cu (through nvcc) or .ptx (through ptxas) file
    arch: str  # "sm_90"
    flags: tuple[str, ...] = ()  # -I, -D and free nvcc flags
    max_registers: int | None = None  # -maxrregcount (the flags' own, split_maxrregcount, or a frontier cap); None: uncapped
    cwd: str | None = None  # where relative paths in the flags start (compile_commands' directory)
    host: bool = False  # the host half instead (host_code.py: the launches its host code makes), beside the device build

    @property
    def is_ptx(self) -> bool:
        return self.source.lower().endswith(PTX_SUFFIX)


class BuildResult(NamedTuple):
    build: Build
    log: str  # ptxas's resource report: the lines of the compiler's log that parse_ptxas reads
    error: str | None  # one line when the compiler failed
    cubin: bytes | None = None  # the machine code, where the Compiler keeps it (keep_cubins)
    launches: tuple | None = None  # a host build's launches (readers/host_launches.HostLaunch); None: not read
    host_problem: str | None = None  # why a host build's launches were not read

    def usage(self, file: str | None = None) -> list[KernelUsage]:
        """The kernels ptxas reported, each named by its source (`file`: as the user named it; else
        the build's path) and carrying the build's -maxrregcount. No line: the log is not a file."""
        if self.error is not None:
            return []
        where = self.build.source if file is None else file
        return [replace(record, line=None, max_registers=self.build.max_registers)
                for record in parse_ptxas(self.log.splitlines(), file=where)]


def command(toolchain: Toolchain, build: Build, output: str) -> list[str]:
    """The compiler command line for `build`, writing the cubin to `output`."""
    if build.is_ptx:
        cap = ["--maxrregcount", str(build.max_registers)] if build.max_registers is not None else []
        return [toolchain.ptxas, f"-arch={build.arch}", "-v", *cap, *build.flags, build.source, "-o", output]
    cap = [f"-maxrregcount={build.max_registers}"] if build.max_registers is not None else []
    return [toolchain.nvcc, "-cubin", f"-arch={build.arch}", *build.flags, *cap, "-Xptxas", "-v",
            build.source, "-o", output]


def compile_one(toolchain: Toolchain, build: Build, settings: BuildSettings = DEFAULT_SETTINGS,
                running: RunningCompilers | None = None, keep_cubin: bool = False) -> BuildResult:
    """One build: ptxas's report lines from the compiler's output (stdout and stderr as one), or one
    line saying why it failed (an error, past --compile-timeout or --compile-memory, more than
    MAX_COMPILER_OUTPUT printed, or no cubin written); and the cubin with `keep_cubin`."""
    running = running or RunningCompilers()
    if build.host:
        launches, problem = compile_host(toolchain, build, lambda argv, limit=MAX_COMPILER_OUTPUT: _step(
            argv, build, settings, running, limit))
        return BuildResult(build, "", None, None, launches, problem)
    with tempfile.TemporaryDirectory(prefix="tuneadvise-") as scratch:
        cubin = os.path.join(scratch, "out.cubin")
        argv = command(toolchain, build, cubin)
        try:
            done = run_limited(argv, build.cwd, timeout_s=settings.timeout_s, memory_mib=settings.memory_mib,
                               output_limit=MAX_COMPILER_OUTPUT, running=running)
        except OSError as exc:
            return BuildResult(build, "", f"cannot run {argv[0]}: {exc.strerror or exc}")
        wrote = os.path.isfile(cubin)
        machine_code = _read_cubin(cubin) if keep_cubin and wrote and done.returncode == 0 else None
    problem = _failure(done, settings, MAX_COMPILER_OUTPUT)
    if problem is not None:
        return BuildResult(build, "", problem)  # the error line is all a failed build is read for
    output = done.output
    if not wrote:  # every compile writes a cubin, a source without kernels too; --dryrun or --version do not
        return BuildResult(build, "", "exited without compiling (no cubin written: a flag such as --dryrun "
                                      "or --version in the build's flags?)")
    return BuildResult(build, report_lines(output_lines(output)), None, machine_code)


def _step(argv: list[str], build: Build, settings: BuildSettings, running: RunningCompilers,
          output_limit: int) -> tuple[list[str] | None, str | None]:
    """One command of a build, run within the build's bounds: (its output lines, None), or (None,
    one line saying why it failed)."""
    try:
        done = run_limited(argv, build.cwd, timeout_s=settings.timeout_s, memory_mib=settings.memory_mib,
                           output_limit=output_limit, running=running)
    except OSError as exc:
        return None, f"cannot run {argv[0]}: {exc.strerror or exc}"
    problem = _failure(done, settings, output_limit)
    if problem is not None:
        return None, problem
    return list(output_lines(done.output)), None


def _failure(done, settings: BuildSettings, output_limit: int) -> str | None:
    """tool_bounds.failure of a compiler command, naming the options that raise its bounds."""
    return failure(done, "compiler", settings.timeout_s, settings.memory_mib, output_limit, COMPILER_BOUNDS)


def _read_cubin(path: str) -> bytes | None:
    try:
        return read_bounded(path, MAX_KEPT_CUBIN, "cubin kept for its machine code")
    except OSError:  # unreadable, or larger than MAX_KEPT_CUBIN
        return None


def report_lines(lines) -> str:
    """The lines of ptxas's resource report among a compiler's output lines, all that parse_ptxas
    reads: a build's log is kept (and cached) for its report, and the rest can be megabytes (nvcc
    prints the source line again with each warning, so a long line that warns often prints it
    thousands of times, for every architecture's build)."""
    kept = []
    for line in lines:
        if len(line) > MAX_LINE:
            continue  # longer than parse_ptxas reads
        if line.startswith("ptxas") or ("bytes stack frame" in line and line[:1].isspace()
                                        and line.lstrip()[:1].isdigit()):
            kept.append(line)
    return "\n".join(kept) + "\n" if kept else ""


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class Compiler:
    """Compiles builds in a pool of at most `settings.jobs` processes at a time, each distinct build
    once, each within the settings' time and memory; with `settings.cache` (the default), reports
    of unchanged builds come from the disk cache (cache.py)."""

    def __init__(self, toolchain: Toolchain, settings: BuildSettings = DEFAULT_SETTINGS, keep_cubins: bool = False):
        from .report_cache import PtxasCache, default_directory

        self.toolchain = toolchain
        self.settings = settings
        self.keep_cubins = keep_cubins  # each result's cubin too (for its machine code), cached beside the report
        self.jobs = max(1, settings.jobs or default_jobs())
        directory = default_directory() if settings.cache else None
        self.running = RunningCompilers()
        self.cache = PtxasCache(directory, toolchain, settings, self.running) if directory is not None else None
        self.results: dict[Build, BuildResult] = {}  # this compiler's builds, by value

    def _one(self, build: Build) -> BuildResult:
        key = self.cache.key(build) if self.cache is not None else None
        cached = self._cached(build, key) if key is not None else None
        if cached is not None:
            return cached
        result = compile_one(self.toolchain, build, self.settings, self.running, self.keep_cubins)
        # Stored only if what the build reads did not change while it compiled.
        if key is not None and result.error is None and self.cache.key(build) == key:
            if build.host:  # a host build's launches are its whole result
                if result.launches is not None:
                    self.cache.put(key + LAUNCHES_KEY, launches_json(result.launches))
                return result
            self.cache.put(key, result.log)
            if result.cubin is not None:
                self.cache.put_bytes(key + CUBIN_KEY, result.cubin)
        return result

    def _cached(self, build: Build, key: str) -> BuildResult | None:
        if build.host:
            text = self.cache.get(key + LAUNCHES_KEY)
            launches = launches_from_json(text) if text is not None else None
            return BuildResult(build, "", None, None, launches) if launches is not None else None
        log = self.cache.get(key)
        cubin = self.cache.get_bytes(key + CUBIN_KEY) if log is not None and self.keep_cubins else None
        if log is not None and (cubin is not None or not self.keep_cubins):
            return BuildResult(build, log, None, cubin)
        return None

    def run(self, builds) -> list[BuildResult]:
        builds = list(builds)
        todo = [b for b in dict.fromkeys(builds) if b not in self.results]
        if todo:
            workers = min(self.jobs, len(todo))
            if workers == 1:
                done = [self._one(b) for b in todo]
            else:
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    try:
                        done = list(pool.map(self._one, todo))
                    except BaseException:  # Ctrl-C: the waiting builds never start, the running ones die
                        pool.shutdown(wait=False, cancel_futures=True)
                        self.running.kill_all()
                        raise
            for result in done:
                self.results[result.build] = result
        return [self.results[b] for b in builds]
