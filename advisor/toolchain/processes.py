"""Run one of NVIDIA's tools within bounds: its time, its address space (and its children's), and
what it may print; its whole process group killed when a bound is passed or the run is
interrupted. Every process tuneadvise starts on a source goes through here: the compiles
(compile.py), the report cache's `nvcc -M` (report_cache.py), whose preprocessor reads whatever the
source includes (`#include "/dev/zero"` grows it without end), and nvdisasm (disassembler.py).

The address-space cap and the one line a failed run is said in are advisor/tool_bounds.py's
(`limited`, `failure`), which the Nsight Compute reader's `ncu --import` shares.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading

from ..tool_bounds import Finished, limited

OUTPUT_GRACE_S = 5  # after the tool exits, how long its output may take to end


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
