"""Input files read whole (configs, probe documents, baselines, CUDA sources), at most
a size no such file reaches: a path such as /dev/zero, or a file given by mistake,
is one line naming the limit, not gigabytes of memory."""

from __future__ import annotations

import errno
import os
import stat

MAX_DOCUMENT_BYTES = 16 << 20  # a config, probe document or baseline: real ones are kilobytes
MAX_SOURCE_BYTES = 32 << 20  # a CUDA source file: the largest real ones are a few megabytes


def read_input(path, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The file's bytes; OSError (errno EFBIG, its strerror naming the limit) when it holds more
    than `limit`, found by reading one byte past it (a device reports no size)."""
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit >> 20} MiB, more than any file of this kind")
    return data


# The compiler opens the source again after tuneadvise read it: a FIFO then blocks or gives nothing.
NOT_COMPILABLE = "not a regular file (a FIFO or a device), which the compiler cannot read again; name a file"
# No C++ source holds one; the host preprocessor warns of each and takes quadratic time on them
# (40,000 lines holding one: gcc -E 22 s; 500,000: past --compile-timeout).
HOLDS_NUL = "holds NUL bytes, which no CUDA source does and the compiler's preprocessor takes quadratic time on"


def read_source_to_compile(path, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """read_input for a source the compiler will read after tuneadvise: a regular file (after
    links), checked before opening it, which for a FIFO with no writer blocks without end."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(errno.EINVAL, NOT_COMPILABLE)
    data = read_input(path, limit)
    if b"\0" in data:
        raise OSError(errno.EINVAL, HOLDS_NUL)
    return data
