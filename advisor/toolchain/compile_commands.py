"""CMake's compile_commands.json (CMAKE_EXPORT_COMPILE_COMMANDS=ON) -> one Build per CUDA
source and architecture, with the entry's own flags.

Each `.cu` entry keeps its flags (include paths, macros, language standard, extended
lambdas...) and its directory; what only decides what the build writes or targets is
dropped: the compiler itself, the source, `-c`, `-o FILE`, dependency files
(`-MD`, `-MF FILE`...), flags that write files beside the build or run what it
builds (`--keep`, `--keep-dir DIR`, `-save-temps`, `--run`, `--time FILE`,
`--fdevice-time-trace FILE`, `-Xcicc`; in a `-Xcompiler` list `-M...`, `-save-temps`
and `-o`), flags that stop it compiling (`--dryrun`, `--version`...), options files (`-optf FILE`:
their flags would escape these checks), and the architecture flags (`-arch`, `-gencode`,
`--generate-code`, `-code`), because the resource report is asked for one
architecture at a time. The architectures are --arch's, or else the ones the entry
itself compiles for.

    >>> entry = {"directory": "/b", "file": "k.cu",
    ...          "command": "nvcc -I/inc -DN=4 --generate-code=arch=compute_90,code=[compute_90,sm_90] -o k.o -c k.cu"}
    >>> flags_of(entry)
    (['-I/inc', '-DN=4'], ['sm_90'])
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat

from ...specs.errors import InputError
from ...specs.files import document_text, read_bounded
from ..text import quoted
from .compile import Build
from .flag_values import flag_values
from .settings import split_maxrregcount

_WITH_VALUE = {"-o", "-MF", "-MT", "-MQ", "-arch", "--gpu-architecture", "-gencode", "--generate-code", "-code",
               "--gpu-code", "-odir", "--output-directory", "--dependency-output", "-ccbin", "--compiler-bindir",
               "--output-file", "-keep-dir", "--keep-dir", "-optf", "--options-file", "-run-args", "--run-args",
               "-time", "--time", "-fdevice-time-trace", "--fdevice-time-trace", "-Xcicc"}
_KEEP_WITH_VALUE = {"-ccbin", "--compiler-bindir"}  # the host compiler stays; its value follows
_ALONE = {"-c", "-dc", "--compile", "--device-c", "-MD", "-MMD", "-M", "-MM", "-E", "-ptx", "-cubin", "-fatbin",
          "--generate-dependencies-with-compile", "--generate-nonsystem-dependencies-with-compile", "-MP",
          "-keep", "--keep", "-save-temps", "--save-temps", "-run", "--run",
          "-dryrun", "--dryrun", "-V", "--version", "-h", "--help", "-arch-ls", "--list-gpu-arch",
          "-code-ls", "--list-gpu-code"}
_HOST_OPTIONS = ("-Xcompiler", "--compiler-options")  # a comma-separated list for the host compiler
# What the host compiler would write (dependency files, its temporaries, another output): dropped
# from its list, with the value that follows those taking one.
_HOST_WRITES = ("-M", "-save-temps", "-o", "--output")
_HOST_WRITES_WITH_VALUE = {"-MF", "-MT", "-MQ", "-o", "--output"}
_ARCH_OPTIONS = ("-arch", "--gpu-architecture", "-gencode", "--generate-code", "-code", "--gpu-code")
_SM = re.compile(r"sm_(\d+[a-z]?)")
_COMPUTE = re.compile(r"compute_(\d+[a-z]?)")
MAX_ENTRIES = 100_000
MAX_FILE_BYTES = 64 << 20  # a project of tens of thousands of sources writes tens of megabytes
MAX_QUOTED = 120  # characters of an entry's file name a message repeats


class CompileCommandsError(InputError):
    pass


def _arguments(entry: dict) -> list[str]:
    if isinstance(entry.get("arguments"), list) and all(isinstance(a, str) for a in entry["arguments"]):
        return list(entry["arguments"])
    if isinstance(entry.get("command"), str):
        try:
            return shlex.split(entry["command"])
        except ValueError as exc:
            raise CompileCommandsError(f"command of {_file_of(entry)} is not a shell command line: {exc}") from None
    raise CompileCommandsError(f"entry for {_file_of(entry)} has neither 'arguments' nor 'command'")


def _file_of(entry: dict) -> str:
    """An entry's file as a message quotes it (a name read from a file can be of any length)."""
    return quoted(entry.get("file"), MAX_QUOTED)


def _archs(values: list[str]) -> list[str]:
    """sm_XX targets named by the architecture options' values (compute_XX alone: sm_XX)."""
    found = []
    for value in values:
        sms = _SM.findall(value) or _COMPUTE.findall(value)
        found += [f"sm_{digits}" for digits in sms]
    return list(dict.fromkeys(found))


