"""Run NVIDIA's disassembler on a cubin and read what its machine code proves
(readers/sass.py). nvdisasm is found like the compiler (discovery.py): the `[sass]`
extra's wheel (nvidia-cuda-nvdisasm, under site-packages' `nvidia/cu13/bin`), then
CUDA_HOME / CUDA_PATH, then PATH. It runs on any machine, with or without a GPU.

Two listings are taken of each cubin, at the same time (processes.py bounds each):
the code under its source lines (where the cubin has a line table: -lineinfo, -G),
and the live-register counts.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..readers.sass import KernelSass, read_live_registers, read_sass
from ..tool_bounds import failure
from .discovery import candidates, tool_release
from .processes import RunningCompilers, run_limited
from .report_cache import MAX_ENTRY, EntryStore, file_identity

# The spill annotation this reading rests on was seen printed by nvdisasm 13.5 and not by 13.0
# (a cubin whose spill instructions 13.5 annotates, 13.0 printed bare): an older one is passed over.
MINIMUM_RELEASE = (13, 5)
INSTALL_HINT = ("no CUDA disassembler found: install it with pip install 'tuneadvise[sass]' "
                "(NVIDIA's nvdisasm 13.5 from PyPI), or set CUDA_HOME to a CUDA 13.5 or later toolkit")
TIMEOUT_S = 120
MEMORY_MIB = 4096
FORMAT = "tuneadvise-nvdisasm-listings-1"
_SEPARATOR = "\0"  # between the two listings of a stored entry: never in nvdisasm's text
MAX_LISTING = 512 << 20  # bytes of one listing: about 300 bytes an instruction in count mode


class DisassemblerMissing(RuntimeError):
    """No nvdisasm: the one sentence on how to get it."""

    def __init__(self):
        super().__init__(INSTALL_HINT)


class DisassemblyError(RuntimeError):
    """nvdisasm refused the cubin, or passed a bound: one line saying which."""


@dataclass(frozen=True)
class Disassembler:
    path: str
    origin: str  # "the [sass] extra", "CUDA_HOME", "PATH"

    def kernels(self, cubin: bytes, store: EntryStore | None = None) -> dict[str, KernelSass]:
        """Each kernel's machine-code figures, by its name as the cubin writes it. `store`: where
        the two listings are kept by the cubin's digest, so an unchanged cubin is read again
        without running nvdisasm (TUNEADVISE_CACHE_DIR's folder, as the compiles' reports)."""
        key = self._key(cubin) if store is not None else None
        kept = store.get(key) if key is not None else None
        code, _, live = kept.partition(_SEPARATOR) if kept is not None else ("", "", "")
        if kept is None:
            code, live = self._listings(cubin)
            if key is not None and len(code) + len(live) < MAX_ENTRY:
                store.put(key, code + _SEPARATOR + live)
        problems: list = []
        peaks = read_live_registers(io.StringIO(live), problems)
        found = {sass.name: sass for sass in read_sass(io.StringIO(code), peaks, problems)}
        if problems:
            number, message = problems[0]
            raise DisassemblyError(f"nvdisasm's listing, line {number}: {message}")
        return found

    def _key(self, cubin: bytes) -> str:
        return hashlib.sha256(json.dumps([FORMAT, file_identity(self.path)]).encode() + hashlib.sha256(cubin).digest()
                              ).hexdigest()

    def _listings(self, cubin: bytes) -> tuple[str, str]:
        """(the code with its source lines, the live-register counts; "" where nvdisasm gives none)."""
        with tempfile.TemporaryDirectory(prefix="tuneadvise-sass-") as folder:
            image = os.path.join(folder, "kernel.cubin")
            with open(image, "wb") as handle:
                handle.write(cubin)
            running = RunningCompilers()
            with ThreadPoolExecutor(2) as pool:
                live = pool.submit(self._listing, ["-c", "--life-range-mode", "count", image], running)
                code = self._listing(["-c", "--print-line-info", image], running)
                try:
                    live_listing = live.result()
                except DisassemblyError:  # no life ranges for this cubin's ELF layout (some Triton builds)
                    live_listing = ""
        return code, live_listing

    def _listing(self, options: list[str], running: RunningCompilers) -> str:
        finished = run_limited([self.path, *options], None, timeout_s=TIMEOUT_S, memory_mib=MEMORY_MIB,
                               output_limit=MAX_LISTING, running=running)
        problem = failure(finished, "nvdisasm", TIMEOUT_S, MEMORY_MIB, MAX_LISTING)
        if problem is not None:  # said of the cubin, not of the temporary file it was written to
            raise DisassemblyError(f"nvdisasm failed: {problem.replace(options[-1], 'the cubin')}")
        return bytes(finished.output).decode("utf-8", "replace")


def find_disassembler() -> Disassembler:
    """The first nvdisasm found of release 13.5 or later, or DisassemblerMissing."""
    for directory, origin in candidates("nvdisasm", "sass"):
        path = directory / "nvdisasm"
        if os.access(path, os.X_OK) and path.is_file() and tool_release(str(path.resolve())) >= MINIMUM_RELEASE:
            return Disassembler(str(path.resolve()), origin)
    raise DisassemblerMissing()


def available() -> Disassembler | None:
    """The disassembler where one is installed, else None: cubins are still read without it."""
    try:
        return find_disassembler()
    except DisassemblerMissing:
        return None
