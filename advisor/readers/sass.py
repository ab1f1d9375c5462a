"""Machine code as NVIDIA's disassembler prints it, read into per-kernel figures: spill
bytes, local memory that is not spilling, the peak of live registers and where it is
reached, and a count of the instructions by class.

Two listings of one cubin are read (toolchain/disassembler.py runs them):

- `nvdisasm -c --print-line-info`: every instruction in full, with its offset, the spill
  annotation ptxas leaves on a spill or refill (`(*"SpillRefill"*)`), branch labels, and
  `//## File "f", line N` comments where the cubin has a line table (-lineinfo, -G);
- `nvdisasm -c --life-range-mode count`: the number of live general registers at each
  instruction. nvdisasm ignores line info when it prints life ranges, and cuts long
  instructions short there, hence two listings; only offsets and counts are read from it.

Both are read line by line, with anchored patterns that match in linear time, and no
line longer than MAX_LINE is searched. What is kept per kernel is bounded (MAX_SITES
sites and loops, MAX_PEAK_LINES lines, MAX_FILES file names for a listing).

Only what the instructions prove is reported. A spill is an STL/LDL of the kernel's own
code carrying the annotation (an internal subroutine the kernel calls, such as the slow
path of an IEEE division, follows it in its section after a `.type NAME,@function` line:
ptxas counts that subroutine's spills apart and reports them nowhere); its bytes are
the access width (`.64`: 8, `.128`: 16, `.U8`: 1, none: 4), whose sums equal ptxas's "bytes spill stores/loads" (tests/crosscutting/
test_sass_differential.py). A loop is a backward branch: the code from the branch's
target to the branch.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from .compiler_output import note_problem

MAX_LINE = 8192  # characters; a listing's lines are under 400 (count mode) plus the mangled name
MAX_SITES = 4096  # spill sites, or local accesses, kept per kernel (the byte sums count all)
MAX_PEAK_LINES = 16
MAX_FILES = 4096  # distinct source file names in one listing
_NAME = r"[^\s:,;()\"]{1,4096}"
_FUNCTION = re.compile(rf"^\.text\.({_NAME}):")
_LABEL = re.compile(r"^(\.L_x_\d{1,9}):")
# An instruction: offset, optional predicate, opcode with its modifiers, operands up to ';'.
_INSTRUCTION = re.compile(r"^\s{0,64}/\*([0-9a-f]{4,10})\*/\s{1,64}(?:@!?U?P[0-7T]\s{1,8})?"
                          r"([A-Z][A-Z0-9_]{0,23})((?:\.[A-Z0-9_]{1,24}){0,12})(?:\s([^;]{0,2048}))?;")
_SPILL = '(*"SpillRefill"*)'
_LIVE = re.compile(r"// \|\s{0,16}(\d{1,4})?\s{0,16}\|")  # the first column after the code: GPRs
_LINE_INFO = re.compile(r'^\s{0,16}//## File "([^"]{1,4096})", line (\d{1,9})(?!\d)')
_TARGET = re.compile(r"`\((\.L_x_\d{1,9})\)")
_WIDTHS = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "64": 8, "128": 16}
_TOO_LONG = f"line longer than {MAX_LINE} characters: not nvdisasm output"

# Opcodes by class: the base opcode, before its modifiers (FFMA.FTZ is FFMA).
_MATH = {
    "fp32": ("FADD", "FADD32I", "FMUL", "FMUL32I", "FFMA", "FFMA32I", "FMNMX", "MUFU", "FSWZADD"),
    "fp16": ("HADD2", "HADD2_32I", "HMUL2", "HMUL2_32I", "HFMA2", "HFMA2_32I", "HMNMX2"),
    "fp64": ("DADD", "DMUL", "DFMA", "DMNMX"),
    "tensor": ("HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "OMMA", "QMMA", "UTCHMMA",
               "UTCIMMA", "UTCQMMA", "UTCOMMA"),
    "integer": ("IADD", "IADD3", "IADD32I", "IMAD", "IMUL", "IMUL32I", "ISCADD", "LEA", "SHF", "SHL", "SHR",
                "LOP", "LOP3", "LOP32I", "IABS", "IMNMX", "VIADD", "VIMNMX", "VIADDMNMX", "POPC", "FLO", "BREV",
                "IDP", "IDP4A", "PRMT", "SGXT", "BMSK"),
}
_FLOATING = frozenset(("fp32", "fp16", "fp64", "tensor"))
_LOADS = frozenset((("global", "load"), ("shared", "load")))
MAX_OFFSETS = 1 << 20  # instructions whose place is kept per kernel, for the hot loop's mix
_CLASS_OF = {opcode: name for name, opcodes in _MATH.items() for opcode in opcodes}
_MEMORY = {"LDG": ("global", "load"), "STG": ("global", "store"), "LDS": ("shared", "load"),
           "STS": ("shared", "store"), "LDL": ("local", "load"), "STL": ("local", "store"),
           "LD": ("generic", "load"), "ST": ("generic", "store"), "LDSM": ("shared", "load")}
_OTHER = {"BAR": "barriers", "SHFL": "shuffles", "LDGSTS": "async_copies", "ATOMG": "atomics", "ATOM": "atomics",
          "ATOMS": "atomics", "RED": "atomics", "REDG": "atomics"}


@dataclass(frozen=True, slots=True)
class Loop:
    start: int  # offset of the branch target (the loop's head)
    end: int  # offset of the backward branch
    file: str | None
    line: int | None  # the head's source line, where the cubin has line info


@dataclass(frozen=True, slots=True)
class Site:
    """One local-memory instruction: a spill or refill, or a non-spill local access."""

    offset: int
    kind: str  # "store" | "load"
    bytes: int
    file: str | None = None
    line: int | None = None
    loop: Loop | None = None


@dataclass(slots=True, eq=False)
class KernelSass:
    """What one kernel's machine code proves. Compared (and hashed) as itself: lint keys shared
    analyses by a record's reader fields, and two kernels' readings never stand for each other
    (their lines differ even where their figures agree)."""

    name: str
    spill_stores: int = 0
    spill_loads: int = 0
    local_stores: int = 0  # bytes of the local accesses that are not spills (arrays, stack)
    local_loads: int = 0
    peak_live_registers: int | None = None  # None: the listing had no life-range column
    peak_lines: list[tuple[str, int]] = field(default_factory=list)
    spill_sites: list[Site] = field(default_factory=list)
    local_accesses: list[Site] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)
    instructions: dict = field(default_factory=dict)
    fp64_lines: list[tuple[str, int]] = field(default_factory=list)  # source lines of FP64 arithmetic, in code order
    # The innermost loop with the most floating-point operations: {"start", "end", "math", "loads",
    # "instructions"} (math: FP32/FP16/FP64 and tensor instructions; loads: global and shared); None: no loop.
    hot_loop: dict | None = None


def access_width(modifiers: str) -> int:
    """Bytes one thread moves with a load or store of these modifiers ('.E.128' -> 16)."""
    width = 4
    for part in modifiers.split("."):
        width = _WIDTHS.get(part, width)
    return width


class LiveRegisters(NamedTuple):
    """One kernel's peak of live general registers and the offsets where it is reached."""

    peak: int
    offsets: frozenset[int]


