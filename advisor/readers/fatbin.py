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

Limits (a file of a few kilobytes must not expand to gigabytes): an entry is
decoded only when its payload is read (PTX that nobody reads is never
decoded), to exactly the size its header declares and never a byte more (the
decoder is stopped there, whatever size a Zstandard frame claims for itself);
an entry may declare at most MAX_ENTRY_BYTES (256 MiB) and one file's entries
together at most MAX_TOTAL_BYTES (1 GiB). Beyond either, the file is bad input
(FatbinError naming the entry, its size and the limit). The largest cubins in
NVIDIA's own libraries are tens of megabytes.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

from ...specs.errors import InputError

FATBIN_MAGIC = struct.pack("<I", 0xBA55ED50)
_HEADER = struct.Struct("<IHHQ")  # magic, version, header size, payload size
# kind, version, header size, payload size, compressed size, options offset,
# minor, major, sm, name offset, name length, flags, zero, decompressed size
_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")
KIND_PTX, KIND_ELF = 1, 2
FLAG_LZ4 = 0x2000
FLAG_ZSTD = 0x8000
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
MAX_ENTRY_BYTES = 256 << 20
MAX_TOTAL_BYTES = 1 << 30


class FatbinError(InputError):
    """A fatbin that cannot be read (truncated, compressed in a way not supported,
    or larger than the limits above)."""


class _Budget:
    """Bytes one scan may still decode. One per scan_fatbins call, shared by its
    entries: the total limit holds however the caller reads them."""

    __slots__ = ("left", "limit")

    def __init__(self, limit: int):
        self.left = self.limit = limit

    def spend(self, size: int, where: str) -> None:
        if size > self.left:
            raise FatbinError(f"{where}: decoding its {size:,} bytes would take the file's fatbin entries "
                              f"past {self.limit >> 20} MiB in all (limit)")
        self.left -= size


@dataclass(frozen=True)
class FatbinEntry:
    kind: int  # KIND_PTX or KIND_ELF
    sm: int  # 90 for sm_90
    compressed: bool
    stored: bytes = field(repr=False)  # the payload as stored (compressed or not)
    size: int = 0  # the payload's size once decoded, as the entry header declares it
    offset: int = 0  # of the entry header in the file, for messages
    budget: _Budget | None = field(default=None, repr=False, compare=False)

    @property
    def arch(self) -> str:
        return f"sm_{self.sm}"

    @cached_property
    def payload(self) -> bytes | bytearray:
        """The decoded payload, decoded on first read (cached_property writes the
        instance dict directly, so a frozen dataclass may hold it)."""
        if not self.compressed:
            return self.stored
        where = f"fatbin entry at offset {self.offset} ({self.arch})"
        if self.budget is not None:
            self.budget.spend(self.size, where)
        try:
            return _decompress(self.stored, self.size)
        except FatbinError as exc:
            raise FatbinError(f"{where}: {exc}") from None


def lz4_block_decompress(data: bytes, size: int) -> bytes | bytearray:
    """Decode one LZ4 block into exactly `size` bytes; FatbinError for a malformed one.

    Linear in len(data) + size: literals and matches are copied as slices (an
    overlapping match repeats its last `offset` bytes with one multiplication),
    and the output never grows past `size`, allocated once.
    """
    if size > MAX_ENTRY_BYTES:
        raise FatbinError(f"LZ4 block: {size:,} bytes decoded is over the {MAX_ENTRY_BYTES >> 20} MiB limit per entry")
    try:
        return _lz4_block(bytes(data), size)
    except IndexError:
        raise FatbinError("LZ4 block: truncated") from None


def _extended_length(data: bytes, pos: int, length: int, limit: int) -> tuple[int, int]:
    """A nibble of 15 continues in the following bytes, each added, until one below 255.
    A run of 255s may not describe more than `limit` bytes (what the output has room for):
    stopping there keeps a hostile run from costing more than the output it would fill."""
    end = len(data)
    while True:
        extra = data[pos]
        pos += 1
        length += extra
        if extra != 255:
            return length, pos
        if length > limit:
            raise FatbinError("LZ4 block: output larger than the recorded size")
        if pos >= end:
            raise IndexError


def _lz4_block(data: bytes, size: int) -> bytearray:
    """Decode one LZ4 block (the format of lz4's block API) into `size` bytes.

    A sequence is a token (literal length in the high nibble, match length
    minus 4 in the low one; 15 means more length bytes follow, each added, until
    one below 255), the literals, then a 2-byte little-endian match offset. The
    last sequence has literals only.
    """
    out = bytearray(size)
    with memoryview(out) as view:  # slices of a view copy no bytes until assigned
        return _lz4_sequences(data, size, out, view)


