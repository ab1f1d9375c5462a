"""The host side of a CUDA source: the half of nvcc's own compile that writes it, run beside the
device build that reports the kernels' resources.

nvcc's front end, cudafe++, writes the host side of a .cu as plain C++ (`FILE.cudafe1.cpp`, which
`nvcc --keep` leaves), preprocessed, with every `<<<...>>>` launch rewritten as
`(__cudaPushCallConfiguration(g, b, smem, s)) ? (void)0 : k(args)` and line markers back to the
user's files; readers/host_launches.py reads the launches from it with libclang. `nvcc -cuda`
would write it in the device build itself, but after cicc and ptxas, at the cost of its host
preprocessing, cudafe++ and one more preprocessing in series (on NVIDIA's matrixMul sample, 2.7 s
added to a 2.4 s compile, nvcc --time). So the host half runs as its own job beside the device
build: exactly the commands nvcc runs for it (the host preprocessing and cudafe++, as `nvcc -cuda
--dryrun` lists them for the same flags), and libclang parses the result with the include paths
and macros nvcc's last preprocessing of it would use.

The launches are cached with the build's report (`report_cache`), as JSON records.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from dataclasses import asdict, fields

from ..readers.host_launches import HostLaunch
from ..text import clip
from .flag_values import flag_values

HOST_FILE = "host.cu.cpp.ii"
LAUNCHES_KEY = "-launches"  # the cache entry of a build's launches: its report's key and this
MAX_HOST_FILE = 256 << 20  # bytes of host code read; a larger translation unit's launches are not read
MAX_SOURCE_LINES_BYTES = 64 << 20
MAX_DRYRUN_OUTPUT = 1 << 20
FRONT_END = "cudafe++"
# The preprocessor flags of nvcc's last host preprocessing that libclang takes (with their values).
_KEPT_FLAGS = ("-D", "-U", "-I", "-isystem", "-include", "-std")


def dryrun_command(nvcc: str, build, scratch: str) -> list[str]:
    """`nvcc -cuda --dryrun` for the build: the commands of its whole compile, listed, not run."""
    cap = [f"-maxrregcount={build.max_registers}"] if build.max_registers is not None else []
    return [nvcc, "-cuda", f"-arch={build.arch}", *build.flags, *cap, "--dryrun", "--keep", "--keep-dir", scratch,
            build.source, "-o", os.path.join(scratch, HOST_FILE)]


def host_half(listing: list[str]) -> tuple[list[str], list[str]] | None:
    """(the commands up to and including cudafe++, libclang's flags from the last preprocessing)
    from `nvcc --dryrun`'s lines; None where the listing has no front-end step."""
    commands = [line[3:] for line in listing if line.startswith("#$ ") and not _assignment(line[3:])]
    front = next((i for i, command in enumerate(commands) if command.split(" ", 1)[0] == FRONT_END), None)
    if front is None or not commands:
        return None
    flags = []
    for name, value in flag_values(shlex.split(commands[-1])[1:], _KEPT_FLAGS):
        flags += [f"{name}={value}"] if name == "-std" else [name, value]
    return commands[:front + 1], flags


def _assignment(command: str) -> bool:
    name = command.split("=", 1)[0]
    return "=" in command and name.replace("_", "").isalnum() and " " not in name


def compile_host(toolchain, build, step) -> tuple[tuple[HostLaunch, ...] | None, str | None]:
    """(the launches of the build's host code, None) or (None, why they were not read): nvcc's
    host preprocessing and cudafe++ run through `step(argv, output_limit)` (compile.py's, within the
    build's bounds: its output lines or the reason it failed), and the result parsed."""
    with tempfile.TemporaryDirectory(prefix="tuneadvise-host-") as scratch:
        listing, error = step(dryrun_command(toolchain.nvcc, build, scratch), MAX_DRYRUN_OUTPUT)
        half = host_half(listing) if listing is not None else None
        if half is None:
            return None, f"host code not written: {error or 'nvcc listed no front-end step'}"
        path = shlex.quote(os.path.dirname(toolchain.nvcc))
        _, error = step(["sh", "-c", f'PATH={path}:"$PATH" && ' + " && ".join(half[0])])
        if error is not None:
            return None, f"host code not written: {clip(error, 200)}"
        return read_host_file(_front_end_file(half[0][-1], build.cwd), half[1], toolchain.root, build.cwd)


def _front_end_file(front_end: str, cwd: str | None) -> str:
    words = shlex.split(front_end)
    path = words[words.index("--gen_c_file_name") + 1] if "--gen_c_file_name" in words else ""
    return os.path.join(cwd or os.getcwd(), path)


def read_host_file(path: str, flags: list[str], toolkit_root: str,
                   cwd: str | None) -> tuple[tuple[HostLaunch, ...] | None, str | None]:
    """(the launches of the front end's host file `path`, None) or (None, why they were not read)."""
    from ..readers.host_expressions import HostParserMissing
    from ..readers.host_launches import HostParseStopped, read_launches

    try:
        if os.path.getsize(path) > MAX_HOST_FILE:
            return None, f"host code over {MAX_HOST_FILE >> 20} MiB: launches not read"
    except OSError as exc:
        return None, f"no host code written: {exc.strerror or exc}"
    try:
        launches = read_launches(path, flags, _SourceLines(cwd).lines, _user_file(toolkit_root, cwd))
    except HostParserMissing as exc:
        return None, str(exc)
    except HostParseStopped as exc:
        return None, clip(str(exc), 200)
    except Exception as exc:  # libclang refused the translation unit (TranslationUnitLoadError)
        return None, f"host code not parsed: {clip(str(exc), 200)}"
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
