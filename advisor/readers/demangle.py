"""C++ names as people wrote them: `_Z5saxpyIfLi4EEvT_PKS0_PS0_i` ->
`void saxpy<float, 4>(float, float const*, float*, int)`.

Uses the C++ runtime's own `__cxa_demangle` (libstdc++ or libc++) through
ctypes, the demangler c++filt and cu++filt are built on. Where no C++ runtime
can be loaded, names stay as written; nothing else depends on demangling.

`__cxa_demangle` has no bound of its own: a name whose back-references nest
doubles its output (and the runtime's walk over it) per level, so 265 bytes
took 4.4 s and 436 MB, 313 bytes 93 s and 7 GB. Names that can refer back are
therefore demangled in a worker process (forked; a fresh interpreter when this
process has threads), all names of a batch in one worker (`demangle_many`, what
lint calls), with WORKER_MEMORY more address space than it starts with,
NAME_SECONDS without progress and BATCH_SECONDS in all; a name that fails
those bounds, or whose demangled text is over MAX_DEMANGLED characters, stays
as written. Real names take microseconds each, so one worker serves a whole
batch.

Any string is accepted and none raises: a name that is not valid UTF-8 text
(lone surrogates, as undecodable bytes from a pipe arrive), holds a NUL (which
would cut it short on the way to C), or is longer than MAX_NAME characters
stays as written, and the writers make it valid for their format.
"""

from __future__ import annotations

import ctypes
import os
import re
import select
import signal
import struct
import sys
import threading
import time
from fnmatch import fnmatchcase
from functools import lru_cache

# The runtimes' usual sonames (glibc Linux, LLVM's libc++, macOS), tried before
# ctypes.util.find_library, whose import a command pays for only where these are missing.
_SONAMES = ("libstdc++.so.6", "libc++.so.1", "libc++.1.dylib")
MAX_NAME = 1 << 16  # the longest real kernel names (CUTLASS templates) are a few thousand characters


def _libraries():
    yield from _SONAMES
    import ctypes.util

    for name in ("stdc++", "c++"):
        path = ctypes.util.find_library(name)
        if path:
            yield path


@lru_cache(maxsize=1)
def _runtime():
    for path in _libraries():
        try:
            library = ctypes.CDLL(path)
            function = library.__cxa_demangle
        except (OSError, AttributeError):
            continue
        function.restype = ctypes.c_void_p
        function.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t),
                             ctypes.POINTER(ctypes.c_int)]
        free = ctypes.CDLL(None).free
        free.argtypes = [ctypes.c_void_p]
        return function, free
    return None


# A name that refers back to an earlier part of itself (a substitution S<seq>_ or a template
# parameter T<n>_) can expand without bound: each level of back-references may double the
# demangled text, so a 265-byte name demangles to 436 MB. Names without one expand linearly
# and are demangled here; names with one are demangled in a worker process whose memory and
# time are bounded (below), all of a batch in one worker.
_REFERENCE = re.compile(r"[ST][0-9A-Z]*_")
MAX_DEMANGLED = 1 << 16  # characters; a longer demangled name is one built to expand, and stays as written
WORKER_MEMORY = 16 << 20  # address space a worker may add to what it starts with (demangled names are < 1 MB)
NAME_SECONDS = 0.5  # a worker that makes no progress for this long is stopped; its name stays as written
BATCH_SECONDS = 2.0  # demangling time for one batch; names not reached by then stay as written


@lru_cache(maxsize=65536)
def demangle(name: str) -> str:
    """The demangled name, or `name` itself when it is not a mangled C++ name (or demangling
    it would exceed the bounds above)."""
    return demangle_many((name,))[name]


