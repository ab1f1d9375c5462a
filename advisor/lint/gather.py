"""lint's first stage: every input read into kernel records (KernelUsage), each
input file opened and sniffed once. Build output (ptxas logs, cuobjdump listings,
cubins, fatbins in .o/.so/executables) goes to advisor/readers/usage.py, kernel
caches (Triton, TorchInductor, CuPy) to advisor/readers/kernel_caches.py,
Nsight Compute exports to advisor/lint/profiled.py (one record per profiled
launch, its measured figures attached), CUDA sources to the source index and,
with no build output beside them, through NVIDIA's compiler (with the
compile_commands entries). Analysis (advisor/lint/run.py) takes the records
from here; nothing here analyses.

    >>> from tuneadvise.advisor.lint.gather import gather
    >>> from tuneadvise.advisor.lint.records import LintOptions
    >>> gathered = gather(["tests/fixtures/lint/ptxas_sm_90.log"], LintOptions(machine_code=False))
    >>> sorted({record.source for record in gathered.read.records})
    ['ptxas']
"""

from __future__ import annotations

import itertools
import os
import stat
from typing import NamedTuple

from ..readers.ncu import SNIFF_BYTES
from ..readers.source_index import SourceIndex
from ..readers.usage import SOURCE_SUFFIXES, InputProblem, ReadResult, read_text, read_usage_opened
from ..toolchain.settings import BuildSettings, BuildSetupError, with_line_info
from .host_launches import HostCode
from .paths import shown_path
from .profiled import is_profile, read_profile, read_profile_lines
from .records import LintOptions

COMPILED_SUFFIXES = (".cu", ".cuda")  # sources lint compiles when no build output is given (.cuh: included only)
HOST_LAUNCHES_VARIABLE = "TUNEADVISE_HOST_LAUNCHES"  # "off": compile without reading the host code's launches


def read_file(path: str, machine_code=None) -> ReadResult:
    """The kernel records of one input file, whatever it holds (a profile, build output), from
    one open: its head is peeked to tell what it is, then the same stream is read."""
    result = ReadResult()
    try:
        handle = open(path, "rb", buffering=SNIFF_BYTES)
    except OSError as exc:
        result.problems.append(InputProblem(path, None, f"cannot read: {exc.strerror}"))
        return result
    with handle:
        try:
            head = handle.peek(SNIFF_BYTES)[:SNIFF_BYTES]
        except OSError as exc:
            result.problems.append(InputProblem(path, None, f"cannot read: {exc.strerror}"))
            return result
        # A device is read as what it holds, never as an export for its name: `x.csv` linked to
        # /dev/zero read as one would be streamed without end.
        if is_profile(head, "" if _is_device(handle) else path):
            read_profile(handle, path, result)
            return result
        return read_usage_opened(handle, path, machine_code)


def _is_device(handle) -> bool:
    mode = os.fstat(handle.fileno()).st_mode
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


class Gathered(NamedTuple):
    """What lint reads from its inputs: the kernel records (and the inputs' problems), the source
    index and the CUDA sources read."""

    read: ReadResult
    index: SourceIndex
    sources: list[SourceText]
    compiled: tuple | None = None  # (the Compiler, {(source as shown, arch): its Build}) where lint compiled
    # Warnings: a sentence per cubin whose machine code nvdisasm could not read, per launch in host code
    # set at run time of a kernel checked at its other launches, and where host code was not read.
    unread: list | tuple = ()


def gather(paths, options: LintOptions, stdin=None, build: BuildSettings | None = None) -> Gathered:
    """Read (and, for CUDA sources with no build output, compile) lint's inputs into records:
    profiled launches among them, each with its measured figures. Raises
    toolchain.discovery.ToolchainMissing when there is something to compile and no compiler,
    BuildSetupError when no architecture is named, readers.ncu.NcuMissing for a saved
    Nsight Compute report with no ncu to convert it."""
    from ..readers.kernel_caches import read_directory
    from .machine_code import machine_code_reader

    paths = [str(path) for path in paths]
    build_output = any(path == "-" or not path.lower().endswith(SOURCE_SUFFIXES) for path in paths)
    compile_sources = [] if build_output else [p for p in paths if p.lower().endswith(COMPILED_SUFFIXES)]
    if compile_sources and not options.target_archs:  # before reading anything
        raise BuildSetupError("--arch: needed to compile CUDA sources; name the targets (sm_80, sm_90, ...)")
    machine_code = machine_code_reader(options.machine_code, cache=build is None or build.cache)
    gathered = Gathered(ReadResult(), SourceIndex(), [], None,
                        machine_code.unread if machine_code is not None else ())
    read = gathered.read
    for path in paths:
        if path == "-":
            _read_stdin(stdin, read)
        elif path.lower().endswith(SOURCE_SUFFIXES):
            _read_source(path, read, gathered.index, gathered.sources, compiled=path in compile_sources)
        else:
            one = read_directory(path, machine_code) if os.path.isdir(path) else read_file(path, machine_code)
            read.records += one.records
            read.problems += one.problems
            read.ptx_only += [f"{path}: {arch}" for arch in one.ptx_only]
    read.records = launches_apart(read.records)
    readable = {source.path for source in gathered.sources}
    compile_sources = [path for path in compile_sources if path in readable]
    if compile_sources or (build is not None and build.compile_commands):
        compiler, built, notes = _compile_into(compile_sources, options, build or BuildSettings(), read,
                                               gathered.index, gathered.sources, machine_code)
        return gathered._replace(compiled=(compiler, built), unread=[*gathered.unread, *notes])
    return gathered


