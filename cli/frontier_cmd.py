"""`tuneadvise frontier`: ptxas's figures at every register cap where a kernel's occupancy
changes (a thin command over advisor.frontier)."""

from __future__ import annotations

import click

from ..advisor.text import write_json_line
from .common import EXIT_BAD_INPUT, EXIT_OK, BadInput, choose_format
from .compile_options import build_options, build_settings, compiling


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--arch", "-a", multiple=True, required=True, help="Target architecture (repeatable): sm_90, hopper, 9.0...")
@click.option("--block-size", "-b", required=True, help="Threads per block the kernels are launched with: 256 or 16x16.")
@click.option("--kernel", "-k", "kernel_glob", help="Only kernels whose mangled, demangled or bare name matches this glob.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), help="Default: table (human text), or TUNEADVISE_FORMAT.")
@build_options(compile_commands=False)
@click.pass_context
def frontier(ctx, file, arch, block_size, kernel_glob, fmt, include_dirs, defines, nvcc_flags, jobs, no_cache,
             compile_timeout, compile_memory):
    """Compile FILE (.cu or .ptx) at every register cap where each kernel's
    occupancy changes at this block size, and report ptxas's registers, spill
    stores and loads and stack frame at each cap, with the blocks per SM and
    occupancy they give. Marks the cap that gains the most occupancy with no
    spills (best) and the first cap that spills, and names the
    __launch_bounds__ or -maxrregcount that gives the best.

    \b
    Example:
      tuneadvise frontier kernels.cu --arch sm_90 --block-size 256 --kernel 'gemm*'
    \b
    Exit codes: 0 done; 2 bad input, or the compiler rejected a build (the
    others are still reported); 3 no CUDA compiler.
    """
    from ..advisor.frontier import frontier as compute
    from ..advisor.inputs import InputError, parse_block
    from ..advisor.lint.settings import normalise_archs

    try:
        archs = tuple(dict.fromkeys(normalise_archs(arch)))
    except ValueError as exc:
        raise BadInput(f"--arch: {exc}") from None
    try:
        dims = parse_block(block_size)
    except InputError as exc:
        raise BadInput(exc.as_option()) from None
    threads = 1
    for d in dims:
        threads *= d
    settings = build_settings(include_dirs, defines, nvcc_flags, None, jobs, no_cache, compile_timeout,
                              compile_memory)
    report = compiling(compute, file, archs, threads, kernel_glob, settings)
    for problem in report.problems:
        click.echo(f"tuneadvise: bad input: {problem}", err=True)
    if not report.kernels and not report.problems:
        raise BadInput(f"--kernel: '{kernel_glob}' matches no kernel of {file}" if kernel_glob
                       else f"FILE: {file} holds no kernel")
    if choose_format(fmt) == "json":
        write_json_line(report.to_dict())
    else:
        click.echo(render(report), nl=False)
    ctx.exit(EXIT_BAD_INPUT if report.problems else EXIT_OK)


HEADERS = ("cap", "registers", "spill st", "spill ld", "stack", "blocks/SM", "occupancy", "")


def _cells(point, index: int, kernel) -> tuple[str, ...]:
    marks = []
    if index == kernel.best:
        marks.append("best")
    if index == kernel.spills_begin:
        marks.append("spills begin")
    figure = lambda v: "-" if v is None else str(v)  # noqa: E731
    return ("none" if point.max_registers is None else str(point.max_registers), str(point.registers),
            figure(point.spill_stores), figure(point.spill_loads), figure(point.stack_frame),
            str(point.active_blocks_per_sm), f"{point.occupancy:.1%}", "; ".join(marks))


SPILL_LINES_SHOWN = 3


def _cap_name(point) -> str:
    return "uncapped" if point.max_registers is None else f"cap {point.max_registers}"


def _spill_places(lines) -> str:
    """'k.cu:23 (96 B), k.cu:14 (64 B) and 2 more lines': the lines that spill most, stores and loads."""
    import os

    from ..advisor.lint.formats import utf8_text

    shown = [f"{utf8_text(os.path.basename(p['file'] or '?'))}:{p['line']} ({p['stores'] + p['loads']} B)"
             for p in lines[:SPILL_LINES_SHOWN]]
    more = f" and {len(lines) - SPILL_LINES_SHOWN} more lines" if len(lines) > SPILL_LINES_SHOWN else ""
    return ", ".join(shown) + more


def render(report) -> str:
    """Plain aligned columns per kernel (no colour: the same text on a terminal and in a pipe). Spill
    stores and loads and the stack frame are bytes per thread; 'best' marks the most occupancy with
    no spills (where a cap gains any), 'spills begin' the first point that spills; under the table, the
    source lines where each spilling build spills most (from its machine code, where nvdisasm read it)."""
    import textwrap

    from ..advisor.text import utf8_text

    out = []
    for kernel in report.kernels:
        out.append(f"{utf8_text(kernel.demangled)} [{kernel.arch}], block {kernel.block_size}")
        if kernel.own_cap:
            out.append(f"  ({kernel.own_cap} in the source: -maxrregcount does not apply)")
        rows = [HEADERS] + [_cells(p, i, kernel) for i, p in enumerate(kernel.points)]
        widths = [max(len(row[c]) for row in rows) for c in range(len(HEADERS))]
        for row in rows:
            out.append("  " + "  ".join(cell.rjust(w) if c < 7 else cell for c, (cell, w) in
                                        enumerate(zip(row, widths))).rstrip())
        for point in kernel.points:  # where each cap's spills land, from its machine code
            if point.spills and point.spill_lines:
                out.append(textwrap.fill(f"{_cap_name(point)} spills at {_spill_places(point.spill_lines)}", width=78,
                                         initial_indent="  ", subsequent_indent="    ", break_long_words=False,
                                         break_on_hyphens=False))
        if kernel.advice:
            out.append(textwrap.fill(f"best: {kernel.advice}", width=78, initial_indent="  ", subsequent_indent="    ",
                                     break_long_words=False, break_on_hyphens=False))
        out.append("")
    return "\n".join(out)
