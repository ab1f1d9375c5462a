"""The hook through which lint reads machine code: each cubin that build output, a cache
or a compile yields goes to NVIDIA's disassembler (toolchain/disassembler.py) once, and
its kernels' records gain what the instructions prove (`record.sass`) and, where no
ptxas report gave them, their spill figures (`spills_from = "sass"`).

    >>> from tuneadvise.advisor.lint.machine_code import machine_code_reader
    >>> machine_code_reader(False) is None
    True

"""

from __future__ import annotations

import os
from dataclasses import replace

from ..advice.evidence_launch import barrier_relief
from ..advice.evidence_machine_code import machine_code
from ..advice.verdict import verdict_of, with_evidence
from ..readers.compiler_output import KernelUsage
from ..text import clip
from ..toolchain.disassembler import Disassembler, DisassemblyError, available, find_disassembler
from ..toolchain.report_cache import EntryStore, default_directory


def machine_code_reader(wanted: bool | None) -> MachineCodeReader | None:
    """`wanted` None: read machine code where nvdisasm is installed; True: it must be
    (DisassemblerMissing otherwise); False: never."""
    if wanted is False:
        return None
    disassembler = find_disassembler() if wanted else available()
    if disassembler is None:
        return None
    directory = default_directory()
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


def _barrier_relief(finding, sass) -> list:
    """The barrier gate for a change whose verdict names the blocks per SM it goes between."""
    steps = [e.value["blocks_per_sm"] for e in verdict_of(finding.details).evidence
             if e.kind == "occupancy" and isinstance(e.value.get("blocks_per_sm"), list)]
    relief = barrier_relief(*steps[0], sass.instructions.get("barriers", 0)) if steps else None
    return [relief] if relief is not None else []


def with_machine_code(findings: tuple, sass) -> tuple:
    """A kernel's findings with the source lines its machine code names: TA501 the lines that
    spill (most bytes first), TA502 the lines of its other local-memory loads and stores (the
    array's), TA301 and TA907 the lines where live registers peak; a finding's verdict weighs what
    the instructions show (advice/evidence_machine_code.py). Findings
    are shared by kernels with the same figures; the lines are each kernel's own, so they are
    added here, per kernel, to copies."""
    if sass is None or not findings:
        return findings
    spill_lines = lines_by_bytes(sass.spill_sites)
    local_lines = lines_by_bytes(sass.local_accesses)
    peaks = [{"file": file, "line": line} for file, line in sass.peak_lines]
    code = machine_code(sass.instructions, sass.hot_loop)
    out = []
    for finding in findings:
        if code is not None and "verdict" in finding.details:
            finding = with_evidence(finding, [code, *_barrier_relief(finding, sass)])
        if finding.code == "TA501" and spill_lines:
            finding = finding._replace(message=f"{finding.message}; spills at {_named(spill_lines)}",
                                       details={**finding.details, "spill_lines": spill_lines})
        elif finding.code == "TA502" and local_lines:
            finding = finding._replace(message=f"{finding.message}; local memory accessed at {_named(local_lines)}",
                                       details={**finding.details, "local_lines": local_lines})
        elif finding.code in _PRESSURE_RULES and peaks and sass.peak_live_registers is not None:
            finding = finding._replace(
                message=f"{finding.message}; {sass.peak_live_registers} registers live at once at {_named(peaks)}",
                details={**finding.details, "peak_live_registers": sass.peak_live_registers, "pressure_lines": peaks})
        out.append(finding)
    return tuple(out)