def _lz4_sequences(data: bytes, size: int, out: bytearray, view: memoryview) -> bytearray:
    filled = 0
    pos, end = 0, len(data)
    while pos < end:
        token = data[pos]
        pos += 1
        literals = token >> 4
        if literals == 15:
            literals, pos = _extended_length(data, pos, literals, size - filled)
        if pos + literals > end:
            raise FatbinError("LZ4 block: literals run past the end")
        if filled + literals > size:
            raise FatbinError("LZ4 block: output larger than the recorded size")
        out[filled:filled + literals] = data[pos:pos + literals]
        filled += literals
        pos += literals
        if pos >= end:
            break
        offset = data[pos] | data[pos + 1] << 8
        pos += 2
        if offset == 0 or offset > filled:
            raise FatbinError("LZ4 block: match offset outside the output")
        length = (token & 0x0F) + 4
        if length == 19:
            length, pos = _extended_length(data, pos, length, size - filled)
        if filled + length > size:
            raise FatbinError("LZ4 block: output larger than the recorded size")
        start = filled - offset
        # An overlapping match repeats the last `offset` bytes: copy what is already
        # repeated, doubling each time, in whole periods so the phase stays right.
        copied = 0
        while copied < length:
            n = min(offset + copied, length - copied)
            view[filled + copied:filled + copied + n] = view[start:start + n]
            copied += n
        filled += length
    if filled != size:
        raise FatbinError(f"LZ4 block: decoded {filled} bytes, header says {size}")
    return out


def _zstd_decompress(data: bytes, size: int) -> bytes:
    """Decode one Zstandard frame, stopping at `size` + 1 bytes: the frame's own
    content size is not trusted, the entry header's size is enforced."""
    try:
        from compression import zstd  # Python 3.14+

        try:
            decoder = zstd.ZstdDecompressor()
            out = decoder.decompress(data, max_length=size + 1)
        except zstd.ZstdError as exc:
            raise FatbinError(f"Zstandard payload does not decode: {exc}") from None
    except ImportError:
        try:
            import zstandard
        except ImportError:
            raise FatbinError("fatbin entry compressed with Zstandard (CUDA 13 nvcc); "
                              "install the 'zstandard' package to read it") from None
        try:
            with zstandard.ZstdDecompressor().stream_reader(data) as reader:
                out = reader.read(size + 1)
        except zstandard.ZstdError as exc:
            raise FatbinError(f"Zstandard payload does not decode: {exc}") from None
    if len(out) > size:
        raise FatbinError(f"Zstandard payload decodes to more than the {size:,} bytes its header declares")
    if len(out) != size:
        raise FatbinError(f"Zstandard payload decodes to {len(out):,} bytes, its header declares {size:,}")
    return out


def _decompress(payload: bytes, size: int) -> bytes | bytearray:
    if payload[:4] == ZSTD_MAGIC:
        return _zstd_decompress(payload, size)
    return lz4_block_decompress(payload, size)


def _fatbin_end(data, start: int) -> int:
    if len(data) < start + _HEADER.size:
        raise FatbinError("truncated fatbin header")
    magic, _version, header_size, size = _HEADER.unpack_from(data, start)
    if struct.pack("<I", magic) != FATBIN_MAGIC or header_size < _HEADER.size:
        raise FatbinError("not a fatbin header")
    if start + header_size + size > len(data):
        raise FatbinError(f"fatbin at offset {start} runs past the end of the file (cut short: its header "
                          f"declares {header_size + size:,} bytes, {len(data) - start:,} are there)")
    return start + header_size + size


def _entries(data, start: int, end: int, budget: _Budget | None) -> Iterator[FatbinEntry]:
    """One entry at a time, so that a caller holds one decoded payload at a time."""
    pos = start + _HEADER.unpack_from(data, start)[2]
    while pos + _ENTRY.size <= end:
        (kind, _v, entry_header, payload_size, compressed_size, _opt, _minor, _major, sm, _no, _nl,
         flags, _zero, decompressed_size) = _ENTRY.unpack_from(data, pos)
        if entry_header < _ENTRY.size or pos + entry_header + payload_size > end:
            raise FatbinError(f"fatbin entry at offset {pos} runs past its fatbin")
        body = bytes(data[pos + entry_header:pos + entry_header + payload_size])
        compressed = bool(flags & (FLAG_LZ4 | FLAG_ZSTD))
        if compressed:
            if decompressed_size > MAX_ENTRY_BYTES:
                raise FatbinError(f"fatbin entry at offset {pos} (sm_{sm}) declares {decompressed_size:,} bytes "
                                  f"decompressed, over the {MAX_ENTRY_BYTES >> 20} MiB limit per entry")
            body = body[:compressed_size or payload_size]
        yield FatbinEntry(kind=kind, sm=sm, compressed=compressed, stored=body,
                          size=decompressed_size if compressed else len(body), offset=pos, budget=budget)
        pos += entry_header + payload_size


def scan_fatbins(file, limit: int = MAX_TOTAL_BYTES) -> Iterator[FatbinEntry]:
    """Every fatbin entry in a file (host object, library, executable or .fatbin), given by
    path or as an open binary file, one at a time; their decoded payloads together may not
    exceed `limit` bytes."""
    if hasattr(file, "fileno"):
        yield from _scan(file, _Budget(limit))
        return
    with open(file, "rb") as handle:
        yield from _scan(handle, _Budget(limit))


def _scan(handle, budget: _Budget) -> Iterator[FatbinEntry]:
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
            after = _fatbin_end(data, at)
            yield from _entries(data, at, after, budget)
            at = data.find(FATBIN_MAGIC, after)


def _plausible_header(data, at: int) -> bool:
    """Whether the magic at `at` begins a fatbin's header (its version and header size too: eight
    bytes no host code or data holds by chance). One that runs past the end of the file is a
    fatbin cut short, which `_fatbin_end` reports; it is not skipped as four stray bytes."""
    if len(data) < at + _HEADER.size:
        return False
    _magic, version, header_size, _size = _HEADER.unpack_from(data, at)
    return version == 1 and header_size == _HEADER.size
