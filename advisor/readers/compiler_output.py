"""Streaming parsers for real compiler output: `nvcc -Xptxas -v` logs and
`cuobjdump --dump-resource-usage` listings. Both yield one record per kernel
and architecture as lines arrive, so large logs are never held whole.

Formats as CUDA 13.0 prints them (tests/fixtures/lint holds real logs for
sm_75 to sm_120); older toolkits add `bytes cmem[N]` and omit `used N
barriers`, which both parsers accept.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, fields

# Linear-time patterns: a number is matched from its first digit only ((?<!\d)) and has at
# most _DIGITS digits, a field name from its first letter only, so no pattern retries inside a
# long run of digits or letters; and no line longer than MAX_LINE is searched at all.
MAX_LINE = 4096  # characters; real lines are under 300 (a mangled name of 2,000 is extreme)
_DIGITS = r"(?<!\d)(\d{1,18})(?!\d)"  # 18 digits: anything longer is a corrupt figure, reported as such
_COMPILING = re.compile(r"Compiling entry function '([^']{1,2048})' for '(sm_\w{1,16})'")
_PROPERTIES = re.compile(rf"{_DIGITS} bytes stack frame, {_DIGITS} bytes spill stores, {_DIGITS} bytes spill loads")
_USED = re.compile(rf"Used {_DIGITS} registers")
_BARRIERS = re.compile(rf"used {_DIGITS} barriers")
_SMEM = re.compile(rf"{_DIGITS} bytes smem")

_CUOBJ_ARCH = re.compile(r"^arch = (sm_\w{1,16})")
_CUOBJ_FUNCTION = re.compile(r"^\s*Function ([^:]+):\s*$")
_CUOBJ_FIELDS = re.compile(r"(?<![A-Z])([A-Z]{1,16}(?:\[\d{1,4}\])?):" + _DIGITS)
_TOO_LONG = f"line longer than {MAX_LINE} characters: not compiler output"


@dataclass(frozen=True, slots=True)  # slots: a large log makes tens of thousands of these
class KernelUsage:
    """One kernel on one architecture, as a compiler tool reported it: immutable from the reader
    to the report (a layer that learns more makes a new record with dataclasses.replace).

    A reader that knows more of a kernel (disassembly, measurements) adds an optional field here,
    defaulting to None, and nothing else: lint's reconciliation carries every field through (a
    field the winning source lacks comes from the next source that has it), its rules read the
    field in LintContext.reader_figures, and kernels share an analysis only when those agree."""

    name: str  # as written (mangled for C++)
    arch: str  # "sm_90"
    registers: int
    shared_mem: int  # static, excluding the reserved per-block shared memory
    barriers: int | None = None
    stack_frame: int | None = None
    spill_stores: int | None = None
    spill_loads: int | None = None
    source: str = ""  # "ptxas", "cuobjdump", "cubin", "config"
    line: int | None = None  # where the record ends in its file (for annotations)
    file: str = ""
    max_threads: int | None = None  # __launch_bounds__, where the binary records it
    max_registers: int | None = None  # the -maxrregcount the build used, where known (a build tuneadvise ran)
    # A kernel cache entry (advisor/readers/kernel_caches.py): the configuration it was compiled with, which keeps
    # variants of one kernel apart, and the launch its framework makes, as LaunchConfig keys.
    variant: str | None = None
    framework: str | None = None  # the framework whose cache held it ("triton"), where one did
    launch: tuple[tuple[str, object], ...] | None = None
    # The launches of the kernel its source's host code makes (readers/host_launches.HostLaunch): the one
    # this record is checked at, or, where none has a compile-time block, those that set it at run time.
    host_launches: tuple | None = None
    # What the kernel's machine code proves (readers/sass.py), where it was disassembled; and whose
    # the spill figures are: "ptxas" (its report), "sass" (the spill-annotated instructions), "config".
    sass: object | None = None
    spills_from: str | None = None
    # A profiled launch (advisor/measured.py's Measured, from an Nsight Compute export): the engine's
    # figures beside the report's. Such a record is analysed on its own, as its launch ran.
    measured: object | None = None

    @property
    def spill_origin(self) -> str | None:
        """Whose the spill figures are: "ptxas", "sass", "config"; None where there are none."""
        if self.spill_stores is None:
            return None
        return self.spills_from or self.source

    def reader_figures(self) -> tuple[tuple[str, object], ...]:
        """(field, value) of each optional field a reader added beyond BUILD_FIELDS and set:
        what lint hands its rules (LintContext.reader_figures) and keys its shared analyses by."""
        return tuple((name, getattr(self, name)) for name in _READER_FIELDS if getattr(self, name) is not None)

    @property
    def spill_bytes(self) -> int | None:
        if self.spill_stores is None:
            return None
        return self.spill_stores + (self.spill_loads or 0)


# The fields every reader of build output fills or leaves None: lint turns them into the kernel's
# LaunchConfig, location and variant. A field added after them is a reader's own (reader_figures).
BUILD_FIELDS = ("name", "arch", "registers", "shared_mem", "barriers", "stack_frame", "spill_stores", "spill_loads",
                "source", "line", "file", "max_threads", "max_registers", "variant", "launch", "host_launches")
# `measured` is not among them: the TA0xx rules read a profiled launch through MeasuredContext.
_READER_FIELDS = tuple(f.name for f in fields(KernelUsage) if f.name not in BUILD_FIELDS + ("measured",))

# A kernel's report ends with its 'Used N registers' line; a log cut or interleaved before it
# (a build killed mid-way, two builds writing one file) leaves that kernel unread, which is said.
_UNFINISHED = "kernel '{}' has no 'Used N registers' line: the log ends or moves on before its report does"
_PTXAS_USED_LINE = re.compile(r"ptxas\s+info\s*:\s*Used\b")


# The clauses ptxas prints after 'Used N registers' (CUDA 13 and older toolkits), digits as N.
_USED_CLAUSES = ("used N barriers", "N bytes smem", "N bytes cmem[N]", "N bytes cumulative stack size")
_NUMBER = re.compile(r"\d{1,18}")


def _cut_clause(rest: str) -> bool:
    """Whether the text after 'Used N registers' ends inside one of its clauses ("used 4 barrie",
    a trailing comma): a line cut there, not a line of another format. A cut between two whole
    clauses cannot be told from an older toolkit's shorter line."""
    clauses = rest.rstrip("\r\n").split(",")[1:]
    for clause in clauses:
        said = _NUMBER.sub("N", clause.strip())
        if any(template.startswith(said) and template != said for template in _USED_CLAUSES):
            return True
    return False


