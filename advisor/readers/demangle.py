"""C++ names as people wrote them: `_Z5saxpyIfLi4EEvT_PKS0_PS0_i` ->
`void saxpy<float, 4>(float, float const*, float*, int)`.

Uses the C++ runtime's own `__cxa_demangle` (libstdc++ or libc++) through
ctypes, the demangler c++filt and cu++filt are built on. Where no C++ runtime
can be loaded, names stay as written; nothing else depends on demangling.

Any string is accepted and none raises: a name that is not valid UTF-8 text
(lone surrogates, as undecodable bytes from a pipe arrive), holds a NUL (which
would cut it short on the way to C), or is longer than MAX_NAME characters
stays as written, and the writers make it valid for their format.
"""

from __future__ import annotations

import ctypes
from functools import lru_cache

# The runtimes' usual sonames (glibc Linux, LLVM's libc++, macOS), tried before
# ctypes.util.find_library: importing that module alone costs ~10 ms of start-up.
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


@lru_cache(maxsize=65536)
def demangle(name: str) -> str:
    """The demangled name, or `name` itself when it is not a mangled C++ name."""
    if not name.startswith("_Z") or len(name) > MAX_NAME or "\0" in name:
        return name
    try:
        encoded = name.encode("utf-8")
    except UnicodeEncodeError:  # surrogates: bytes that were not UTF-8 to begin with
        return name
    runtime = _runtime()
    if runtime is None:
        return name
    function, free = runtime
    status = ctypes.c_int()
    pointer = function(encoded, None, None, ctypes.byref(status))
    if status.value != 0 or not pointer:
        return name
    try:
        return ctypes.string_at(pointer).decode("utf-8", errors="replace")
    finally:
        free(pointer)


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