def _read_stdin(stdin, read: ReadResult) -> None:
    """Standard input: an Nsight Compute export by its first lines, else a ptxas log or cuobjdump
    listing (a text stream: sniffed on the lines, which are then read on)."""
    head, size = [], 0
    for line in stdin:
        head.append(line)
        size += len(line)
        if size >= SNIFF_BYTES:
            break
    lines = itertools.chain(head, stdin)
    if is_profile("".join(head).encode("utf-8", "replace")):
        read_profile_lines(lines, "<stdin>", read)
    else:
        read_text(lines, "<stdin>", read)


def launches_apart(records: list) -> list:
    """The records, with the file named in the variant of a profiled launch whose kernel,
    architecture and launch index occur in more than one export, and its line where they occur
    twice in one file (two exports appended into one: ncu numbers each run's launches from 0):
    each is its own launch, never reconciled with another run's, never one dropped for the other."""
    files: dict[tuple, dict[str, set]] = {}  # the lines each file holds the launch at (a file given twice: once)
    for record in records:
        if record.measured is not None:
            files.setdefault((record.name, record.arch, record.variant), {}).setdefault(record.file, set()).add(record.line)
    if all(len(per_file) == 1 and all(len(lines) == 1 for lines in per_file.values()) for per_file in files.values()):
        return records
    return [_apart(r, files[(r.name, r.arch, r.variant)]) if r.measured is not None else r for r in records]


def _apart(record, per_file: dict[str, set]):
    from dataclasses import replace

    from ..readers.kernel_caches import named_apart

    if len(per_file[record.file]) > 1:
        record = replace(record, variant=f"{record.variant}; line {record.line}")
    return named_apart(record) if len(per_file) > 1 else record


def _read_source(path: str, gathered, index: SourceIndex, source_texts: list, compiled: bool = False) -> bool:
    """Read a source into the index; False (and a problem) when it cannot be read, or compiled."""
    from ...specs.files import MAX_SOURCE_BYTES, read_bounded, read_source_to_compile
    from ..readers.cuda_source import strip_comments

    try:
        read = read_source_to_compile if compiled else read_bounded
        text = read(path, MAX_SOURCE_BYTES).decode("utf-8", errors="replace")
    except OSError as exc:
        gathered.problems.append(InputProblem(path, None, f"cannot read: {exc.strerror}"))
        return False
    source = SourceText(path, strip_comments(text), "__syncwarp" in text)  # tokenized once: index and source rules
    index.add_lines(path, source.lines)
    source_texts.append(source)
    return True


class SourceText(NamedTuple):
    """A CUDA source read for lint: its lines as strip_comments gives them, read by the source
    index and the source rules alike."""

    path: str
    lines: list[tuple[str, str]]
    has_syncwarp: bool


def _compile_into(sources, options: LintOptions, settings: BuildSettings, gathered, index, source_texts,
                  machine_code=None):
    """Compile `sources` (and the compile commands' entries) for each architecture, with line
    info (-lineinfo: machine code by source line; ptxas emits the same code); add what ptxas
    reports to `gathered` (with each build's machine code where `machine_code` is given), and
    each compile-commands source to the index. Returns the compiler and {(source as shown, arch):
    its Build} of the builds that succeeded, and the run's sentences about the host code's
    launches (lint/host_launches.HostCode)."""
    from ..toolchain.compile import Build, Compiler
    from ..toolchain.compile_commands import CompileCommandsError, load_builds
    from ..toolchain.discovery import find_toolchain

    archs = options.target_archs
    builds = []
    if sources:
        builds += [Build(os.path.abspath(path), arch, with_line_info(settings.flags), settings.max_registers)
                   for path in sources for arch in archs]
    if settings.compile_commands:
        try:
            entries, problems = load_builds(settings.compile_commands, archs)
        except CompileCommandsError as exc:
            raise BuildSetupError(str(exc)) from None
        gathered.problems += [InputProblem(settings.compile_commands, None, p) for p in problems]
        known = {os.path.abspath(source.path) for source in source_texts}
        unreadable = {source for source in dict.fromkeys(b.source for b in entries)
                      if source not in known and not _read_source(shown_path(source), gathered, index, source_texts,
                                                                  compiled=True)}
        # The command line's flags come after the entry's: its -maxrregcount, like theirs, wins.
        builds += [b._replace(flags=with_line_info(b.flags + settings.flags),
                              max_registers=b.max_registers if settings.max_registers is None else settings.max_registers)
                   for b in entries if b.source not in unreadable]
    host = HostCode(shown_path, enabled=os.environ.get(HOST_LAUNCHES_VARIABLE, "").lower() != "off")
    builds += host.builds(builds)
    shown = {os.path.abspath(path): path for path in sources}  # name sources as the user did
    compiler, built = Compiler(find_toolchain(), settings, keep_cubins=machine_code is not None), {}
    for result in compiler.run(builds):
        build = result.build
        where = shown.get(build.source) or shown_path(build.source)
        if host.took(result, where):
            continue
        if result.error is not None:
            gathered.problems.append(InputProblem(where, None, f"{build.arch}: the compiler failed: {result.error}"))
            host.rejected.add(where)  # said once, by the device build: its host half says nothing more
            continue
        built[(where, build.arch)] = build
        records = result.usage(where)  # each record carries its build's -maxrregcount
        if machine_code is not None and result.cubin is not None and records:
            records = machine_code(result.cubin, records)
        host.add(where, records)
    records, notes = host.joined()
    gathered.records += records
    return compiler, built, notes
