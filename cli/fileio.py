"""Files the commands write (plots, lint reports, saved device specs): whole or not at all."""

from __future__ import annotations

import errno
import os
import secrets
import stat
import sys

# Writing failed for want of room or a working device, not because of the path given: exit 74
# (the output could not be written), like stdout on a full disk, rather than 2 (bad input).
OUTPUT_FAILURES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def output_error(exc: OSError, option: str, path) -> Exception:
    """What a failed write to `path` (given by `option`) raises: the OSError itself, named, for
    the main loop's exit 74 when the device is full or failing; else a one-line bad input."""
    from .common import BadInput

    if exc.errno in OUTPUT_FAILURES:
        return OSError(exc.errno, f"{exc.strerror} ({option})", str(path))
    return BadInput(f"{option}: cannot write {path}: {exc.strerror}")


def write_atomically(path: str | os.PathLike, data) -> None:
    """Write `data` (bytes, or an iterable of bytes chunks) to `path`, whole or not at all.

    A regular file or a new path is written beside itself and renamed over, so
    readers never see a partial file and a failed write leaves nothing behind.
    The temporary file has an unpredictable name and is created exclusively,
    never through a link (O_EXCL | O_NOFOLLOW), with the mode a new file gets
    (0666 less the umask) or the replaced file's permission bits. `-` is
    stdout; a device or FIFO (`-o /dev/null`, `-o >(gzip > r.gz)`) is written
    directly, never replaced by a regular file. A symlink is followed, as a
    shell's `>` follows it: its target is written (replaced atomically when
    it is a regular file or does not exist yet), and the link stays a link.
    """
    if os.fspath(path) in ("-", b"-"):
        _write_stream(getattr(sys.stdout, "buffer", None), data)
        return
    target = os.path.realpath(path)  # through every link, to the file the name means
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        # A device, FIFO or socket: written in place (an error for a directory).
        fd = os.open(target, os.O_WRONLY | _NOFOLLOW | _CLOEXEC)
        with open(fd, "wb", buffering=1 << 20) as handle:
            _write_stream(handle, data)
        return
    folder, name = os.path.split(target)
    fd, partial = _exclusive(folder, name)
    try:
        if mode is not None:  # keep the replaced file's permissions (a new file's umask is already applied)
            os.fchmod(fd, stat.S_IMODE(mode))
        with open(fd, "wb", buffering=1 << 20) as handle:
            _write_stream(handle, data)
        os.replace(partial, target)
    except BaseException:
        try:
            os.unlink(partial)
        except OSError:
            pass
        raise


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _exclusive(folder: str, name: str) -> tuple[int, str]:
    """A new file beside the target, `.NAME.RANDOM.tmp`: created by this call alone
    (O_EXCL fails on anything already there, a planted symlink included)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        partial = os.path.join(folder, f".{name}.{secrets.token_hex(8)}.tmp")
        try:
            return os.open(partial, flags, 0o666), partial
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", os.path.join(folder, name))


def _write_stream(handle, data) -> None:
    if handle is None:  # a text-only stdout (a caller swapped one in)
        chunks = [data] if isinstance(data, bytes) else data
        sys.stdout.writelines(chunk.decode("utf-8", "surrogateescape") for chunk in chunks)
        sys.stdout.flush()
        return
    if isinstance(data, bytes):
        handle.write(data)
    else:
        for chunk in data:  # write(), not writelines(): a wrapper that tees output may override write alone
            handle.write(chunk)
    handle.flush()
