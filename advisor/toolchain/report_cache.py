"""ptxas's reports on disk, keyed by everything that decides them, so that rerunning lint
or frontier on unchanged sources does not recompile.

The key is a SHA-256 over: this cache's format; the toolchain (nvcc's and ptxas's paths,
sizes and modification times, and ptxas's version line) and the host compiler nvcc would
run (`g++` on PATH: path, size, time); NVCC_PREPEND_FLAGS and NVCC_APPEND_FLAGS; the build
(source path, architecture, flags, cap, working directory); and the bytes of every file
the build reads, as `nvcc -M` lists them for that architecture and those flags (the
source, its headers, the host's system headers). A `.ptx` build reads only its file. So
a changed header, macro, flag or compiler is a different key, never a stale report.

An entry is one small JSON file named by its key, holding the key again, the log and
the log's SHA-256. Read back, an entry that does not parse or whose key or digest does
not match is ignored (and rewritten by the next compile): a torn write or a damaged
disk costs a compile, never a wrong figure. Entries are written atomically (a temporary
file in the same directory, then a rename). Only successful compiles are stored. Any
error of the disk or of `nvcc -M` means no caching for that build, never a failure;
`nvcc -M` runs within the build's time and memory (processes.py), as the compile does.

Where: TUNEADVISE_CACHE_DIR, else $XDG_CACHE_HOME/tuneadvise/ptxas, else
~/.cache/tuneadvise/ptxas; TUNEADVISE_CACHE_DIR=off (or --no-cache) turns it off.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import tempfile
import threading
from pathlib import Path

from ...specs.files import MAX_SOURCE_BYTES, read_bounded
from .discovery import Toolchain
from .processes import RunningCompilers, run_limited
from .settings import BuildSettings

FORMAT = "tuneadvise-ptxas-cache-1"
VARIABLE = "TUNEADVISE_CACHE_DIR"
MAX_ENTRY = 16 << 20  # bytes: a ptxas report is kilobytes; a larger file is not an entry
DEPENDENCY_TIMEOUT = 120
MAX_DEPENDENCY_OUTPUT = 16 << 20  # bytes of `nvcc -M`: a translation unit's header list is kilobytes


def default_directory() -> Path | None:
    chosen = os.environ.get(VARIABLE, "").strip()
    if chosen.lower() == "off":
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tuneadvise" / "ptxas"


def file_identity(path: str | None) -> list:
    """What makes a tool's file the same file: its path, size and modification time (a reinstall changes them)."""
    if not path:
        return [None]
    try:
        info = os.stat(path)
    except OSError:
        return [path, None]
    return [path, info.st_size, info.st_mtime_ns]


