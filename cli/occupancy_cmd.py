"""`tuneadvise occupancy`: theoretical occupancy of one kernel, or a batch.

The launch options are generated from advisor/launch.FIELDS (cli/options.py); their
text goes, as one mapping, to LaunchConfig.from_mapping, and that LaunchConfig to the
engine and the rules.
"""

from __future__ import annotations

import click

from ..advisor.launch import KEYS
from .common import (
    EXIT_FINDINGS,
    EXIT_OK,
    BadInput,
    choose_format,
    cycle_collection_paused,
    emit,
    require,
    resolved_arch,
    rule_selection,
)
from .options import (
    arch_option,
    cuda_option,
    format_option,
    ignore_option,
    launch_config,
    launch_options,
    select_option,
)
from .params import FilePath, Number

FORMATS = ("table", "json", "jsonl")


@click.command()
@arch_option()
@launch_options(KEYS)
@click.option("--spec-file", type=FilePath(dir_okay=False), help="Use a validated spec file of your own.")
@cuda_option()
@click.option("--batch", type=click.File("rb"), help="JSON Lines of configurations ('-' for stdin); the output is JSON Lines.")
@format_option(FORMATS)
@select_option()
@ignore_option()
@click.option("--graphs", "-g", is_flag=True,
              help="Occupancy against block size, registers and shared memory: drawn (table) or as 'curves' (json).")
@click.option("--plot", type=FilePath(dir_okay=False, readable=False),
              help="Write the three occupancy graphs to FILE.png, .svg or .pdf (needs the 'plot' extra).")
@click.option("--bytes-in-flight", type=Number(1, 1 << 20), metavar="BYTES",
              help="Bytes of device-memory loads each thread keeps in flight: adds how much of the DRAM bandwidth "
                   "that occupancy reaches (measured curve from 'probe --save', else Little's law, labelled).")
@click.pass_context
def occupancy(ctx, arch, spec_file, cuda, batch, fmt, select, ignore, graphs, plot, bytes_in_flight, **launch):
    """Theoretical occupancy per SM, the limiting resources, and launch failures.

    \b
    Example:
      tuneadvise occupancy --arch volta -r 64 -b 256 --shared-mem 12K --graphs
    \b
    Exit codes: 0 launchable; 1 cannot launch on that architecture;
    2 bad input (in a batch: the worst line decides); 3 --plot without matplotlib.
    """
    selection = rule_selection(select, ignore)
    if batch is not None:
        ctx.exit(_batch(batch, arch, spec_file, cuda, fmt, selection, graphs or plot, _given(ctx, launch)))
    require("occupancy", arch=arch or spec_file, registers=launch["registers"], block_size=launch["block_size"])
    if plot:  # a bad path fails before any work; without --plot the plotting module is never imported
        from .plots import plot_format
        plot_format(plot)
    from ..advisor.queries.occupancy import occupancy_query

    resolved = resolved_arch(arch, spec_file, cuda, clusters=launch.get("cluster_size") is not None)
    answer = occupancy_query(resolved, launch_config(launch), selection, graphs, bool(plot), bytes_in_flight)
    emit(choose_format(fmt, FORMATS), answer.to_json(), lambda: _render(answer))
    if plot:
        _save_plot(answer, plot)
    ctx.exit(EXIT_OK if answer.launchable else EXIT_FINDINGS)


def _render(answer) -> None:
    from .render import render_occupancy

    render_occupancy(answer)


def _save_plot(answer, plot: str) -> None:
    from .plots import occupancy_figure, save

    save(occupancy_figure(answer.curves, plot_title(answer)), plot)


def _given(ctx, launch: dict) -> list[str]:
    """The options given on the command line that a batch's lines give instead (each launch value,
    --bytes-in-flight), as the user wrote them."""
    from click.core import ParameterSource

    names = [*launch, "bytes_in_flight"]
    params = {p.name: p for p in ctx.command.params}
    return [max(params[n].opts, key=len) for n in names
            if ctx.get_parameter_source(n) not in (None, ParameterSource.DEFAULT)]


def _batch(batch, arch, spec_file, cuda, fmt, selection, drawn, given) -> int:
    """Every line of --batch, as JSON Lines; the exit status of the worst line."""
    import sys

    from ..advisor.batch import lines_of, run_batch

    if given:  # each line gives its own values: an option beside them would be dropped without a word
        raise BadInput(f"{'/'.join(given)}: not used with --batch, whose lines give every launch value "
                       "(--arch, --spec-file and --cuda are the lines' defaults)")
    if fmt not in (None, "jsonl"):
        raise BadInput("--format: batch output is JSON Lines; use --format jsonl")
    if drawn:
        raise BadInput("--graphs/--plot: draw one configuration at a time, not a batch")
    if cuda is not None:
        resolved_arch("sm_90", None, cuda)  # an unknown release is bad input before any line
    default = resolved_arch(arch, spec_file, cuda) if (arch or spec_file) else None
    # A batch makes no reference cycles, and its line cache (up to LINES_KEPT results) would be walked
    # again by every collection.
    with cycle_collection_paused():
        return run_batch(lines_of(batch), sys.stdout, default=default, selection=selection, cuda=cuda)


def plot_title(answer) -> str:
    from ..advisor.text import percent

    resolved, result = answer.resolved, answer.result
    kernel = result.kernel
    where = resolved.product.title if resolved.product else f"{result.arch.sm} ({result.arch.family})"
    shared = kernel.static_shared_mem + kernel.dynamic_shared_mem
    return (f"Occupancy on {where}: {kernel.registers} registers/thread, block {'x'.join(map(str, kernel.dims))}, "
            f"{shared:,} B shared memory{' (opt-in)' if kernel.opt_in else ''} -> "
            + (percent(result.occupancy) if result.launchable else f"cannot launch ({result.errors[0].code})"))