_OFFSET = re.compile(r"^\s{0,64}/\*([0-9a-f]{4,10})\*/")


def read_live_registers(lines: Iterable[str], problems: list | None = None) -> dict[str, LiveRegisters]:
    """Each kernel's peak from a `nvdisasm -c --life-range-mode count` listing. Only the offset
    and the first column are read: this listing cuts long instructions short."""
    found: dict[str, LiveRegisters] = {}
    kernel, peak, offsets = None, -1, []
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_LINE:
            note_problem(problems, number, _TOO_LONG)
            continue
        if line.startswith(".text."):
            if kernel is not None and peak >= 0:
                found[kernel] = LiveRegisters(peak, frozenset(offsets))
            match = _FUNCTION.match(line)
            kernel, peak, offsets = (match.group(1) if match else None), -1, []
            continue
        if kernel is None or "/*" not in line:
            continue
        offset, live = _OFFSET.match(line), _LIVE.search(line)
        if offset is None or live is None:
            continue
        count = int(live.group(1) or 0)
        if count > peak:
            peak, offsets = count, [int(offset.group(1), 16)]
        elif count == peak and len(offsets) < MAX_SITES:
            offsets.append(int(offset.group(1), 16))
    if kernel is not None and peak >= 0:
        found[kernel] = LiveRegisters(peak, frozenset(offsets))
    return found


