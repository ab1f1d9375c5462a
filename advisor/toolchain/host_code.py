"""The host side of a CUDA source, from the same compile that reports the kernels' resources.

`nvcc -cuda` runs the whole device compile (cicc and ptxas, with `-Xptxas -v`) and also writes the
host side as plain, preprocessed C++ in which the front end has rewritten every `<<<...>>>` launch
(`FILE.cu.cpp.ii`, the `.cudafe1.cpp` of `nvcc --keep` preprocessed); `--keep-dir` keeps the cubin
of the build beside it. One such compile per source (its first architecture) replaces that build's
`nvcc -cubin`; readers/host_launches.py reads the launches from the host file.

The launches are cached with the build's report (`report_cache`), as JSON records.
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import asdict, fields

from ..readers.host_launches import HostLaunch

HOST_FILE = "host.cu.cpp.ii"
LAUNCHES_KEY = "-launches"  # the cache entry of a build's launches: its report's key and this
MAX_HOST_FILE = 256 << 20  # bytes of host code read; a larger translation unit's launches are not read
MAX_SOURCE_LINES_BYTES = 64 << 20


def host_command(nvcc: str, arch: str, flags, cap, source: str, scratch: str) -> list[str]:
    """The compile that writes the cubin (in `scratch`) and the host file."""
    return [nvcc, "-cuda", f"-arch={arch}", *flags, *cap, "-Xptxas", "-v", "--keep", "--keep-dir", scratch,
            source, "-o", os.path.join(scratch, HOST_FILE)]


def kept_cubin(scratch: str) -> str | None:
    """The cubin `--keep` left (named after the source and the architecture)."""
    found = glob.glob(os.path.join(glob.escape(scratch), "*.cubin"))
    return found[0] if len(found) == 1 else None


def read_host_file(scratch: str, toolkit_root: str, cwd: str | None) -> tuple[tuple[HostLaunch, ...] | None, str | None]:
    """(the launches of the host file in `scratch`, None) or (None, why they were not read)."""
    from ..readers.host_expressions import HostParserMissing
    from ..readers.host_launches import read_launches

    path = os.path.join(scratch, HOST_FILE)
    try:
        if os.path.getsize(path) > MAX_HOST_FILE:
            return None, f"host code over {MAX_HOST_FILE >> 20} MiB: launches not read"
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError as exc:
        return None, f"no host code written: {exc.strerror or exc}"
    try:
        launches = read_launches(text, _SourceLines(cwd).lines, _user_file(toolkit_root, cwd))
    except HostParserMissing as exc:
        return None, str(exc)
    except Exception as exc:  # libclang refused the translation unit (TranslationUnitLoadError)
        return None, f"host code not parsed: {exc}"
    return tuple(_absolute(launch, cwd) for launch in launches), None


def _absolute(launch: HostLaunch, cwd: str | None) -> HostLaunch:
    from dataclasses import replace

    return replace(launch, file=os.path.normpath(os.path.join(cwd or os.getcwd(), launch.file)))


class _SourceLines:
    """The lines of the user's files, each read once (bounded), for the launches' columns."""

    def __init__(self, cwd: str | None):
        self.cwd = cwd or os.getcwd()
        self.read: dict[str, list[str] | None] = {}

    def lines(self, file: str) -> list[str] | None:
        if file not in self.read:
            from ...specs.files import read_bounded

            try:
                data = read_bounded(os.path.join(self.cwd, file), MAX_SOURCE_LINES_BYTES)
                self.read[file] = data.decode("utf-8", errors="replace").splitlines()
            except (OSError, ValueError):
                self.read[file] = None
        return self.read[file]


def _user_file(toolkit_root: str, cwd: str | None):
    """Whether a file a line marker names is the user's: not the toolkit's or the system's
    headers, nor what the front end itself includes (the stub and the fatbin)."""
    toolkit = os.path.realpath(toolkit_root) + os.sep
    start = cwd or os.getcwd()

    def user(file: str) -> bool:
        if not file or file.startswith("<") or file.endswith((".stub.c", ".fatbin.c")):
            return False
        real = os.path.realpath(os.path.join(start, file))
        return not real.startswith((toolkit, "/usr/"))
    return user


def launches_json(launches: tuple[HostLaunch, ...]) -> str:
    return json.dumps([asdict(launch) for launch in launches])


_TUPLES = {f.name for f in fields(HostLaunch) if "tuple" in str(f.type)}


def launches_from_json(text: str) -> tuple[HostLaunch, ...] | None:
    """The launches a cache entry holds, or None where it is not such a list."""
    try:
        items = json.loads(text)
        return tuple(HostLaunch(**{k: tuple(v) if k in _TUPLES and v is not None else v for k, v in item.items()})
                     for item in items)
    except (ValueError, TypeError, AttributeError):
        return None