def demangle_many(names) -> dict[str, str]:
    """{name: demangled name} for every name of the iterable, one worker process for all
    the names that need one: what a lint of thousands of kernels calls once."""
    result: dict[str, str] = {}
    apart = []
    for name in dict.fromkeys(names):
        if not _demanglable(name) or _runtime() is None:
            result[name] = name
        elif _REFERENCE.search(name) is None:
            result[name] = _demangle_here(name.encode("utf-8")) or name
        else:
            apart.append(name)
    if apart:
        result.update(_demangle_apart(apart))
    return result


def _demanglable(name: str) -> bool:
    if not name.startswith("_Z") or len(name) > MAX_NAME or "\0" in name:
        return False
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # surrogates: bytes that were not UTF-8 to begin with
        return False
    return True


def _demangle_here(encoded: bytes) -> str | None:
    """__cxa_demangle in this process: None when it fails or the result is over MAX_DEMANGLED."""
    function, free = _runtime()
    status = ctypes.c_int()
    pointer = function(encoded, None, None, ctypes.byref(status))
    if status.value != 0 or not pointer:
        return None
    try:
        text = ctypes.string_at(pointer)
    finally:
        free(pointer)
    return text.decode("utf-8", errors="replace") if len(text) <= MAX_DEMANGLED else None


# -- the worker: one process per batch, each answer written as soon as it is known ----------
#
# Record: one status byte (0 demangled, 1 stays as written), a 4-byte big-endian length, the
# UTF-8 text. The parent reads answers as they come; a worker that dies or stalls on a name
# leaves that name as written, and a fresh worker takes the names after it.

_HEADER = struct.Struct(">BI")


def _demangle_apart(names: list[str]) -> dict[str, str]:
    result: dict[str, str] = {}
    deadline = time.monotonic() + BATCH_SECONDS
    start = 0
    while start < len(names) and time.monotonic() < deadline:
        start = _one_worker(names, start, deadline, result)
    for name in names[start:]:  # the batch's time ran out
        result[name] = name
    return result


def _one_worker(names: list[str], start: int, deadline: float, result: dict[str, str]) -> int:
    """Demangle names[start:] in one worker until it ends, dies or stalls; the index to go on from."""
    pid, fd = _start_worker(names[start:])
    index, buffer = start, bytearray()
    try:
        while index < len(names):
            wait = min(NAME_SECONDS, deadline - time.monotonic())
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                break  # stalled on names[index] (or out of time)
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break  # the worker ended: died on names[index], or answered them all
            buffer += chunk
            offset = 0
            while len(buffer) - offset >= _HEADER.size:
                status, length = _HEADER.unpack_from(buffer, offset)
                if len(buffer) - offset - _HEADER.size < length:
                    break
                body = bytes(buffer[offset + _HEADER.size:offset + _HEADER.size + length])
                name = names[index]
                result[name] = body.decode("utf-8", errors="replace") if status == 0 else name
                offset += _HEADER.size + length
                index += 1
            del buffer[:offset]
    finally:
        _stop_worker(pid, fd)
    if index < len(names) and time.monotonic() < deadline:  # the name it died or stalled on stays as written
        result[names[index]] = names[index]
        index += 1
    return index


def _start_worker(names: list[str]):
    """(process id, read end of its answers). Forked where this process has one thread (fast:
    nothing to import); otherwise a fresh interpreter, since forking a threaded process can
    deadlock the child."""
    read_fd, write_fd = os.pipe()
    if hasattr(os, "fork") and _single_threaded():
        _runtime()  # loaded before the fork, once
        pid = os.fork()
        if pid == 0:  # the worker
            code = 1
            try:
                os.close(read_fd)
                _serve(names, write_fd)
                code = 0
            finally:
                os._exit(code)
        os.close(write_fd)
        return pid, read_fd
    import subprocess
    import tempfile

    with tempfile.TemporaryFile() as listing:
        listing.write("\0".join(names).encode("utf-8"))  # a name with a NUL is never demangled
        listing.seek(0)
        process = subprocess.Popen([sys.executable, "-c", f"from {__name__} import _worker_main; _worker_main()",
                                    str(write_fd)], stdin=listing, pass_fds=(write_fd,), close_fds=True)
    os.close(write_fd)
    return process.pid, read_fd


