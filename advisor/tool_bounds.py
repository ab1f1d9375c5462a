"""The bounds one of NVIDIA's tools runs under, and the one way its failure is said: its address
space (and its children's) capped (`limited`), and one line saying why a bounded run failed
(`failure`): past its time, past its output, or its own error, past its memory where its exit
says so. The toolchain's runs (toolchain/processes.py: the compiles, `nvcc -M`, nvdisasm) and
the Nsight Compute reader's `ncu --import` (readers/ncu.py) share them.

On POSIX the address space is capped with `ulimit -v` through /bin/sh, which every process the
tool starts inherits; a `preexec_fn` would do the same but is unsafe with the thread pool.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import NamedTuple

from .text import clip

MAX_ERROR_LINE = 300  # characters of a tool's own words a failure repeats
MAX_DECODED_LINE = 1 << 16  # bytes of an output line read: past MAX_LINE (parse_ptxas) and MAX_ERROR_LINE
# How a tool reports an allocation refused under its memory bound (cicc segfaults on some).
_MEMORY_SIGNS = ("out of memory", "bad_alloc", "cannot allocate memory", "segmentation fault")


class Finished(NamedTuple):
    """How a bounded run ended."""

    returncode: int | None  # None: stopped at the time limit
    output: bytearray  # stdout and stderr together, at most the output limit
    overflowed: bool  # printed more than the output limit, and was stopped

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def limited(argv: list[str], memory_mib: int | None) -> list[str]:
    """`argv` started with its address space (and its children's) capped at `memory_mib`."""
    if memory_mib is None or os.name != "posix" or not os.path.exists("/bin/sh"):
        return argv
    return ["/bin/sh", "-c", 'ulimit -v "$0" && exec "$@"', str(_within_hard_limit(memory_mib * 1024)), *argv]


def _within_hard_limit(kib: int) -> int:
    """`kib`, or the hard limit this process runs under when that is lower: only a privileged
    process may raise it, so asking for more failed every build of everyone else (`ulimit: error
    setting limit (Operation not permitted)`) wherever the hard limit is below --compile-memory."""
    try:
        import resource

        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    except (ImportError, OSError, ValueError):
        return kib
    return kib if hard == resource.RLIM_INFINITY or hard < 0 else min(kib, hard // 1024)


def failure(done: Finished, tool: str, timeout_s: float, memory_mib: int | None, output_limit: int,
            raised_by: tuple[str, str] = ("", "")) -> str | None:
    """One line saying why a tool's bounded run failed, the one wording of every tool run here:
    past its time, past its output (and how the output began), or the error it printed, with its
    memory bound where the exit looks like an allocation refused under it; None where it succeeded.
    `tool` names it in that note ("compiler", "nvdisasm"); `raised_by`: the options that raise its
    time and its memory bound ("" for a bound that is a constant)."""
    timeout_option, memory_option = raised_by
    if done.timed_out:
        return f"stopped after {timeout_s:g} s" + (f" ({timeout_option})" if timeout_option else "")
    if done.overflowed:
        first = next((line.strip() for line in output_lines(done.output) if line.strip()), "")
        return f"printed more than {output_limit >> 20} MiB and was stopped; it began: {clip(first, MAX_ERROR_LINE)}"
    if done.returncode == 0:
        return None
    error = tool_error_line(output_lines(done.output), done.returncode)
    if memory_mib is not None and (done.returncode < 0 or any(
            sign in line.lower() for line in output_lines(done.output) for sign in _MEMORY_SIGNS)):
        error += f" (each {tool} process may use {memory_mib} MiB" + (f": {memory_option})" if memory_option else ")")
    return error


def tool_error_line(lines, returncode: int) -> str:
    """A tool's first error, on one line; else its last line; else the exit status."""
    first_error = last = ""
    for line in lines:
        line = line.strip()
        if line:
            last = line
            if "error" in line.lower():
                first_error = line
                break
    return clip(first_error or last or f"exited with status {returncode}", MAX_ERROR_LINE)


def output_lines(data) -> Iterator[str]:
    """The lines of a tool's output, decoded one at a time, each at most MAX_DECODED_LINE bytes:
    the output (up to its limit, MAX_COMPILER_OUTPUT for a compiler) is never text at once, which
    for output of four-byte characters is four times its size, for each build running."""
    start, size = 0, len(data)
    while start < size:
        end = data.find(b"\n", start)
        end = size if end < 0 else end
        yield data[start:min(end, start + MAX_DECODED_LINE)].decode("utf-8", errors="replace").rstrip("\r")
        start = end + 1
