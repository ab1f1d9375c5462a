"""The hook through which lint reads machine code: each cubin that build output, a cache
or a compile yields goes to NVIDIA's disassembler (toolchain/disassembler.py) once, and
its kernels' records gain what the instructions prove (`record.sass`) and, where no
ptxas report gave them, their spill figures (`spills_from = "sass"`).

    >>> from tuneadvise.advisor.lint.machine_code import machine_code_reader
    >>> machine_code_reader(False) is None
    True

"""

from __future__ import annotations

from dataclasses import replace

from ..readers.compiler_output import KernelUsage
from ..text import clip
from ..toolchain.disassembler import Disassembler, DisassemblyError, available, find_disassembler
from ..toolchain.report_cache import EntryStore, default_directory


def machine_code_reader(wanted: bool | None, cache: bool = True) -> MachineCodeReader | None:
    """`wanted` None: read machine code where nvdisasm is installed; True: it must be
    (DisassemblerMissing otherwise); False: never. `cache` False (--no-cache): listings are
    neither read from nor written to the user's cache folder."""
    if wanted is False:
        return None
    disassembler = find_disassembler() if wanted else available()
    if disassembler is None:
        return None
    directory = default_directory() if cache else None
    return MachineCodeReader(disassembler, EntryStore(directory) if directory is not None else None)


class MachineCodeReader:
    """Called by the readers with each cubin and its kernels' records; returns the records with
    what the machine code proves. A cubin nvdisasm cannot read keeps its records as they were
    and adds a sentence to `unread` (a warning: CuPy's cache files, whose ELF lacks its program
    headers, say)."""

    def __init__(self, disassembler: Disassembler, store: EntryStore | None = None):
        self.disassembler = disassembler
        self.store = store  # the listings of cubins read before, by their digest
        self.unread: list[str] = []

    def __call__(self, cubin: bytes, records: list[KernelUsage]) -> list[KernelUsage]:
        try:
            found = self.disassembler.kernels(cubin, self.store)
        except DisassemblyError as exc:
            self.unread.append(f"{records[0].file}: machine code not read ({clip(str(exc), 200)}): "
                               "its spills stay unknown")
            return records
        return [attach(record, found.get(record.name)) for record in records]


def attach(record: KernelUsage, sass) -> KernelUsage:
    """The record with its machine-code reading; spill figures only where none are known."""
    if sass is None:
        return record
    if record.spill_stores is not None:
        return replace(record, sass=sass)
    return replace(record, sass=sass, spill_stores=sass.spill_stores, spill_loads=sass.spill_loads,
                   spills_from="sass")


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
        "hot_loop": sass.hot_loop,
    }
