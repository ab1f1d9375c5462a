"""`tuneadvise frontier`: ptxas's figures at every register cap where a kernel's occupancy
changes (a thin command over advisor.frontier)."""

from __future__ import annotations

import click

from .common import EXIT_BAD_INPUT, EXIT_OK, choose_format, emit, output_width, report_inputs
from .compile_options import build_options, build_settings, compiling
from .layout import wrap
from .options import arch_names_option, block_shape_option
from .params import FilePath


@click.command()
@click.argument("file", type=FilePath(dir_okay=False))
@arch_names_option("Target architecture (repeatable): sm_90, hopper, 9.0...", required=True)
@block_shape_option("Threads per block the kernels are launched with: 256 or 16x16.", required=True)
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
      tuneadvise frontier kernels.cu --arch sm_90 -b 256 --kernel 'gemm*'
    \b
    Exit codes: 0 done; 2 bad input, or the compiler rejected a build (the
    others are still reported); 3 no CUDA compiler.
    """
    from ..advisor.queries.frontier import frontier_query

    settings = build_settings(include_dirs, defines, nvcc_flags, None, jobs, no_cache, compile_timeout,
                              compile_memory)
    report = compiling(frontier_query, file, arch, block_size, kernel_glob, settings)
    report_inputs(report.problems)  # the compiler's rejections, then the report
    emit(choose_format(fmt), report.to_dict(), lambda: click.echo(frontier_text(report, output_width()), nl=False))
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


def frontier_text(report, width: int = 80) -> str:
    """Aligned columns per kernel, or where they do not fit in `width`, a line per cap (no colour:
    the same text on a terminal and in a pipe). Spill stores and loads and the stack frame are bytes
    per thread; 'best' marks the most occupancy with no spills (where a cap gains any), 'spills
    begin' the first point that spills; under the table, the source lines where each spilling build
    spills most (from its machine code, where nvdisasm read it)."""
    from ..advisor.text import utf8_text

    out = []
    for kernel in report.kernels:
        out += wrap(f"{utf8_text(kernel.demangled)} [{kernel.arch}], block {kernel.block_size}", width, "", "    ")
        if kernel.own_cap:
            out += wrap(f"({kernel.own_cap} in the source: -maxrregcount does not apply)", width, "  ", "    ")
        out += _table(kernel, width)
        for point in kernel.points:  # where each cap's spills land, from its machine code
            if point.spill_places:
                out += wrap(point.spill_places, width, "  ", "    ")
        if kernel.advice:
            out += wrap(f"best: {kernel.advice}", width, "  ", "    ")
        out.append("")
    return "\n".join(out)


def _table(kernel, width: int) -> list[str]:
    rows = [HEADERS] + [_cells(p, i, kernel) for i, p in enumerate(kernel.points)]
    widths = [max(len(row[c]) for row in rows) for c in range(len(HEADERS))]
    lines = ["  " + "  ".join(cell.rjust(w) if c < 7 else cell for c, (cell, w) in enumerate(zip(row, widths))).rstrip()
             for row in rows]
    if max(map(len, lines)) <= width:
        return lines
    lines = []
    for cap, registers, stores, loads, stack, blocks, occupancy, marks in rows[1:]:
        text = (f"{registers} registers, spill stores {stores}, spill loads {loads}, stack {stack}, "
                f"{blocks} blocks/SM, {occupancy}" + (f" ({marks})" if marks else ""))
        lines += wrap(text, width, f"  cap {cap}: ", "      ")
    return lines
