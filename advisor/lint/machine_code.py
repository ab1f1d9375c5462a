"""The hook through which lint reads machine code: each cubin that build output, a cache
or a compile yields goes to NVIDIA's disassembler (toolchain/disassembler.py) once, and
its kernels' records gain what the instructions prove (`record.sass`) and, where no
ptxas report gave them, their spill figures (`spills_from = "sass"`).

    >>> from tuneadvise.advisor.lint.machine_code import machine_code_reader
    >>> machine_code_reader(False) is None
    True

Cubins are disassembled in a pool while the readers go on (MachineCodeReader); lint
waits for them (`finish()`) before it analyses anything.
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor

from ..readers.compiler_output import KernelUsage
from ..text import clip
from ..toolchain.cache import EntryStore, default_directory
from ..toolchain.disassembler import Disassembler, DisassemblyError, available, find_disassembler


def machine_code_reader(wanted: bool | None, jobs: int | None = None) -> MachineCodeReader | None:
    """`wanted` None: read machine code where nvdisasm is installed; True: it must be
    (DisassemblerMissing otherwise); False: never."""
    if wanted is False:
        return None
    disassembler = find_disassembler() if wanted else available()
    if disassembler is None:
        return None
    directory = default_directory()
    return MachineCodeReader(disassembler, jobs, EntryStore(directory) if directory is not None else None)


class MachineCodeReader:
    """Disassembles cubins as the readers meet them, `jobs` at a time (each is two nvdisasm
    processes, and the readers go on meanwhile); `finish()` waits for all of them. At most
    2 * jobs cubins wait at once, so a library of thousands is never held whole."""

    def __init__(self, disassembler: Disassembler, jobs: int | None = None, store: EntryStore | None = None):
        self.disassembler = disassembler
        self.store = store  # the listings of cubins read before, by their digest
        self.jobs = max(1, jobs or (os.cpu_count() or 2) // 2)
        self.pool = ThreadPoolExecutor(self.jobs)
        self.pending: deque[Future] = deque()
        self.unread: list[str] = []

    def __call__(self, cubin: bytes, records: list[KernelUsage]) -> None:
        while len(self.pending) >= 2 * self.jobs:
            self._collect(self.pending.popleft())
        self.pending.append(self.pool.submit(self._read, cubin, records))

    def _read(self, cubin: bytes, records: list[KernelUsage]) -> str | None:
        try:
            found = self.disassembler.kernels(cubin, self.store)
        except DisassemblyError as exc:
            return f"{records[0].file}: machine code not read ({clip(str(exc), 200)}): its spills stay unknown"
        for record in records:
            attach(record, found.get(record.name))
        return None

    def _collect(self, future: Future) -> None:
        unread = future.result()
        if unread is not None:
            self.unread.append(unread)

    def finish(self) -> list[str]:
        """Wait for every disassembly; a sentence per cubin nvdisasm could not read (CuPy's
        cache files, whose ELF lacks its program headers, say): a warning, the figures stay."""
        try:
            while self.pending:
                self._collect(self.pending.popleft())
        finally:
            self.pool.shutdown(wait=True, cancel_futures=True)
        return self.unread


def attach(record: KernelUsage, sass) -> None:
    """Put one kernel's machine-code reading on its record; spill figures only where none are known."""
    if sass is None:
        return
    record.sass = sass
    if record.spill_stores is None:
        record.spill_stores, record.spill_loads, record.spills_from = sass.spill_stores, sass.spill_loads, "sass"


def _place(file: str | None, line: int | None) -> dict:
    return {"file": file, "line": line}


def _site(site) -> dict:
    loop = site.loop
    return {"file": site.file, "line": site.line, "offset": site.offset, "kind": site.kind, "bytes": site.bytes,
            "loop": None if loop is None else {**_place(loop.file, loop.line), "start": loop.start, "end": loop.end}}


def sass_document(sass) -> dict | None:
    """A kernel's `sass` object in the lint document (docs/json-schema.md); None where its
    machine code was not read."""
    if sass is None:
        return None
    return {
        "peak_live_registers": sass.peak_live_registers,
        "peak_lines": [_place(file, line) for file, line in sass.peak_lines],
        "spill_sites": [_site(site) for site in sass.spill_sites],
        "local_accesses": [_site(site) for site in sass.local_accesses],
        "local_stores": sass.local_stores,
        "local_loads": sass.local_loads,
        "instructions": sass.instructions,
    }


MAX_NAMED_LINES = 5  # source lines named in a finding's message; all go to its details
_PRESSURE_RULES = ("TA301", "TA907")  # occupancy limited by registers; a register budget passed


def lines_by_bytes(sites) -> list[dict]:
    """Spill sites by source line, most bytes first: {file, line, stores, loads}."""
    lines: dict[tuple, dict] = {}
    for site in sites:
        if site.line is None:
            continue
        entry = lines.setdefault((site.file, site.line), {"file": site.file, "line": site.line, "stores": 0, "loads": 0})
        entry["stores" if site.kind == "store" else "loads"] += site.bytes
    return sorted(lines.values(), key=lambda e: (-(e["stores"] + e["loads"]), e["file"] or "", e["line"]))


def _named(places) -> str:
    shown = [f"{os.path.basename(p['file'] or '?')}:{p['line']}" for p in places[:MAX_NAMED_LINES]]
    more = f" and {len(places) - MAX_NAMED_LINES} more" if len(places) > MAX_NAMED_LINES else ""
    return ", ".join(shown) + more


def with_machine_code(findings: tuple, sass) -> tuple:
    """A kernel's findings with the source lines its machine code names: TA501 the lines that
    spill (most bytes first), TA301 and TA907 the lines where live registers peak. Findings
    are shared by kernels with the same figures; the lines are each kernel's own, so they are
    added here, per kernel, to copies."""
    if sass is None or not findings:
        return findings
    spill_lines = lines_by_bytes(sass.spill_sites)
    peaks = [{"file": file, "line": line} for file, line in sass.peak_lines]
    out = []
    for finding in findings:
        if finding.code == "TA501" and spill_lines:
            finding = finding._replace(message=f"{finding.message}; spills at {_named(spill_lines)}",
                                       details={**finding.details, "spill_lines": spill_lines})
        elif finding.code in _PRESSURE_RULES and peaks and sass.peak_live_registers is not None:
            finding = finding._replace(
                message=f"{finding.message}; {sass.peak_live_registers} registers live at once at {_named(peaks)}",
                details={**finding.details, "peak_live_registers": sass.peak_live_registers, "pressure_lines": peaks})
        out.append(finding)
    return tuple(out)
