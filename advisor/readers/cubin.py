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

from tuneadvise.advisor.readers.compiler_output import spec_reserved_shared_mem

ELF_MAGIC = b"\x7fELF"
STT_FUNC = 2

# .nv.info attribute formats and the attribute codes read here. Names as
# `cuobjdump -elf` prints them; values checked against ptxas -v and the driver
# on real cubins (tests/fixtures/lint).
EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL, EIFMT_SVAL = 1, 2, 3, 4
EIATTR_MAX_THREADS = 0x05  # per function: __launch_bounds__ x, y, z
EIATTR_FRAME_SIZE = 0x11  # .nv.info: symbol, bytes of stack frame (spills included)
EIATTR_MAXREG_COUNT = 0x1B  # per function: the register cap it was compiled under
EIATTR_REGCOUNT = 0x2F  # .nv.info: symbol, registers
EIATTR_NUM_BARRIERS = 0x4C  # per function

class CubinError(ValueError):
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


def _sections(data: bytes):
    if data[:4] != ELF_MAGIC or data[4] != 2 or data[5] != 1:
        raise CubinError("not a 64-bit little-endian ELF file")
    (e_flags,) = struct.unpack_from("<I", data, 48)
    shoff = struct.unpack_from("<Q", data, 40)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    if shoff == 0 or shoff + shnum * shentsize > len(data):
        raise CubinError("truncated ELF section table")
    raw = []
    for i in range(shnum):
        name, stype, flags, _addr, offset, size, link, info, _align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + i * shentsize)
        raw.append((name, stype, flags, offset, size, link, info, entsize))
    strtab_offset = raw[shstrndx][3]

    def cstr(offset: int) -> str:
        end = data.index(b"\0", offset)
        return data[offset:end].decode("utf-8", errors="replace")

    sections = [_Section(cstr(strtab_offset + r[0]), *r[1:]) for r in raw]
    return e_flags, sections


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
            yield fmt, code, data[pos + 4:pos + 4 + half]
            pos += 4 + half
        elif fmt in (EIFMT_BVAL, EIFMT_HVAL, EIFMT_NVAL):
            yield fmt, code, half
            pos += 4
        else:
            raise CubinError(f"unknown .nv.info record format {fmt} in {section.name}")


def _symbol_names(data: bytes, sections: list[_Section]) -> dict[int, str]:
    symtab = next((s for s in sections if s.type == 2), None)  # SHT_SYMTAB
    if symtab is None:
        return {}
    strtab = sections[symtab.link]
    names = {}
    for index in range(symtab.size // 24):
        name_offset = struct.unpack_from("<I", data, symtab.offset + index * 24)[0]
        start = strtab.offset + name_offset
        names[index] = data[start:data.index(b"\0", start)].decode("utf-8", errors="replace")
    return names


def read_cubin(data: bytes) -> list[CubinKernel]:
    """Kernels of one cubin; CubinError for anything that is not a readable one."""
    try:
        return _read_cubin(data)
    except CubinError:
        raise
    except (struct.error, IndexError, ValueError, KeyError) as exc:
        raise CubinError(f"not a readable cubin ({exc})") from None


def _read_cubin(data: bytes) -> list[CubinKernel]:
    e_flags, sections = _sections(data)
    arch = _arch_from_header(data, e_flags)
    by_name = {s.name: s for s in sections}
    symbols = _symbol_names(data, sections)
    # Registers and frame sizes sit in the module-wide .nv.info, keyed by symbol.
    per_symbol: dict[str, dict[int, int]] = {}
    if ".nv.info" in by_name:
        for fmt, code, value in _records(data, by_name[".nv.info"]):
            if fmt == EIFMT_SVAL and len(value) >= 8:
                symbol, number = struct.unpack_from("<II", value)
                per_symbol.setdefault(symbols.get(symbol, ""), {})[code] = number
    # From sm_90 on, each kernel's .nv.shared section also holds the reserved
    # shared memory (a .nv.shared.reserved.* section marks it); the driver's
    # static figure excludes it, and so does ours.
    includes_reserved = any(s.name.startswith(".nv.shared.reserved.") for s in sections)
    reserved = spec_reserved_shared_mem(arch) if includes_reserved else 0
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