def note_problem(problems, number: int, message: str) -> None:
    """Add (line number, message) to `problems`, where the caller keeps them (None: it does not)."""
    if problems is not None:
        problems.append((number, message))


def parse_ptxas(lines, problems: list | None = None, file: str = "") -> Iterator[KernelUsage]:
    """`ptxas info` lines -> KernelUsage, one per 'Used N registers' line.

    Lines that look like ptxas's but do not parse are appended to `problems`
    as (line number, what was expected); the rest of the log is still read.
    `file`: the name the records give as theirs.
    """
    name = arch = None
    pending = 0  # the line of the kernel being read
    archs: dict[str, str] = {}  # one string per architecture, not one per record
    props: tuple | None = None
    for number, line in enumerate(lines, 1):
        if "ptxas" not in line and "bytes stack frame" not in line:
            continue
        if len(line) > MAX_LINE:
            note_problem(problems, number, _TOO_LONG)
            name = None
            continue
        # Substring tests pick the one pattern a line can match (each pattern
        # contains its test's words), so most lines cost no regex at all.
        if "Compiling entry function" in line:
            if name is not None:
                note_problem(problems, pending, _UNFINISHED.format(name[:200]))
            match = _COMPILING.search(line)
            pending = number
            if match:
                name, arch, props = match.group(1), archs.setdefault(match.group(2), match.group(2)), None
            else:
                note_problem(problems, number, "expected \"Compiling entry function 'NAME' for 'sm_XX'\"")
                name = None
        elif "bytes stack frame" in line:
            match = _PROPERTIES.search(line)
            if match:
                props = tuple(map(int, match.groups()))
            else:
                note_problem(problems, number, "expected 'N bytes stack frame, N bytes spill stores, N bytes spill loads'")
        elif "Used" in line:
            match = _USED.search(line)
            if match is None:
                if _PTXAS_USED_LINE.search(line):
                    note_problem(problems, number, "expected 'Used N registers'")
                    name = None  # said once, here
            elif name is not None:
                smem = _SMEM.search(line) if "smem" in line else None
                barriers = _BARRIERS.search(line) if "barriers" in line else None
                if ("bytes smem" in line and smem is None) or (" barriers" in line and barriers is None) \
                        or _cut_clause(line[match.end():]):
                    note_problem(problems, number, "expected 'Used N registers, used N barriers, N bytes smem'")
                    name = None
                    continue
                stack, stores, loads = props or (None, None, None)
                # Positional, in field order: a large log has tens of thousands of these.
                yield KernelUsage(name, arch, int(match.group(1)), int(smem.group(1)) if smem else 0,
                                  int(barriers.group(1)) if barriers else None, stack, stores, loads, "ptxas", number,
                                  file)
                name = None
    if name is not None:
        note_problem(problems, pending, _UNFINISHED.format(name[:200]))


