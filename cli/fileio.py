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
    the main loop's exit 74 when the device is full or failing; a broken pipe as one (exit 141,
    as for stdout: `-o /dev/stdout | head`); else bad input, which names the option."""
    from ..specs.errors import InputError

    if exc.errno == errno.EPIPE:
        return BrokenPipeError(errno.EPIPE, exc.strerror)
    if exc.errno in OUTPUT_FAILURES:
        return OSError(exc.errno, f"{exc.strerror} ({option})", str(path))
    return InputError(f"{option}: cannot write {path}: {exc.strerror}")


def write_atomically(path: str | os.PathLike, data) -> None:
    """Write `data` (bytes, or an iterable of bytes chunks) to `path` as a shell's `>` would,
    a regular file whole or not at all.

    A regular file or a new path is written beside itself and renamed over, so
    readers never see a partial file and a failed write leaves nothing behind.
    The temporary file has an unpredictable name and is created exclusively,
    never through a link (O_EXCL | O_NOFOLLOW), with the mode a new file gets
    (0666 less the umask) or the replaced file's permission bits. Anything
    else is written in place, never replaced by a regular file: `-` is stdout;
    /dev/stdout, /dev/stderr and /dev/fd/N are the descriptors themselves, as
    a shell takes them (`-o /dev/stdout | head`, `-o >(gzip > r.gz)`); a
    device, FIFO or socket is opened for writing. A symlink is followed, as a
    shell's `>` follows it: its target is written (replaced atomically when
    it is a regular file or does not exist yet), and the link stays a link.
    """
    if os.fspath(path) in ("-", b"-"):
        _write_stream(getattr(sys.stdout, "buffer", None), data)
        return
    descriptor = open_descriptor(path)
    if descriptor is not None:
        _write_descriptor(descriptor, data)
        return
    mode = _mode(path)
    if mode is not None and not stat.S_ISREG(mode):
        # A device, FIFO or socket, named or through a link (/proc/self/fd/1): written in place.
        fd = os.open(path, os.O_WRONLY | _CLOEXEC)  # never O_CREAT: nothing is made here
        with open(fd, "wb", buffering=1 << 20) as handle:
            _write_stream(handle, data)
        return
    target = os.path.realpath(path)  # through every link, to the file the name means
    _refuse_unwritable(target, mode)
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


def check_writable(path: str | os.PathLike | None, option: str) -> None:
    """Raise, before anything is computed or printed, what writing `path` (given by `option`;
    None: not given) would raise (output_error's exception): a command with several outputs
    sends none of them when one of them cannot be written. Nothing is left behind."""
    if path is None:
        return
    try:
        _probe(path)
    except OSError as exc:
        raise output_error(exc, option, path) from None


def _probe(path) -> None:
    if os.fspath(path) in ("-", b"-"):
        return
    descriptor = open_descriptor(path)
    if descriptor is not None:
        import fcntl  # POSIX only, as the names of descriptors are

        if fcntl.fcntl(descriptor, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY:
            raise OSError(errno.EBADF, "not open for writing")
        return
    mode = _mode(path)
    if mode is not None and not stat.S_ISREG(mode):
        if stat.S_ISDIR(mode):
            raise OSError(errno.EISDIR, os.strerror(errno.EISDIR))
        if not os.access(path, os.W_OK):
            raise OSError(errno.EACCES, os.strerror(errno.EACCES))
        return  # a FIFO is not opened here: with no reader yet, that would wait
    _refuse_unwritable(os.path.realpath(path), mode)
    folder, name = os.path.split(os.path.realpath(path))
    fd, partial = _exclusive(folder, name)
    os.close(fd)
    os.unlink(partial)


def _refuse_unwritable(target: str, mode: int | None) -> None:
    """A shell's `>` opens an existing file for writing, which its permissions may refuse (read-only,
    or another user's); replacing it by a rename needs only the folder's, so ask as `>` would."""
    if mode is not None and not os.access(target, os.W_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), target)


# The names a shell takes as the descriptors themselves (bash duplicates the descriptor rather than
# opening the name): reopening /proc/self/fd/1 would start a file written with >> at its beginning.
_STANDARD = {"/dev/stdout": 1, "/dev/stderr": 2}


def open_descriptor(path) -> int | None:
    """The descriptor `path` names (/dev/stdout, /dev/stderr, /dev/fd/N), or None."""
    text = os.fsdecode(path)
    if text in _STANDARD:
        return _STANDARD[text]
    number = text.removeprefix("/dev/fd/")
    if number != text and number.isdigit() and number.isascii() and len(number) < 10:
        return int(number)
    return None


def _write_descriptor(descriptor: int, data) -> None:
    """Write to an open descriptor: stdout and stderr through their streams (so that what a command
    printed there first stays first), any other through a duplicate, closed after."""
    stream = {1: sys.stdout, 2: sys.stderr}.get(descriptor)
    if stream is not None:
        stream.flush()
        _write_stream(getattr(stream, "buffer", None), data, stream)
        return
    with open(os.dup(descriptor), "wb", buffering=1 << 20) as handle:
        _write_stream(handle, data)


def _mode(path) -> int | None:
    """st_mode of what `path` names after every link (a magic link of /proc included), or None."""
    try:
        return os.stat(path).st_mode
    except FileNotFoundError:
        return None


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


def _write_stream(handle, data, text_stream=None) -> None:
    if handle is None:  # a text-only stream (a caller swapped one in)
        text_stream = text_stream or sys.stdout
        chunks = [data] if isinstance(data, bytes) else data
        text_stream.writelines(chunk.decode("utf-8", "surrogateescape") for chunk in chunks)
        text_stream.flush()
        return
    if isinstance(data, bytes):
        handle.write(data)
    else:
        for chunk in data:  # write(), not writelines(): a wrapper that tees output may override write alone
            handle.write(chunk)
    handle.flush()


def write_text(text, output: str | None, option: str = "--output") -> None:
    """Write `text`: a str, or an iterable of str chunks as a serializer yields them (a lint
    report can be tens of megabytes), as UTF-8, to stdout or `output` (given by `option`)."""
    chunks = (chunk.encode("utf-8", "surrogatepass") for chunk in ([text] if isinstance(text, str) else text))
    if output is None:
        binary = getattr(sys.stdout, "buffer", None)  # None where a caller swapped in a text-only stream
        if binary is None:
            sys.stdout.writelines(chunk.decode("utf-8") for chunk in chunks)
            return
        sys.stdout.flush()  # anything already written as text goes first
        for chunk in chunks:  # write(), not writelines(): a wrapper that tees output may override write alone
            binary.write(chunk)
        binary.flush()
        return
    try:
        write_atomically(output, chunks)
    except OSError as exc:
        raise output_error(exc, option, output) from None


def stdin_text():
    """Standard input as text decoded like an input file (UTF-8, an undecodable byte replaced),
    whatever the locale: a log piped from a build may hold any bytes."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:
        return sys.stdin
    return _bounded_lines(buffer)  # a generator: a wrapper would close stdin when collected


# No ptxas log, cuobjdump listing or Nsight Compute export has a line near this; /dev/zero or a
# binary piped by mistake has no line end at all, and a line is held whole until it ends.
MAX_STDIN_LINE = 1 << 20


def _bounded_lines(buffer):
    """The lines of binary `buffer`, decoded; InputError at a line longer than MAX_STDIN_LINE,
    read no further than that."""
    from ..specs.errors import InputError

    number = 0
    while line := buffer.readline(MAX_STDIN_LINE + 1):
        number += 1
        if len(line) > MAX_STDIN_LINE:
            raise InputError(f"standard input: line {number} is longer than {MAX_STDIN_LINE >> 20} MiB, which no "
                             "build log, listing or Nsight Compute export holds (binary data?)")
        yield line.decode("utf-8", "replace")
