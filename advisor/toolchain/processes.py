"""Run one of NVIDIA's tools within bounds: its time, its address space (and its children's), and
what it may print; its whole process group killed when a bound is passed or the run is
interrupted. Every process tuneadvise starts on a source goes through here: the compiles
(compile.py), the report cache's `nvcc -M` (report_cache.py), whose preprocessor reads whatever the
source includes (`#include "/dev/zero"` grows it without end), and nvdisasm (disassembler.py).
`failure` is the one line every such run's failure is said in.

On POSIX the address space is capped with `ulimit -v` through /bin/sh, which every process the
tool starts inherits; a `preexec_fn` would do the same but is unsafe with the thread pool.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from typing import NamedTuple

from ..text import clip

OUTPUT_GRACE_S = 5  # after the tool exits, how long its output may take to end
MAX_ERROR_LINE = 300  # characters of a tool's own words a failure repeats
MAX_DECODED_LINE = 1 << 16  # bytes of an output line read: past MAX_LINE (parse_ptxas) and MAX_ERROR_LINE
# How a tool reports an allocation refused under its memory bound (cicc segfaults on some).
_MEMORY_SIGNS = ("out of memory", "bad_alloc", "cannot allocate memory", "segmentation fault")


class Finished(NamedTuple):
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


class RunningCompilers:
    """The compiler processes started and not yet finished. Each runs in its own process group
    (killed whole on a timeout: nvcc's stages, cudafe++, cicc and ptxas, would otherwise outlive
    nvcc), which Ctrl-C at a terminal no longer reaches, so whoever is interrupted kills them here."""

    def __init__(self):
        self._lock = threading.Lock()
        self._processes: set[subprocess.Popen] = set()
        self._stopped = False

    def start(self, argv: list[str], cwd: str | None, env: dict[str, str] | None = None) -> subprocess.Popen:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   cwd=cwd, env=env, start_new_session=os.name == "posix")
        with self._lock:
            self._processes.add(process)
            stopped = self._stopped
        if stopped:  # started by a worker as the run was interrupted
            self.kill(process)
        return process

    def finished(self, process: subprocess.Popen) -> None:
        with self._lock:
            self._processes.discard(process)

    def kill(self, process: subprocess.Popen) -> None:
        """The process and, on POSIX, every process of its group, even once the process itself has
        ended: a stage can outlive nvcc (killed by its memory cap, say) and hold the output open."""
        try:
            if os.name == "posix":
                os.killpg(process.pid, signal.SIGKILL)
            elif process.poll() is None:
                process.kill()
        except (ProcessLookupError, PermissionError):  # the group has ended
            pass

    def kill_all(self) -> None:
        with self._lock:
            self._stopped = True
            processes = list(self._processes)
        for process in processes:
            self.kill(process)


class BoundedOutput(threading.Thread):
    """Reads a process's output to its end, keeping the first `limit` bytes; past them, calls
    `overflow` once (which stops the process) and reads on, so the process never blocks on a pipe."""

    def __init__(self, stream, limit: int, overflow):
        super().__init__(daemon=True)
        self.stream, self.limit, self.overflow = stream, limit, overflow
        self.buffer = bytearray()  # one buffer: chunks joined at the end would hold the output twice
        self.size = 0

    @property
    def overflowed(self) -> bool:
        return self.size > self.limit

    def run(self) -> None:
        while chunk := self.stream.read1(1 << 16):
            if self.size < self.limit:
                self.buffer += chunk[:self.limit - self.size]
            was_over, self.size = self.overflowed, self.size + len(chunk)
            if self.overflowed and not was_over:
                self.overflow()

    def data(self) -> bytearray:
        return self.buffer


def run_limited(argv: list[str], cwd: str | None, *, timeout_s: float, memory_mib: int | None, output_limit: int,
                running: RunningCompilers) -> Finished:
    """Run `argv` to its end within the bounds. Raises OSError when it cannot start; an interrupt
    while it runs kills its process group and is raised again.

    The tool's temporary files go to a folder of this run (TMPDIR), removed when it ends: nvcc
    deletes its intermediate files (the preprocessed source among them) itself, but killed it
    cannot, and they stayed in the system's temporary folder after every timeout."""
    with tempfile.TemporaryDirectory(prefix="tuneadvise-tmp-") as scratch:
        env = dict(os.environ, TMPDIR=scratch, TMP=scratch, TEMP=scratch)
        process = running.start(limited(argv, memory_mib), cwd, env)
        output = BoundedOutput(process.stdout, output_limit, lambda: running.kill(process))
        output.start()
        timed_out = False
        try:
            process.wait(timeout=timeout_s)
        except BaseException as exc:  # the timeout, or an interrupt while waiting
            running.kill(process)
            process.wait()
            if not isinstance(exc, subprocess.TimeoutExpired):
                raise
            timed_out = True
        finally:
            output.join(OUTPUT_GRACE_S)
            if output.is_alive():  # the tool ended, a process it started still holds the output
                running.kill(process)
                output.join()
            running.finished(process)
            process.stdout.close()
    return Finished(None if timed_out else process.returncode, output.data(), output.overflowed)


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