def parse_cuobjdump(lines, arch: str | None = None, reserved_shared_mem=None,
                    problems: list | None = None, file: str = "") -> Iterator[KernelUsage]:
    """`cuobjdump --dump-resource-usage` -> KernelUsage.

    From sm_90 on (CUDA 13 verified on sm_90, sm_100, sm_120) the SHARED
    figure includes the per-block reserved shared memory; on sm_75 to sm_89 it
    does not. `reserved_shared_mem(arch)` gives the amount to subtract; by
    default the spec's reserved_shared_mem_per_block from sm_90 on. The driver's static figure for the
    same kernels, recorded on an H100, excludes it.
    """
    reserved_shared_mem = reserved_shared_mem or cuobjdump_reserved
    name = None
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_LINE:
            if "REG:" in line or "Function" in line:
                note_problem(problems, number, _TOO_LONG)
            name = None
            continue
        match = _CUOBJ_ARCH.match(line)
        if match:
            arch = match.group(1)
            continue
        match = _CUOBJ_FUNCTION.match(line)
        if match:
            name = match.group(1).strip()
            continue
        if name is not None and "REG:" in line:
            fields = dict(_CUOBJ_FIELDS.findall(line))
            if "REG" not in fields or "SHARED" not in fields:
                note_problem(problems, number, "expected 'REG:N STACK:N SHARED:N ...'")
                name = None
                continue
            shared = int(fields.get("SHARED", 0))
            yield KernelUsage(
                name=name, arch=arch or "unknown", registers=int(fields.get("REG", 0)),
                shared_mem=max(0, shared - reserved_shared_mem(arch)),
                stack_frame=int(fields["STACK"]) if "STACK" in fields else None,
                source="cuobjdump", line=number, file=file,
            )
            name = None


def _target(arch: str | None):
    """The spec's Arch for a target such as 'sm_90'; None for none or one the spec does not know."""
    from ...specs.names import UnknownArchError
    from ...specs.resolve import resolve_arch

    if not arch:
        return None
    try:
        return resolve_arch(arch)
    except UnknownArchError:
        return None


def spec_reserved_shared_mem(arch: str | None) -> int:
    """The spec's reserved shared memory per block for a target such as 'sm_90'
    (0 for a target the spec does not know, so nothing is subtracted)."""
    target = _target(arch)
    return target.reserved_shared_mem_per_block if target is not None else 0


def cuobjdump_reserved(arch: str | None) -> int:
    """What cuobjdump's SHARED figure adds to the static shared memory on `arch` (0 for a target
    the spec does not know)."""
    target = _target(arch)
    if target is None or not target.cuobjdump_shared_includes_reserved:
        return 0
    return target.reserved_shared_mem_per_block