class _Kernel:
    """The state of one kernel while its instructions stream past."""

    def __init__(self, name: str, live: LiveRegisters | None, files: dict[str, str], where=(None, None)):
        self.sass = KernelSass(name, peak_live_registers=live.peak if live else None)
        self.peak_offsets = live.offsets if live else frozenset()
        self.files = files  # one string per file name, shared by the kernels of a listing
        # The source line of the code that follows. nvdisasm prints a line comment only where the line
        # changes from the instruction before, in the previous section too: a kernel whose first
        # instructions are on the line the previous kernel ended on starts with no comment.
        self.where: tuple[str | None, int | None] = where
        self.peaks: dict[tuple[str, int], None] = {}
        self.fp64_lines: dict[tuple[str, int], None] = {}
        self.labels: dict[str, tuple[int, tuple]] = {}
        self.pending_labels: list[str] = []
        self.counts: dict[str, int] = {}
        self.memory: dict[tuple[str, str, int], int] = {}
        self.in_subroutine = False  # past a `.type NAME,@function` inside the kernel's section
        self.offsets: list[tuple[int, int, int]] = []  # (offset, is math, is a global or shared load)

    def label(self, name: str) -> None:
        self.pending_labels.append(name)

    def line_info(self, file: str, line: int) -> bool:
        name = self.files.get(file)
        if name is None:
            if len(self.files) >= MAX_FILES:
                return False
            name = self.files[file] = file
        self.where = (name, line)
        return True

    def instruction(self, offset: int, opcode: str, modifiers: str, operands: str) -> None:
        for name in self.pending_labels:
            self.labels[name] = (offset, self.where)
        self.pending_labels.clear()
        if offset in self.peak_offsets and self.where[0] is not None and len(self.peaks) < MAX_PEAK_LINES:
            self.peaks.setdefault(self.where)
        kind = _CLASS_OF.get(opcode) or _OTHER.get(opcode)
        if kind is not None:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            if kind == "fp64" and self.where[0] is not None and len(self.fp64_lines) < MAX_SITES:
                self.fp64_lines.setdefault(self.where)
        space = _MEMORY.get(opcode)
        if len(self.offsets) < MAX_OFFSETS:
            self.offsets.append((offset, kind in _FLOATING, space in _LOADS))
        if space is not None:
            width = access_width(modifiers)
            key = (space[0], space[1], width)
            self.memory[key] = self.memory.get(key, 0) + 1
            if space[0] == "local" and not self.in_subroutine:
                self._local(offset, space[1], width, _SPILL in operands)
        if opcode.startswith("BRA") or opcode == "JMP":
            target = _TARGET.search(operands)
            head = self.labels.get(target.group(1)) if target else None
            if head is not None and head[0] < offset and len(self.sass.loops) < MAX_SITES:
                self.sass.loops.append(Loop(head[0], offset, *head[1]))

    def _local(self, offset: int, kind: str, width: int, spill: bool) -> None:
        sass = self.sass
        if spill:
            if kind == "store":
                sass.spill_stores += width
            else:
                sass.spill_loads += width
            sites = sass.spill_sites
        else:
            if kind == "store":
                sass.local_stores += width
            else:
                sass.local_loads += width
            sites = sass.local_accesses
        if len(sites) < MAX_SITES:
            sites.append(Site(offset, kind, width, *self.where))

    def finish(self) -> KernelSass:
        sass = self.sass
        loops = sorted(sass.loops, key=lambda loop: loop.end - loop.start)  # innermost first
        sass.spill_sites = [_in_loop(site, loops) for site in sass.spill_sites]
        sass.local_accesses = [_in_loop(site, loops) for site in sass.local_accesses]
        sass.peak_lines = list(self.peaks)
        sass.fp64_lines = list(self.fp64_lines)
        sass.instructions = _summary(self.counts, self.memory)
        sass.hot_loop = _hot_loop(loops, self.offsets)
        return sass


