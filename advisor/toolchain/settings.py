"""How a build is asked for: the settings lint and frontier pass to the compiler, without
importing it (a lint of build output never starts a compiler)."""

from __future__ import annotations

from typing import NamedTuple

from ...specs.errors import InputError, quoted


class BuildSetupError(InputError):
    """A build that cannot be set up (no architecture, an unreadable compile_commands.json): bad input."""


# A compiler run is bounded: nvcc's front end is super-linear on some sources (1 MB of repeated
# `volatile` takes it minutes and, unbounded, over 20 GB), so a hostile source fails its build
# instead of stalling or exhausting the machine. Both limits are far above what real
# translation units need and can be raised (--compile-timeout, --compile-memory).
COMPILE_TIMEOUT_S = 600
COMPILE_MEMORY_MIB = 8192


class BuildSettings(NamedTuple):
    """How lint compiles the sources it is given: nvcc flags for every build (-I, -D and free
    flags, in order), CMake's compile_commands.json, how many compilers run at once, and the
    time and memory each compiler run may take."""

    flags: tuple[str, ...] = ()
    compile_commands: str | None = None
    jobs: int | None = None  # None: one per CPU this process may use
    cache: bool = True  # reuse ptxas's reports of unchanged builds from the disk cache (toolchain/report_cache.py)
    timeout_s: float = COMPILE_TIMEOUT_S  # one compiler run past this fails its build
    memory_mib: int | None = COMPILE_MEMORY_MIB  # address space of each compiler process (POSIX); None: unlimited
    max_registers: int | None = None  # the -maxrregcount given with the flags (split_maxrregcount), if any


def source_flags(includes=(), defines=(), extra=()) -> tuple[str, ...]:
    """-I DIR, -D NAME[=VALUE] and free flags as nvcc arguments.

    >>> source_flags(["inc"], ["N=4", "FAST"], ["--use_fast_math"])
    ('-Iinc', '-DN=4', '-DFAST', '--use_fast_math')

    InputError (naming the option) for an empty directory or flag, or a define that is not
    NAME or NAME=VALUE.
    """
    # An empty -I would glue nothing to the flag: nvcc then takes the next argument as the
    # directory, and the build silently loses its resource report.
    if any(not directory for directory in includes):
        raise InputError("include_dir", "an empty directory name; name a directory, or leave the option out")
    if any(not flag for flag in extra):
        raise InputError("nvcc_flag", "an empty flag; give the flag as one argument: --nvcc-flag=-std=c++17")
    for define in defines:
        if not define.split("=", 1)[0].isidentifier():
            raise InputError("define", f"{quoted(define)} is not NAME or NAME=VALUE")
    return tuple([f"-I{d}" for d in includes] + [f"-D{d}" for d in defines] + list(extra))


def split_maxrregcount(flags) -> tuple[tuple[str, ...], int | None]:
    """(the flags without their -maxrregcount, the cap it sets; the last one wins), read once where
    the flags come in: a Build carries the cap as `max_registers`, which compile.command() passes
    to the compiler, so nothing downstream reads the flags again for it. A malformed value stays
    among the flags, for the compiler to reject.

    >>> split_maxrregcount(["-O3", "-maxrregcount=64"]), split_maxrregcount(["--maxrregcount", "40", "-g"])
    ((('-O3',), 64), (('-g',), 40))
    """
    flags = list(flags)
    kept, cap, i = [], None, 0
    while i < len(flags):
        name, equals, value = flags[i].partition("=")
        if name in ("-maxrregcount", "--maxrregcount"):
            value = value if equals else (flags[i + 1] if i + 1 < len(flags) else "")
            if value.isdigit() and len(value) < 5:
                cap = int(value)
                i += 1 if equals else 2
                continue
        kept.append(flags[i])
        i += 1
    return tuple(kept), cap


_LINE_INFO_FLAGS = ("-lineinfo", "--generate-line-info", "-G", "--device-debug")


def with_line_info(flags) -> tuple[str, ...]:
    """The flags with -lineinfo, unless they already ask for line info (or -G, which includes it):
    the cubin then maps machine code to source lines, and ptxas emits the same code.

    >>> with_line_info(("-O3",)), with_line_info(("-G",))
    (('-O3', '-lineinfo'), ('-G',))
    """
    flags = tuple(flags)
    return flags if any(flag in _LINE_INFO_FLAGS for flag in flags) else flags + ("-lineinfo",)