def _single_threaded() -> bool:
    """Whether this process has one thread, native ones included: a CUDA driver, CuPy or PyTorch
    start threads Python does not count, and a fork beside them can deadlock the child."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:  # no /proc: the threads Python knows of
        return threading.active_count() == 1


def _stop_worker(pid: int, fd: int) -> None:
    os.close(fd)
    try:
        os.kill(pid, signal.SIGKILL)  # a worker that finished is a zombie until reaped: killing it is harmless
    except OSError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _worker_main() -> None:
    """A fresh interpreter's worker: names on stdin, separated by NULs; answers to the fd argument."""
    names = sys.stdin.buffer.read().decode("utf-8").split("\0")
    _serve(names, int(sys.argv[1]))


def _serve(names, fd: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends the worker at once, even inside the C call
    _limit_resources()
    for name in names:
        text = _demangle_here(name.encode("utf-8"))
        body = text.encode("utf-8") if text is not None else b""
        record = _HEADER.pack(0 if text is not None else 1, len(body)) + body
        view = memoryview(record)
        while view:
            view = view[os.write(fd, view):]


def _limit_resources() -> None:
    """At most WORKER_MEMORY more address space than the worker has now (an expanding name makes
    the demangler's allocation fail: it answers 'not demangled'), and CPU seconds as a backstop
    to the parent's clock."""
    try:
        import resource
    except ImportError:  # not a POSIX system: the parent's clock still bounds the time
        return
    try:
        with open("/proc/self/statm") as statm:
            size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (size + WORKER_MEMORY, resource.RLIM_INFINITY))
    except (OSError, ValueError):
        pass
    try:
        used = resource.getrusage(resource.RUSAGE_SELF)
        seconds = int(used.ru_utime + used.ru_stime + BATCH_SECONDS) + 2
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, resource.RLIM_INFINITY))
    except (OSError, ValueError):
        pass


def base_name(demangled: str) -> str:
    """`void ns::saxpy<float, 4>(float, ...)` -> `ns::saxpy`: the name a glob most often means."""
    head = demangled.split("(", 1)[0]
    if "<" not in head:  # no template arguments to drop (most names)
        return head.rsplit(" ", 1)[-1]
    depth, cut = 0, len(head)
    for i, ch in enumerate(head):  # drop template arguments
        if ch == "<":
            if depth == 0:
                cut = min(cut, i)
            depth += 1
        elif ch == ">":
            depth -= 1
    head = head[:cut] if cut < len(head) else head
    return head.rsplit(" ", 1)[-1]


def signature(demangled: str) -> str:
    """`void saxpy<float, 4>(float, ...)` -> `saxpy<float, 4>(float, ...)`: the demangled name
    without its return type, which a glob such as `saxpy<float*` means."""
    depth = 0
    start = 0
    for i, ch in enumerate(demangled):
        if ch in "<(":
            if ch == "(" and depth == 0:
                break
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == " " and depth == 0:
            start = i + 1
    return demangled[start:]


def kernel_names(name: str, demangled: str | None = None) -> tuple[str, ...]:
    """(as written, demangled, base name, signature without the return type): what config globs
    match (docs/lint.md) and what source definitions are looked up by (the base name).
    `demangled`: the name already demangled (demangle_many), else it is demangled here."""
    if demangled is None:
        demangled = demangle(name)
    return name, demangled, base_name(demangled), signature(demangled)


def name_matches(name: str, glob: str, demangled: str | None = None) -> bool:
    """Whether `glob` matches any of the kernel's names (kernel_names): the mangled name, the
    demangled one, the base name or the signature, as --kernel and config entries match."""
    return any(fnmatchcase(n, glob) for n in kernel_names(name, demangled))
