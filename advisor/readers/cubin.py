"""Resource usage read straight from CUDA binaries, without the CUDA toolkit.

A cubin is an ELF file. For each kernel `NAME` it has a `.text.NAME` section
(registers in the top byte of sh_info, barriers in bits 20-26 of sh_flags), an
optional `.nv.shared.NAME` section whose size is the static shared memory, and
a `.nv.info.NAME` section of attribute records (frame size, stack sizes,
spills...). The target SM is in the ELF header's e_flags. Cubins inside
fatbins (.o, .so, executables) are found by advisor/readers/fatbin.py and read here.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ...specs.errors import InputError
from .compiler_output import spec_reserved_shared_mem

ELF_MAGIC = b"\x7fELF"

# .nv.info attribute formats and the attribute codes read here. Names as
# `cuobjdump -elf` prints them; values checked against ptxas -v and the driver
# on real cubins (tests/fixtures/lint).
EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL, EIFMT_SVAL = 1, 2, 3, 4
EIATTR_MAX_THREADS = 0x05  # per function: __launch_bounds__ x, y, z
EIATTR_FRAME_SIZE = 0x11  # .nv.info: symbol, bytes of stack frame (spills included)
EIATTR_MAXREG_COUNT = 0x1B  # per function: the register cap it was compiled under
EIATTR_REGCOUNT = 0x2F  # .nv.info: symbol, registers
EIATTR_NUM_BARRIERS = 0x4C  # per function

class CubinError(InputError):
    """A file that is not a readable cubin or fatbin."""


@dataclass(frozen=True)
class CubinKernel:
    name: str  # as the compiler wrote it (mangled for C++)
    arch: str  # "sm_90"
    registers: int
    shared_mem: int  # static, excluding the reserved per-block shared memory
    barriers: int
    frame_bytes: int | None  # local memory per thread (stack frame, spills included)
    max_threads: int | None  # __launch_bounds__ maxThreadsPerBlock, if given


@dataclass(frozen=True)
class _Section:
    name: str
    type: int
    flags: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int


_ELF_HEADER_SIZE = 64
_SECTION_HEADER = struct.Struct("<IIQQQQIIQQ")  # ELF64 Shdr: 64 bytes
_SYMBOL_SIZE = 24  # ELF64 Sym
SHT_SYMTAB, SHT_STRTAB, SHT_NOBITS = 2, 3, 8
_MAX_NAME = 1 << 16  # bytes of one section or symbol name (the longest C++ kernel names are a few KB)


def _unreadable(what: str) -> CubinError:
    return CubinError(f"not a readable cubin: {what}")


class _Names:
    """NUL-terminated names out of one string-table section, read within its
    bounds. `budget` (a one-item list shared by every table of one cubin) counts
    down the bytes all lookups read: a real string table is read about once, so
    more than twice the file size means names made to overlap, each lookup
    costing up to the whole table."""

    __slots__ = ("data", "what", "start", "end", "budget")

    def __init__(self, data: bytes, offset: int, size: int, what: str, budget: list[int]):
        self.data, self.what, self.budget = data, what, budget
        self.start, self.end = offset, offset + size

    def __call__(self, offset: int) -> str:
        start = self.start + offset
        if start >= self.end:
            raise _unreadable(f"{self.what}: name offset {offset} is outside the {self.end - self.start}-byte string table")
        stop = self.data.find(b"\0", start, min(self.end, start + _MAX_NAME + 1))
        if stop == -1:
            raise _unreadable(f"{self.what}: the name at offset {offset} has no terminating NUL "
                              f"within the string table or {_MAX_NAME:,} bytes")
        self.budget[0] -= stop - start
        if self.budget[0] < 0:
            raise _unreadable(f"{self.what}: names overlap beyond any real string table")
        return self.data[start:stop].decode("utf-8", errors="replace")


def _check_header(data: bytes) -> tuple[int, int, int, int]:
    """(e_flags, e_shoff, e_shnum, e_shstrndx), each checked against the file size
    before anything is walked: a header may claim 65,535 section headers in 4 KB."""
    if data[:4] != ELF_MAGIC:
        raise _unreadable("not an ELF file (no \\x7fELF magic)")
    if len(data) < _ELF_HEADER_SIZE:
        raise _unreadable(f"truncated ELF header ({len(data)} of {_ELF_HEADER_SIZE} bytes)")
    if data[4] != 2 or data[5] != 1:
        raise _unreadable("not a 64-bit little-endian ELF file (EI_CLASS, EI_DATA)")
    (e_flags,) = struct.unpack_from("<I", data, 48)
    (shoff,) = struct.unpack_from("<Q", data, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    size = len(data)
    if shentsize != _SECTION_HEADER.size:
        raise _unreadable(f"ELF header: e_shentsize is {shentsize}, expected {_SECTION_HEADER.size} (ELF64 section header)")
    if shnum == 0:
        raise _unreadable("ELF header: e_shnum is 0 (no section headers)")
    if shoff < _ELF_HEADER_SIZE or shoff + shnum * shentsize > size:
        raise _unreadable(f"ELF header: e_shoff {shoff} with e_shnum {shnum} runs past the end of the "
                          f"{size}-byte file (truncated ELF section table)")
    if shstrndx >= shnum:
        raise _unreadable(f"ELF header: e_shstrndx {shstrndx} is not one of the {shnum} sections")
    return e_flags, shoff, shnum, shstrndx


def _header_tables(data: bytes, shoff: int, shnum: int) -> list[tuple[int, int, str]]:
    """The file ranges no section may share: the ELF header, the section header table and the
    program header table. The program headers are never read here, so a table that runs past the
    end (CuPy's kernel cache stores cubins a byte short of theirs) is not refused; its part in the file is kept clear."""
    tables = [(0, _ELF_HEADER_SIZE, "the ELF header"),
              (shoff, shoff + shnum * _SECTION_HEADER.size, "the section header table")]
    (phoff,) = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    if phnum and phoff < len(data):
        tables.append((phoff, min(len(data), phoff + phnum * phentsize), "the program header table"))
    return tables


def _check_layout(extents: list[tuple[int, int, int]], tables: list[tuple[int, int, str]]) -> None:
    """What stays refused of a section layout. Real ELF lets sections alias, and
    CUDA 13 toolchains do: with -lineinfo or -G, each `.nv.merc.*` copy of a
    debug section (.nv_debug_ptx_txt, .debug_info...) names the very bytes of
    the original. So a section may share its exact range (same sh_offset and
    sh_size) with one other section; anything else is refused: a partial
    overlap, a range named by three or more sections (each would be read
    again, and reading must cost the file size, not sections x file size), or
    a section over the ELF header, the section header table or the program
    header table."""
    named: dict[tuple[int, int], list[int]] = {}
    for start, end, index in extents:
        named.setdefault((start, end), []).append(index)
    reach, widest = 0, -1  # the furthest end so far, and the section that reaches it
    for (start, end), indices in sorted(named.items()):
        if len(indices) > 2:
            raise _unreadable(f"sections {indices[0]}, {indices[1]} and {indices[2]} all overlap exactly "
                              "(sh_offset, sh_size): at most two sections may alias")
        if start < reach:
            raise _unreadable(f"sections {widest} and {indices[0]} overlap (sh_offset, sh_size)")
        for low, high, what in tables:
            if start < high and low < end:
                raise _unreadable(f"section {indices[0]} overlaps {what} (sh_offset, sh_size)")
        reach, widest = end, indices[0]


def _sections(data: bytes):
    e_flags, shoff, shnum, shstrndx = _check_header(data)
    size = len(data)
    raw = []
    extents = []
    for i in range(shnum):
        name, stype, flags, _addr, offset, length, link, info, _align, entsize = _SECTION_HEADER.unpack_from(
            data, shoff + i * _SECTION_HEADER.size)
        if stype != SHT_NOBITS:  # NOBITS (.nv.shared.*) occupies no file bytes: its size is the memory's
            if offset + length > size:
                raise _unreadable(f"section {i}: sh_offset {offset} + sh_size {length} runs past the end "
                                  f"of the {size}-byte file")
            if length:
                extents.append((offset, offset + length, i))
        raw.append((name, stype, flags, offset, length, link, info, entsize))
    _check_layout(extents, _header_tables(data, shoff, shnum))
    strtab = raw[shstrndx]
    if strtab[1] == SHT_NOBITS:
        raise _unreadable(f"ELF header: e_shstrndx {shstrndx} is not a string table")
    budget = [2 * size + _MAX_NAME]
    cstr = _Names(data, strtab[3], strtab[4], "section names", budget)
    sections = [_Section(cstr(r[0]), *r[1:]) for r in raw]
    return e_flags, sections, budget


def _arch_from_header(data: bytes, e_flags: int) -> str:
    # ELF ABI version 8 and later (CUDA 12.8+): the SM number in bits 8-15;
    # earlier cubins: bits 0-7.
    sm = (e_flags >> 8) & 0xFF if data[8] >= 8 else e_flags & 0xFF
    return f"sm_{sm}"


def _records(data: bytes, section: _Section):
    """(format, attribute, value) for each record: value is the u16 of a
    BVAL/HVAL/NVAL record, or the payload bytes of an SVAL record."""
    pos, end = section.offset, section.offset + section.size
    while pos + 4 <= end:
        fmt, code = data[pos], data[pos + 1]
        (half,) = struct.unpack_from("<H", data, pos + 2)
        if fmt == EIFMT_SVAL:
            if pos + 4 + half > end:
                raise _unreadable(f"{section.name}: a record at offset {pos} runs past the section's end")
            yield fmt, code, data[pos + 4:pos + 4 + half]
            pos += 4 + half
        elif fmt in (EIFMT_BVAL, EIFMT_HVAL, EIFMT_NVAL):
            yield fmt, code, half
            pos += 4
        else:
            raise CubinError(f"unknown .nv.info record format {fmt} in {section.name}")


def _symbol_names(data: bytes, sections: list[_Section], budget: list[int]):
    """symbol index -> name, read when asked (only symbols that .nv.info records name)."""
    symtab = next((s for s in sections if s.type == SHT_SYMTAB), None)
    if symtab is None:
        return lambda index: ""
    if symtab.link >= len(sections) or sections[symtab.link].type == SHT_NOBITS:
        raise _unreadable(f"{symtab.name}: sh_link {symtab.link} is not a string table")
    strtab = sections[symtab.link]
    names = _Names(data, strtab.offset, strtab.size, symtab.name or "symbol table", budget)
    count = symtab.size // _SYMBOL_SIZE
    known: dict[int, str] = {}

    def name(index: int) -> str:
        if index >= count:
            return ""
        if index not in known:
            known[index] = names(struct.unpack_from("<I", data, symtab.offset + index * _SYMBOL_SIZE)[0])
        return known[index]

    return name


def _includes_reserved(data: bytes, sections: list[_Section]) -> bool:
    """Whether the kernels' .nv.shared sections hold the reserved shared memory:
    a .nv.shared.reserved.* section marks it, or, in -G builds (CUDA 13.5
    writes no such section there), a .nv.reservedSmem.* symbol."""
    if any(s.name.startswith(".nv.shared.reserved.") for s in sections):
        return True
    symtab = next((s for s in sections if s.type == SHT_SYMTAB), None)
    if symtab is None or symtab.link >= len(sections):
        return False
    names = sections[symtab.link]
    return names.type != SHT_NOBITS and data.find(b"\0.nv.reservedSmem.", names.offset, names.offset + names.size) >= 0


def read_cubin(data: bytes) -> list[CubinKernel]:
    """Kernels of one cubin; CubinError for anything that is not a readable one."""
    try:
        return _read_cubin(data)
    except CubinError:
        raise
    except (struct.error, IndexError, ValueError, KeyError) as exc:
        raise CubinError(f"not a readable cubin ({exc})") from None


def _read_cubin(data: bytes) -> list[CubinKernel]:
    e_flags, sections, budget = _sections(data)
    arch = _arch_from_header(data, e_flags)
    by_name = {s.name: s for s in sections}
    symbols = _symbol_names(data, sections, budget)
    # Registers and frame sizes sit in the module-wide .nv.info, keyed by symbol.
    per_symbol: dict[str, dict[int, int]] = {}
    if ".nv.info" in by_name:
        for fmt, code, value in _records(data, by_name[".nv.info"]):
            if fmt == EIFMT_SVAL and len(value) >= 8:
                symbol, number = struct.unpack_from("<II", value)
                per_symbol.setdefault(symbols(symbol), {})[code] = number
    # From sm_90 on, each kernel's .nv.shared section also holds the reserved
    # shared memory; the driver's static figure excludes it, and so does ours.
    reserved = spec_reserved_shared_mem(arch) if _includes_reserved(data, sections) else 0
    kernels = []
    for section in sections:
        if not section.name.startswith(".nv.info."):
            continue
        name = section.name[len(".nv.info."):]
        local = {code: value for _, code, value in _records(data, section)}
        module_wide = per_symbol.get(name, {})
        text = by_name.get(f".text.{name}")
        registers = module_wide.get(EIATTR_REGCOUNT)
        if registers is None and text is not None:
            registers = text.info >> 24  # older cubins keep it in sh_info
        shared = by_name.get(f".nv.shared.{name}")
        bounds = local.get(EIATTR_MAX_THREADS)
        max_threads = None
        if isinstance(bounds, bytes) and len(bounds) >= 12:
            x, y, z = struct.unpack_from("<III", bounds)
            max_threads = x * max(y, 1) * max(z, 1)
        kernels.append(CubinKernel(
            name=name,
            arch=arch,
            registers=registers or 0,
            shared_mem=max(0, (shared.size if shared is not None else 0) - reserved),
            barriers=local.get(EIATTR_NUM_BARRIERS, 0) if isinstance(local.get(EIATTR_NUM_BARRIERS, 0), int) else 0,
            frame_bytes=module_wide.get(EIATTR_FRAME_SIZE),
            max_threads=max_threads,
        ))
    return kernels
