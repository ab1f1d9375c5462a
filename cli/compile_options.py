"""What commands that compile CUDA sources share (lint, frontier): the build options, and how
a missing compiler or an impossible build ends the command."""

from __future__ import annotations

import click

from ..advisor.toolchain.settings import COMPILE_MEMORY_MIB, COMPILE_TIMEOUT_S
from .params import Count, FilePath


def build_options(command=None, *, compile_commands: bool = True):
    """The options of commands that compile CUDA sources: -I, -D, --nvcc-flag, --jobs, --no-cache,
    --compile-timeout, --compile-memory, and --compile-commands where the command takes it. `@build_options` or
    `@build_options(compile_commands=False)`."""
    if command is None:
        return lambda function: build_options(function, compile_commands=compile_commands)
    options = [
        click.option("--include-dir", "-I", "include_dirs", multiple=True, metavar="DIR",
                     help="Include directory for compiling CUDA sources (repeatable)."),
        click.option("--define", "-D", "defines", multiple=True, metavar="NAME[=VALUE]",
                     help="Macro for compiling CUDA sources (repeatable)."),
        click.option("--nvcc-flag", "nvcc_flags", multiple=True, metavar="FLAG",
                     help="Any other nvcc flag, as one argument: --nvcc-flag=-std=c++17 (repeatable)."),
        click.option("--jobs", "-j", type=Count(1, 256),
                     help="Compilers run at once (default: one per CPU)."),
        click.option("--no-cache", is_flag=True,
                     help="Compile everything again instead of reusing ptxas's reports of unchanged builds."),
        click.option("--compile-timeout", type=Count(1, 86_400), default=COMPILE_TIMEOUT_S,
                     show_default=True, metavar="SECONDS",
                     help="A compiler run taking longer fails its build (the others go on)."),
        click.option("--compile-memory", type=Count(0, 1 << 30), default=COMPILE_MEMORY_MIB,
                     show_default=True, metavar="MIB",
                     help="Address space each compiler process may use; past it the build fails. 0: no limit."),
    ]
    if compile_commands:
        options.insert(3, click.option("--compile-commands", type=FilePath(dir_okay=False),
                                       help="CMake's compile_commands.json: compile each .cu entry with its own flags."))
    for option in reversed(options):
        command = option(command)
    return command


def build_settings(include_dirs, defines, nvcc_flags, compile_commands, jobs, no_cache=False,
                   compile_timeout=COMPILE_TIMEOUT_S, compile_memory=COMPILE_MEMORY_MIB):
    from ..advisor.toolchain.settings import BuildSettings, source_flags, split_maxrregcount

    flags, cap = split_maxrregcount(source_flags(include_dirs, defines, nvcc_flags))
    return BuildSettings(flags, compile_commands, jobs, not no_cache, compile_timeout, compile_memory or None, cap)


def compiling(function, *args, **kwargs):
    """Run a library call that may compile or disassemble: no compiler (or no disassembler where
    one is required) is exit 3 with one sentence."""
    from ..advisor.readers.ncu import NcuMissing
    from ..advisor.toolchain.disassembler import DisassemblerMissing
    from ..advisor.toolchain.discovery import ToolchainMissing
    from .common import fail_unavailable

    try:
        return function(*args, **kwargs)
    except (ToolchainMissing, NcuMissing, DisassemblerMissing) as exc:
        fail_unavailable(str(exc))
