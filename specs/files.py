"""Files read whole, at most a size no such file reaches (configs, spec files, probe documents,
baselines, CUDA sources, cubins, cache entries): a path such as /dev/zero, or a file given by
mistake, is one line naming the limit, never gigabytes of memory and never a silent cut.

Kept in specs/, the lowest layer, because spec files are read through it too.
"""

from __future__ import annotations

import errno
import os
import stat
import sys

from .errors import quoted

# os.path rather than pathlib: every command imports this module, and pathlib brings urllib.parse.
DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")  # the shipped spec files
MAX_DOCUMENT_BYTES = 16 << 20  # a config, spec file, probe document or baseline: real ones are kilobytes
MAX_SOURCE_BYTES = 32 << 20  # a CUDA source file: the largest real ones are a few megabytes
MAX_CUBIN_BYTES = 256 << 20  # a cubin (or PTX) read whole: the largest real ones are tens of megabytes


class NotRegularFile(OSError):
    """A link, device or FIFO where only a regular file is read (see read_bounded's `regular_only`)."""


def open_regular(path):
    """`path` opened for binary reading if it is a regular file; links are not followed and a FIFO
    never blocks (NotRegularFile otherwise)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotRegularFile(0, "not a regular file")
    return os.fdopen(fd, "rb")


def read_bounded(path, limit: int = MAX_DOCUMENT_BYTES, what: str = "file of this kind",
                 regular_only: bool = False) -> bytes:
    """The file's bytes; OSError (errno EFBIG, its strerror naming the limit and `what`) when it
    holds more than `limit`, found by reading one byte past it (a device reports no size, and a
    file may grow while read). `regular_only`: refuse anything but a regular file, links not
    followed, without blocking on a FIFO (NotRegularFile)."""
    with open_regular(path) if regular_only else open(path, "rb") as handle:
        return read_bounded_from(handle, limit, what)


def read_bounded_from(handle, limit: int = MAX_DOCUMENT_BYTES, what: str = "file of this kind") -> bytes:
    """read_bounded on a binary stream already open (a reader that opened the file once to tell
    what it is): the rest of its bytes, or OSError (errno EFBIG) past `limit`."""
    data = handle.read(limit + 1)
    if len(data) > limit:
        size = f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit} bytes"
        raise OSError(errno.EFBIG, f"larger than {size}, more than any {what}")
    return data


# The compiler opens the source again after tuneadvise read it: a FIFO then blocks or gives nothing.
NOT_COMPILABLE = "not a regular file (a FIFO or a device), which the compiler cannot read again; name a file"
# No C++ source holds one; the host preprocessor warns of each and takes quadratic time on them
# (40,000 lines holding one: gcc -E 22 s; 500,000: past --compile-timeout).
HOLDS_NUL = "holds NUL bytes, which no CUDA source does and the compiler's preprocessor takes quadratic time on"


def read_source_to_compile(path, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """read_bounded for a source the compiler will read after tuneadvise: a regular file (after
    links), checked before opening it, which for a FIFO with no writer blocks without end."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(errno.EINVAL, NOT_COMPILABLE)
    data = read_bounded(path, limit)
    if b"\0" in data:
        raise OSError(errno.EINVAL, HOLDS_NUL)
    return data


def source_text(path) -> str:
    """A source the compiler will read, as text (read_source_to_compile; bytes that are not UTF-8
    replaced): OSError where it cannot be read."""
    return read_source_to_compile(path).decode("utf-8", errors="replace")


def tomllib():
    """The standard library's TOML reader (Python 3.11+), else its backport `tomli` (3.10)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    return tomllib


def document_text(data: bytes) -> str:
    """A user's document (a config, a spec file) as text: UTF-8, a leading byte-order mark (as
    Windows editors save) dropped, as the JSON reader drops it from bytes; TOML and a str refuse it."""
    return data.decode("utf-8-sig")


def read_toml(path: str | os.PathLike) -> dict:
    """A TOML file (a spec, sources or releases file), read through read_bounded."""
    return tomllib().loads(document_text(read_bounded(path, what="spec file")))


def twice(key) -> str:
    """What a document that names `key` twice in one object or mapping is told."""
    return f"the key {quoted(key)} is given twice in one object"


class DuplicateKey(ValueError):
    """A JSON object that names one key twice: JSON readers keep the last silently, TOML refuses."""


def _unique_pairs(pairs: list) -> dict:
    found = dict(pairs)
    if len(found) == len(pairs):
        return found
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise DuplicateKey(twice(key))
        seen.add(key)
    return found


def loads_json(data):
    """json.loads for a user's document (a config, a spec file): an object that names a key twice
    is DuplicateKey, as in TOML, rather than its last value taken without a word."""
    import json

    return json.loads(data, object_pairs_hook=_unique_pairs)