class EntryStore:
    """Text entries on disk by key, written atomically and checked when read back (the module's
    docstring); the ptxas cache's, and the disassembler's listings (disassembler.py)."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> str | None:
        try:
            # Only a regular file is an entry: a FIFO planted there would block, a link to /dev/zero never end.
            data = read_bounded(self._path(key), MAX_ENTRY, regular_only=True)
            entry = json.loads(data.decode("utf-8"))
        except (OSError, ValueError, UnicodeDecodeError, RecursionError):
            return None
        if not isinstance(entry, dict) or entry.get("key") != key or not isinstance(entry.get("log"), str):
            return None
        if hashlib.sha256(entry["log"].encode("utf-8", "surrogatepass")).hexdigest() != entry.get("sha256"):
            return None
        return entry["log"]

    def put(self, key: str, log: str) -> None:
        path = self._path(key)
        text = json.dumps({"key": key, "sha256": hashlib.sha256(log.encode("utf-8", "surrogatepass")).hexdigest(),
                           "log": log})
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".entry-")
            try:
                with os.fdopen(handle, "w", encoding="utf-8", errors="surrogatepass") as out:
                    out.write(text)
                os.replace(temporary, path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass  # a cache that cannot be written is no cache

    def get_bytes(self, key: str) -> bytes | None:
        text = self.get(key)
        try:
            return base64.b64decode(text.encode("ascii"), validate=True) if text is not None else None
        except (ValueError, UnicodeEncodeError):
            return None

    def put_bytes(self, key: str, data: bytes) -> None:
        self.put(key, base64.b64encode(data).decode("ascii"))


class PtxasCache(EntryStore):
    def __init__(self, directory: Path, toolchain: Toolchain, settings: BuildSettings | None = None,
                 running: RunningCompilers | None = None):
        super().__init__(directory)
        self.settings = settings or BuildSettings()  # `nvcc -M` runs within the compiles' time and memory
        self.running = running or RunningCompilers()  # stopped with the compiles on an interrupt
        self.base = [FORMAT, file_identity(toolchain.nvcc), file_identity(toolchain.ptxas), toolchain.version,
                     file_identity(shutil.which("g++")), os.environ.get("NVCC_PREPEND_FLAGS", ""),
                     os.environ.get("NVCC_APPEND_FLAGS", "")]
        self.toolchain = toolchain
        self._inputs: dict[tuple, list | None] = {}  # (source, arch, flags, cwd) -> the files it reads
        self._lock = threading.Lock()

    def key(self, build) -> str | None:
        """The build's key, or None when what it reads cannot be listed or read."""
        files = self._files(build)
        if files is None:
            return None
        digest = hashlib.sha256(json.dumps(self.base + [list(build)], default=str).encode())
        for path in files:
            try:
                data = read_bounded(path, MAX_SOURCE_BYTES, "source or header")
            except OSError:  # unreadable, or larger than any source: compiled again, never cached
                return None
            digest.update(b"\0" + os.fsencode(path) + b"\0" + hashlib.sha256(data).digest())
        return digest.hexdigest()

    def _files(self, build) -> list | None:
        if build.is_ptx:
            return [os.path.join(build.cwd or "", build.source)]
        index = (build.source, build.arch, build.flags, build.cwd)
        with self._lock:
            if index in self._inputs:
                return self._inputs[index]
        files = _dependencies(self.toolchain, build, self.settings, self.running)
        with self._lock:
            self._inputs[index] = files
        return files

def _dependencies(toolchain: Toolchain, build, settings: BuildSettings, running: RunningCompilers) -> list | None:
    """The files `build` reads, from `nvcc -M` with the build's architecture and flags, run within
    the build's bounds (its preprocessor reads whatever the source includes)."""
    argv = [toolchain.nvcc, "-M", f"-arch={build.arch}", *build.flags, build.source]
    try:
        done = run_limited(argv, build.cwd, timeout_s=min(DEPENDENCY_TIMEOUT, settings.timeout_s),
                           memory_mib=settings.memory_mib, output_limit=MAX_DEPENDENCY_OUTPUT, running=running)
    except OSError:
        return None
    if done.returncode != 0 or done.overflowed:
        return None
    return make_dependencies(done.output.decode("utf-8", errors="surrogateescape"), build.cwd)


def make_dependencies(text: str, cwd: str | None) -> list | None:
    """The prerequisites of a make rule `target : a b \\\\ c` (spaces in names escaped as `\\ `),
    as absolute paths.

    >>> make_dependencies("k.o : k.cu \\\\\\n  /usr/include/a\\\\ b.h\\n", "/src")
    ['/src/k.cu', '/usr/include/a b.h']
    """
    joined = text.replace("\\\n", " ")
    _, colon, rest = joined.partition(": ")
    if not colon:
        return None
    names, current, i = [], [], 0
    while i < len(rest):
        ch = rest[i]
        if ch == "\\" and i + 1 < len(rest) and rest[i + 1] == " ":
            current.append(" ")
            i += 2
            continue
        if ch.isspace():
            if current:
                names.append("".join(current))
                current = []
        else:
            current.append(ch)
        i += 1
    if current:
        names.append("".join(current))
    return [os.path.normpath(os.path.join(cwd or os.getcwd(), n)) for n in names] or None