def _hot_loop(loops: list[Loop], offsets: list[tuple[int, int, int]]) -> dict | None:
    """The innermost loop (one holding no other) with the most floating-point instructions.
    `offsets` is in code order: each loop's counts are differences of running sums."""
    if not loops:
        return None
    places = [offset for offset, _, _ in offsets]
    math_sum, load_sum = [0], [0]
    for _, math, load in offsets:
        math_sum.append(math_sum[-1] + math)
        load_sum.append(load_sum[-1] + load)
    by_start = sorted(loops, key=lambda loop: (loop.start, -loop.end))
    best = None
    for i, loop in enumerate(by_start):
        following = by_start[i + 1] if i + 1 < len(by_start) else None
        if following is not None and following.end <= loop.end:
            continue  # the next loop to start lies inside this one (its nested loops start after it)
        first, last = bisect_left(places, loop.start), bisect_right(places, loop.end)
        found = {"start": loop.start, "end": loop.end, "math": math_sum[last] - math_sum[first],
                 "loads": load_sum[last] - load_sum[first], "instructions": last - first}
        if best is None or found["math"] > best["math"]:
            best = found
    return best


# `desc[UR4][R2.64+0x10]` or `[R2.64+-0x4]`: the address register and the immediate offset.
def _in_loop(site: Site, loops: list[Loop]) -> Site:
    loop = next((loop for loop in loops if loop.start <= site.offset <= loop.end), None)
    if loop is None:
        return site
    return Site(site.offset, site.kind, site.bytes, site.file, site.line, loop)


def _summary(counts: dict[str, int], memory: dict[tuple[str, str, int], int]) -> dict:
    summary = {name: counts.get(name, 0) for name in (*_MATH, "barriers", "shuffles", "atomics", "async_copies")}
    for direction in ("load", "store"):
        by_space: dict[str, dict[str, int]] = {}
        for (space, kind, width), count in sorted(memory.items()):
            if kind == direction:
                by_space.setdefault(space, {})[str(width)] = count
        summary[f"{direction}s"] = by_space
    return summary


def read_sass(lines: Iterable[str], live: Mapping[str, LiveRegisters] | None = None,
              problems: list | None = None) -> Iterator[KernelSass]:
    """One KernelSass per kernel of a `nvdisasm -c --print-line-info` listing (or one without
    line info), as each kernel's code ends. `live`: read_live_registers of the same cubin;
    without it, peak_live_registers stays None."""
    live = live or {}
    files: dict[str, str] = {}
    where: tuple = (None, None)  # the last line comment printed, in whichever section
    current: _Kernel | None = None
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_LINE:
            note_problem(problems, number, _TOO_LONG)
            continue
        if line.startswith(".text."):
            if current is not None:
                where = current.where
                yield current.finish()
            match = _FUNCTION.match(line)
            current = _Kernel(match.group(1), live.get(match.group(1)), files, where) if match else None
            if match is None:
                note_problem(problems, number, "expected '.text.NAME:'")
            continue
        if current is None:
            continue
        if line.startswith(".L_x_"):
            match = _LABEL.match(line)
            if match:
                current.label(match.group(1))
        elif "//## File" in line:
            match = _LINE_INFO.match(line)
            if match is None:
                note_problem(problems, number, "expected '//## File \"NAME\", line N'")
            elif not current.line_info(match.group(1), int(match.group(2))):
                note_problem(problems, number, f"more than {MAX_FILES} source files in the line table")
        elif line.lstrip().startswith(".type") and line.rstrip().endswith("@function"):
            current.in_subroutine = True
        elif "/*" in line:
            match = _INSTRUCTION.match(line)
            if match is not None:  # else a data word of a jump table, not code
                current.instruction(int(match.group(1), 16), match.group(2), match.group(3), match.group(4) or "")
        elif line.startswith("//-") or line.lstrip().startswith(".section"):  # the next section's header
            where = current.where
            yield current.finish()
            current = None
    if current is not None:
        yield current.finish()


def lines_by_bytes(sites) -> list[dict]:
    """Spill or local-memory sites by source line, most bytes first: {file, line, stores, loads}."""
    lines: dict[tuple, dict] = {}
    for site in sites:
        if site.line is None:
            continue
        entry = lines.setdefault((site.file, site.line), {"file": site.file, "line": site.line, "stores": 0, "loads": 0})
        entry["stores" if site.kind == "store" else "loads"] += site.bytes
    return sorted(lines.values(), key=lambda e: (-(e["stores"] + e["loads"]), e["file"] or "", e["line"]))