def flags_of(entry: dict) -> tuple[list[str], list[str]]:
    """(the flags kept, the architectures the entry compiles for)."""
    args = _arguments(entry)[1:]  # [0] is the compiler
    source = entry.get("file", "")
    kept, arch_values = [], []
    i = 0
    while i < len(args):
        arg = args[i]
        name, has_equals, value = arg.partition("=")
        if arg == source or os.path.basename(arg) == os.path.basename(source) and arg.endswith(".cu"):
            i += 1
            continue
        if name in _ARCH_OPTIONS:
            if has_equals:
                arch_values.append(value)
            elif i + 1 < len(args):
                arch_values.append(args[i + 1])
                i += 1
            i += 1
            continue
        if name in _HOST_OPTIONS:
            value = value if has_equals else (args[i + 1] if i + 1 < len(args) else "")
            host = _host_flags(value)
            kept += [f"{name}={host}"] if host else []
            i += 1 if has_equals else 2
            continue
        if arg in _WITH_VALUE:
            if arg in _KEEP_WITH_VALUE and i + 1 < len(args):
                kept += [arg, args[i + 1]]
            i += 2
            continue
        if arg in _ALONE or name in _WITH_VALUE - _KEEP_WITH_VALUE \
                or arg.startswith("-o") and len(arg) > 2 and not arg.startswith("-opt"):
            i += 1
            continue
        kept.append(arg)
        i += 1
    return kept, _archs(arch_values)


def _host_flags(value: str) -> str:
    """A -Xcompiler list without what would make the host compiler write files.

    >>> _host_flags("-fPIC,-MD,-MF,k.d,-Wall,-save-temps=obj,-o,x.ii")
    '-fPIC,-Wall'
    """
    items, kept, i = value.split(","), [], 0
    while i < len(items):
        item = items[i]
        if item in _HOST_WRITES_WITH_VALUE:
            i += 2
            continue
        if not item.startswith(_HOST_WRITES):
            kept.append(item)
        i += 1
    return ",".join(kept)


def _holds_nul(entry: dict) -> str | None:
    """The first key of `entry` whose text the OS would refuse (a NUL byte) before a path or an
    argument reaches it, or None."""
    for key in ("file", "directory", "command", "arguments"):
        value = entry.get(key)
        texts = value if isinstance(value, list) else [value]
        if any(isinstance(text, str) and "\0" in text for text in texts):
            return key
    return None


# nvcc runs its stages through /bin/sh with each value in double quotes, where $, ` and \ still act
# and " ends the quoting: `-DX=$(touch F)` runs `touch F`. A database comes from a pull request, so
# nothing of it may hold what a shell interprets (;, |, &, <, > and line breaks, which act once a
# quote is broken, included); no real build needs them in a flag, a file name or a folder.
_SHELL = re.compile(r"""[$`\\"';|&<>\n\r]""")
_SHELL_NAMES = {"\n": "a line break", "\r": "a carriage return"}
_INCLUDES = ("-include", "--pre-include", "-imacros")


def _shell_text(entry: dict, flags: list[str]) -> str | None:
    """Why a file name, folder or kept flag of `entry` is refused: it holds what a shell interprets."""
    named = [("file", entry.get("file")), ("directory", entry.get("directory"))] + [("flag", f) for f in flags]
    for what, text in named:
        found = _SHELL.search(text) if isinstance(text, str) else None
        if found:
            char = _SHELL_NAMES.get(found.group(0), repr(found.group(0)))
            return (f"its {what} {quoted(text, MAX_QUOTED)} holds {char}, which the shell nvcc runs its stages "
                    "through would interpret; a compile_commands.json may hold none of $ ` \\ \" ' ; | & < > "
                    "or line breaks")
    return None


def _include_not_a_file(flags: list[str], directory: str) -> str | None:
    """Why a forced include is refused: it is not a regular file (`-include /dev/zero` feeds the
    preprocessor without end; a FIFO blocks it)."""
    for i, flag in enumerate(flags):
        name, equals, value = flag.partition("=")
        if name not in _INCLUDES:
            continue
        value = value if equals else (flags[i + 1] if i + 1 < len(flags) else "")
        # Searched in the working directory, then along the include path (`-I/dev -include zero`).
        for folder in [directory, *(os.path.join(directory, d) for d in _include_folders(flags))]:
            try:
                regular = stat.S_ISREG(os.stat(os.path.join(folder, value)).st_mode)
            except OSError:
                continue  # not there: the next folder, or the compiler says it is missing
            if not regular:
                return f"its {name} {quoted(value, MAX_QUOTED)} is not a regular file"
    return None


_INCLUDE_FOLDERS = ("-I", "-isystem", "-iquote", "-idirafter", "--include-path", "--system-include")


