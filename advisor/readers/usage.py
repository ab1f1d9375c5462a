"""Kernel resource usage from any file a build leaves behind, told apart by
content rather than by name: ptxas -v logs and cuobjdump listings (streamed
line by line), cubins, and fatbins inside .o, .so, executables or .fatbin
files. Text that does not parse is reported as (file, line, what was
expected); the rest of the file is still read.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...specs.files import MAX_CUBIN_BYTES, read_bounded_from
from ..text import clip
from .compiler_output import KernelUsage, parse_cuobjdump, parse_ptxas
from .cubin import ELF_MAGIC, CubinError, CubinKernel, read_cubin
from .fatbin import FATBIN_MAGIC, KIND_ELF, FatbinError, scan_fatbins

SOURCE_SUFFIXES = (".cu", ".cuh", ".cuda")
EM_CUDA = 190
NO_CUDA_CODE = "binary file with no CUDA fatbin or cubin in it"
_SNIFF_LINES = 400  # a build log may print other tools' lines before ptxas's

MAX_QUOTED_PATH = 120  # characters of a file's name a problem repeats (a name from a file can be of any length)
MAX_MESSAGE = 300  # characters of the message after it


@dataclass
class InputProblem:
    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        """One line of bounded length: the file and the message are outside text of any length."""
        where = clip(self.file, MAX_QUOTED_PATH)
        return f"{where}{f':{self.line}' if self.line else ''}: {clip(self.message, MAX_MESSAGE)}"


@dataclass
class ReadResult:
    records: list[KernelUsage] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    ptx_only: list[str] = field(default_factory=list)  # archs present only as PTX (JIT-compiled at load)


# Reads a cubin's machine code (lint/machine_code.py): the cubin's bytes and its kernels' records
# in, the records with what the machine code proves out (new records: they are immutable).
MachineCode = Callable[[bytes, list[KernelUsage]], list[KernelUsage]]


def cubin_records(data: bytes, file: str, source: str = "cubin",
                  machine_code: MachineCode | None = None) -> list[KernelUsage]:
    """The kernels of one cubin (CubinError when it is not one), handed to `machine_code` where given."""
    records = [from_cubin_kernel(k, file, source) for k in read_cubin(data)]
    if machine_code is not None and records:
        return machine_code(data, records)
    return records


def from_cubin_kernel(kernel: CubinKernel, file: str, source: str = "cubin") -> KernelUsage:
    return KernelUsage(name=kernel.name, arch=kernel.arch, registers=kernel.registers, shared_mem=kernel.shared_mem,
                       barriers=kernel.barriers, stack_frame=kernel.frame_bytes, source=source, file=file,
                       max_threads=kernel.max_threads)


def read_usage(path: str | Path, machine_code: MachineCode | None = None) -> ReadResult:
    """Every kernel record in one file, whatever kind of build output it is; the machine code
    of its cubins read by `machine_code` where given."""
    name = str(path)
    try:
        handle = open(path, "rb")
    except OSError as exc:
        return ReadResult(problems=[InputProblem(name, None, f"cannot read: {exc.strerror}")])
    with handle:
        return read_usage_opened(handle, name, machine_code)


HEAD_BYTES = 64  # what tells a binary from text: its magic, or a NUL early on


def is_binary(head: bytes) -> bool:
    """Whether a file whose first bytes are `head` is build output in binary form (an ELF object
    or cubin, a fatbin, anything with a NUL in its first HEAD_BYTES), not a text log or listing."""
    return head.startswith(ELF_MAGIC) or head.startswith(FATBIN_MAGIC) or b"\0" in head[:HEAD_BYTES]


def read_usage_opened(handle, name: str, machine_code: MachineCode | None = None) -> ReadResult:
    """read_usage on a binary stream opened at its start (a buffered reader: its head is peeked,
    not consumed), for a caller that opened the file once to tell what it is."""
    result = ReadResult()
    try:
        head = handle.peek(HEAD_BYTES)[:HEAD_BYTES]
    except OSError as exc:
        result.problems.append(InputProblem(name, None, f"cannot read: {exc.strerror}"))
        return result
    if head.startswith(ELF_MAGIC) and len(head) >= 20 and int.from_bytes(head[18:20], "little") == EM_CUDA:
        try:
            result.records += cubin_records(read_bounded_from(handle, MAX_CUBIN_BYTES, "cubin"), name,
                                            machine_code=machine_code)
        except CubinError as exc:
            result.problems.append(InputProblem(name, None, str(exc)))
        except OSError as exc:
            result.problems.append(InputProblem(name, None, f"cannot read: {exc.strerror}"))
        if not result.records and not result.problems:
            result.problems.append(InputProblem(name, None, "no kernel in this cubin"))
        return result
    if is_binary(head):
        return _read_binary(handle, name, result, machine_code)
    text = io.TextIOWrapper(handle, encoding="utf-8", errors="replace")
    try:
        return read_text(text, name, result)
    finally:
        text.detach()  # the caller's handle stays the caller's to close


def _read_binary(handle, name: str, result: ReadResult, machine_code: MachineCode | None) -> ReadResult:
    found = False
    try:
        for entry in scan_fatbins(handle):
            found = True
            if entry.kind != KIND_ELF:
                result.ptx_only.append(entry.arch)
                continue
            try:
                result.records += cubin_records(entry.payload, name, "fatbin", machine_code)
            except CubinError as exc:
                result.problems.append(InputProblem(name, None, f"{entry.arch} cubin in the fatbin: {exc}"))
    except FatbinError as exc:
        result.problems.append(InputProblem(name, None, str(exc)))
        return result
    except OSError as exc:  # a device or other file that cannot be mapped (/dev/zero)
        result.problems.append(InputProblem(name, None, f"cannot read: {exc.strerror}"))
        return result
    if not found:
        result.problems.append(InputProblem(name, None, NO_CUDA_CODE))
    elif not result.records and not result.problems:  # PTX alone: nothing to lint is not a pass
        result.problems.append(InputProblem(name, None, "no kernel to lint: its fatbins hold only PTX "
                                                        f"({', '.join(sorted(set(result.ptx_only)))}), no cubin"))
    # An arch with a cubin is not PTX-only, even if its PTX is embedded too.
    with_cubin = {r.arch for r in result.records}
    result.ptx_only = sorted(set(result.ptx_only) - with_cubin)
    return result


def read_text(handle, name: str, result: ReadResult | None = None) -> ReadResult:
    """A ptxas log or cuobjdump listing from an open text stream (a file or stdin)."""
    result = result if result is not None else ReadResult()
    problems: list[tuple[int, str]] = []
    head = list(itertools.islice(handle, _SNIFF_LINES))
    kind = _text_kind(head)
    if kind is None:
        result.problems.append(InputProblem(name, None, "expected nvcc -Xptxas -v output or "
                                                        "cuobjdump --dump-resource-usage output"))
        return result
    lines = itertools.chain(head, handle)
    parser = parse_ptxas(lines, problems, name) if kind == "ptxas" else parse_cuobjdump(lines, problems=problems,
                                                                                        file=name)
    before = len(result.records)
    result.records.extend(parser)
    found = len(result.records) - before
    result.problems += [InputProblem(name, number, message) for number, message in problems]
    if not found and not problems:  # a log of a build that compiled no kernel: nothing was checked
        result.problems.append(InputProblem(name, None, f"no kernel in this {_KIND_NAMES[kind]}"))
    return result


_KIND_NAMES = {"ptxas": "ptxas -v output", "cuobjdump": "cuobjdump --dump-resource-usage listing"}


def _text_kind(lines: list[str]) -> str | None:
    for line in lines:
        if "ptxas" in line and ("Compiling entry function" in line or "Used" in line):
            return "ptxas"
        if line.startswith("Resource usage:") or line.startswith("Fatbin elf code:") or line.startswith("arch = sm_"):
            return "cuobjdump"
    return None
