"""Cubins out of fatbins, without the CUDA toolkit.

nvcc wraps device code in a fatbin: a 16-byte header (magic 0xBA55ED50,
version, header size, payload size) followed by entries, each with its own
header (kind 1 = PTX, 2 = ELF; the SM number; flags; sizes) and payload. A
host object, shared library or executable carries one fatbin per translation
unit in its `.nv_fatbin` section, so the file is scanned for the magic rather
than parsed as a host ELF: that finds fatbins in .o, .so, executables and
standalone .fatbin files alike.

Payloads may be compressed. Flag 0x2000 marks the LZ4 block format (nvcc
before CUDA 13); flag 0x8000 marks Zstandard, which CUDA 13's nvcc uses for
`-Xfatbin -compress-all`, `--compress-mode=size` and, by default, for embedded
PTX (tests/fixtures/lint holds such objects). Zstandard is decoded with the
`zstandard` package, or Python 3.14's compression.zstd.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Iterator
from dataclasses import dataclass

FATBIN_MAGIC = struct.pack("<I", 0xBA55ED50)
_HEADER = struct.Struct("<IHHQ")  # magic, version, header size, payload size
# kind, version, header size, payload size, compressed size, options offset,
# minor, major, sm, name offset, name length, flags, zero, decompressed size
_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")
KIND_PTX, KIND_ELF = 1, 2
FLAG_LZ4 = 0x2000
FLAG_ZSTD = 0x8000
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class FatbinError(ValueError):
    """A fatbin that cannot be read (truncated, or compressed in a way not supported)."""


@dataclass(frozen=True)
class FatbinEntry:
    kind: int  # KIND_PTX or KIND_ELF
    sm: int  # 90 for sm_90
    compressed: bool
    payload: bytes  # decompressed

    @property
    def arch(self) -> str:
        return f"sm_{self.sm}"


def lz4_block_decompress(data: bytes, size: int) -> bytes:
    """Decode one LZ4 block into `size` bytes; FatbinError for a malformed one."""
    try:
        return _lz4_block(data, size)
    except IndexError:
        raise FatbinError("LZ4 block: truncated") from None


def _extended_length(data: bytes, pos: int, length: int) -> tuple[int, int]:
    """A nibble of 15 continues in the following bytes, each added, until one below 255."""
    while True:
        extra = data[pos]
        pos += 1
        length += extra
        if extra != 255:
            return length, pos


def _lz4_block(data: bytes, size: int) -> bytes:
    """Decode one LZ4 block (the format of lz4's block API) into `size` bytes.

    A sequence is a token (literal length in the high nibble, match length
    minus 4 in the low one; 15 means more length bytes follow, each added, until
    one below 255), the literals, then a 2-byte little-endian match offset. The
    last sequence has literals only.
    """
    out = bytearray()
    pos, end = 0, len(data)
    while pos < end:
        token = data[pos]
        pos += 1
        literals = token >> 4
        if literals == 15:
            literals, pos = _extended_length(data, pos, literals)
        if pos + literals > end:
            raise FatbinError("LZ4 block: literals run past the end")
        out += data[pos:pos + literals]
        pos += literals
        if pos >= end:
            break
        offset = data[pos] | data[pos + 1] << 8
        pos += 2
        if offset == 0 or offset > len(out):
            raise FatbinError("LZ4 block: match offset outside the output")
        length = (token & 0x0F) + 4
        if length == 19:
            length, pos = _extended_length(data, pos, length)
        start = len(out) - offset
        if length <= offset:
            out += out[start:start + length]
        else:  # overlapping copy repeats the last `offset` bytes
            for i in range(length):
                out.append(out[start + i])
        if len(out) > size:
            raise FatbinError("LZ4 block: output larger than the recorded size")
    if len(out) != size:
        raise FatbinError(f"LZ4 block: decoded {len(out)} bytes, header says {size}")
    return bytes(out)


def _zstd_decompress(data: bytes, size: int) -> bytes:
    try:
        from compression import zstd  # Python 3.14+

        return zstd.decompress(data)
    except ImportError:
        pass
    try:
        import zstandard
    except ImportError:
        raise FatbinError("fatbin entry compressed with Zstandard (CUDA 13 nvcc); "
                          "install the 'zstandard' package to read it") from None
    try:
        return zstandard.ZstdDecompressor().decompress(data, max_output_size=size)
    except zstandard.ZstdError as exc:
        raise FatbinError(f"Zstandard payload does not decode: {exc}") from None


def _decompress(payload: bytes, size: int) -> bytes:
    if payload[:4] == ZSTD_MAGIC:
        return _zstd_decompress(payload, size)
    return lz4_block_decompress(payload, size)


def read_fatbin(data, start: int = 0) -> tuple[list[FatbinEntry], int]:
    """Entries of the fatbin at `start` and the offset just past it."""
    if len(data) < start + _HEADER.size:
        raise FatbinError("truncated fatbin header")
    magic, _version, header_size, size = _HEADER.unpack_from(data, start)
    if struct.pack("<I", magic) != FATBIN_MAGIC or header_size < _HEADER.size:
        raise FatbinError("not a fatbin header")
    pos, end = start + header_size, start + header_size + size
    if end > len(data):
        raise FatbinError("fatbin runs past the end of the file")
    entries = []
    while pos + _ENTRY.size <= end:
        (kind, _v, entry_header, payload_size, compressed_size, _opt, _minor, _major, sm, _no, _nl,
         flags, _zero, decompressed_size) = _ENTRY.unpack_from(data, pos)
        if entry_header < _ENTRY.size or pos + entry_header + payload_size > end:
            raise FatbinError(f"fatbin entry at offset {pos} runs past its fatbin")
        body = bytes(data[pos + entry_header:pos + entry_header + payload_size])
        compressed = bool(flags & (FLAG_LZ4 | FLAG_ZSTD))
        if compressed:
            body = _decompress(body[:compressed_size or payload_size], decompressed_size)
        entries.append(FatbinEntry(kind, sm, compressed, body))
        pos += entry_header + payload_size
    return entries, end


def scan_fatbins(path) -> Iterator[FatbinEntry]:
    """Every fatbin entry in a file (host object, library, executable or .fatbin)."""
    with open(path, "rb") as handle:
        try:
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # empty file
            return
        with data:
            at = data.find(FATBIN_MAGIC)
            while at != -1:
                if not _plausible_header(data, at):
                    # Four bytes that merely look like the magic (host code or data).
                    at = data.find(FATBIN_MAGIC, at + 4)
                    continue
                entries, after = read_fatbin(data, at)
                yield from entries
                at = data.find(FATBIN_MAGIC, after)


def _plausible_header(data, at: int) -> bool:
    if len(data) < at + _HEADER.size:
        return False
    _magic, version, header_size, size = _HEADER.unpack_from(data, at)
    return version == 1 and header_size == _HEADER.size and at + header_size + size <= len(data)