def _include_folders(flags: list[str]) -> list[str]:
    """The folders the entry's flags add to the include path (-I DIR, -IDIR, --include-path=DIR...)."""
    return [folder for _, folder in flag_values(flags, _INCLUDE_FOLDERS)]


def _host_compiler_path(flags: list[str]) -> str | None:
    """Why a -ccbin is refused: the host compiler nvcc runs must be a command on PATH, not a
    path the database (a pull request's file) points at."""
    for i, flag in enumerate(flags):
        name, equals, value = flag.partition("=")
        if name in _KEEP_WITH_VALUE:
            value = value if equals else (flags[i + 1] if i + 1 < len(flags) else "")
            if "/" in value or not value:
                return (f"its {name} {quoted(value, MAX_QUOTED)} is a path: the host compiler must be a command "
                        "on PATH (g++-12), never a file the database points at")


# What makes the host compiler nvcc runs load or run a program the database names (a database comes
# from a pull request): `-Xcompiler -B./dir/` runs ./dir/cc1plus, -fplugin and -Xclang -load load a
# shared object, -specs rewrites the commands gcc runs, -wrapper runs them under another program, an
# @file holds more of these; forwarding unknown flags would pass any of them unlisted.
_HOST_RUNS = ("-B", "-specs", "--specs", "-fplugin", "-fpass-plugin", "-wrapper", "-Xclang", "-iplugindir",
              "--gcc-toolchain", "--gcc-install-dir", "-ccc-", "--driver-mode", "@")
_FORWARD_UNKNOWN = {"-forward-unknown-to-host-compiler", "--forward-unknown-to-host-compiler",
                    "-forward-unknown-opts", "--forward-unknown-opts"}


def _runs_named_program(flags: list[str]) -> str | None:
    """Why a kept flag is refused: it would make the host compiler run or load a program the
    database names, or forward flags that could."""
    for i, flag in enumerate(flags):
        name, equals, value = flag.partition("=")
        if flag in _FORWARD_UNKNOWN:
            return f"its {flag} would pass any flag to the host compiler, unchecked"
        if name not in _HOST_OPTIONS:
            continue
        value = value if equals else (flags[i + 1] if i + 1 < len(flags) else "")
        for item in value.split(","):
            if item.startswith(_HOST_RUNS):
                return (f"its host compiler flag {quoted(item, MAX_QUOTED)} would make the host compiler run or "
                        "load a program the database names; -B, -specs, -fplugin, -wrapper, -Xclang and @files "
                        "are refused")
    return None


def load_builds(path: str, archs: tuple[str, ...]) -> tuple[list[Build], list[str]]:
    """(one Build per .cu entry and architecture, problems as sentences)."""
    try:
        entries = json.loads(document_text(read_bounded(path, MAX_FILE_BYTES, "compile_commands.json")))
    except OSError as exc:
        raise CompileCommandsError(f"--compile-commands: cannot read {path}: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise CompileCommandsError(f"--compile-commands: {path} is not JSON: {exc}") from None
    except ValueError as exc:  # valid JSON Python will not read: an integer of over 4,300 digits
        raise CompileCommandsError(f"--compile-commands: {path} is not JSON: {str(exc).split(';')[0]}") from None
    if not isinstance(entries, list) or len(entries) > MAX_ENTRIES:
        raise CompileCommandsError(f"--compile-commands: {path} is not a list of compile commands "
                                   f"(at most {MAX_ENTRIES} entries)")
    builds, problems = [], []
    base = os.path.dirname(os.path.abspath(path))
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
            problems.append(f"entry {number}: expected an object with 'directory', 'file' and 'command' or 'arguments'")
            continue
        refused = _holds_nul(entry)
        if refused:
            problems.append(f"entry {number}: its '{refused}' holds a NUL byte, which no path or argument can")
            continue
        if not entry["file"].lower().endswith(".cu"):
            continue
        directory = os.path.join(base, entry["directory"]) if isinstance(entry.get("directory"), str) else base
        try:
            flags, own_archs = flags_of(entry)
        except CompileCommandsError as exc:
            problems.append(f"entry {number}: {exc}")
            continue
        targets = archs or tuple(own_archs)
        if not targets:
            problems.append(f"entry {number} ({_file_of(entry)}): names no architecture; give --arch")
            continue
        refused = (_shell_text(entry, flags) or _include_not_a_file(flags, directory) or _host_compiler_path(flags)
                   or _runs_named_program(flags))
        if refused:
            problems.append(f"entry {number} ({_file_of(entry)}): {refused}")
            continue
        source = os.path.normpath(os.path.join(directory, entry["file"]))
        kept, cap = split_maxrregcount(flags)
        builds += [Build(source, arch, kept, cap, directory) for arch in targets]
    return builds, problems
