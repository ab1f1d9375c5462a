"""`tuneadvise occupancy`: theoretical occupancy of one kernel, or a batch.

The launch options are generated from advisor/launch.FIELDS (cli/options.py); their
text goes, as one mapping, to LaunchConfig.from_mapping, and that LaunchConfig to the
engine and the rules.
"""

from __future__ import annotations

import click

from ..advisor.launch import KEYS
from ..advisor.text import write_json_line
from .common import EXIT_FINDINGS, EXIT_OK, BadInput, choose_format, resolve_arch
from .options import (
    arch_option,
    cuda_option,
    format_option,
    ignore_option,
    launch_config,
    launch_options,
    select_option,
)

FORMATS = ("table", "json", "jsonl")


def _finite(ctx, param, value):
    """click's FloatRange lets NaN through (every comparison with it is false)."""
    import math

    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a number of bytes from 1 to {1 << 20}")
    return value


@click.command()
@arch_option()
@launch_options(KEYS)
@click.option("--spec-file", type=click.Path(dir_okay=False), help="Use a validated spec file of your own.")
@cuda_option()
@click.option("--batch", type=click.File("rb"), help="JSON Lines of configurations ('-' for stdin); the output is JSON Lines.")
@format_option(FORMATS)
@select_option()
@ignore_option()
@click.option("--graphs", "-g", is_flag=True,
              help="Occupancy against block size, registers and shared memory: drawn (table) or as 'curves' (json).")
@click.option("--plot", type=click.Path(dir_okay=False),
              help="Write the three occupancy graphs to FILE.png, .svg or .pdf (needs the 'plot' extra).")
@click.option("--bytes-in-flight", type=click.FloatRange(min=1, max=1 << 20), metavar="BYTES", callback=_finite,
              help="Bytes of device-memory loads each thread keeps in flight: adds how much of the DRAM bandwidth "
                   "that occupancy reaches (measured curve from 'probe --save', else Little's law, labelled).")
@click.pass_context
def occupancy(ctx, arch, spec_file, cuda, batch, fmt, select, ignore, graphs, plot, bytes_in_flight, **launch):
    """Theoretical occupancy per SM, the limiting resources, and launch failures.

    \b
    Example:
      tuneadvise occupancy --arch volta --registers 64 --block-size 256 --shared-mem 12K --graphs
    \b
    Exit codes: 0 launchable; 1 cannot launch on that architecture;
    2 bad input (in a batch: the worst line decides); 3 --plot without matplotlib.
    """
    from ..advisor.engine.occupancy import occupancy as compute
    from ..advisor.report import resolved_document

    selection = _selection(select, ignore)
    if batch is not None:
        if fmt not in (None, "jsonl"):
            raise BadInput("--format: batch output is JSON Lines; use --format jsonl")
        if graphs or plot:
            raise BadInput("--graphs/--plot: draw one configuration at a time, not a batch")
        import sys

        from ..advisor.batch import lines_of, run_batch

        if cuda is not None:
            resolve_arch("sm_90", None, cuda)  # an unknown release is bad input before any line
        default = resolve_arch(arch, spec_file, cuda) if (arch or spec_file) else None
        ctx.exit(run_batch(lines_of(batch), sys.stdout, default=default, selection=selection, cuda=cuda))
    missing = [name for name, value in (("--arch", arch), ("--registers", launch["registers"]),
                                        ("--block-size", launch["block_size"]))
               if value is None and not (name == "--arch" and spec_file)]
    if missing:
        raise BadInput(f"{', '.join(missing)}: required (see 'tuneadvise occupancy --help')")
    if plot:
        from .plots import plot_format

        plot_format(plot)  # a bad path fails before any work
    resolved = resolve_arch(arch, spec_file, cuda, clusters=launch.get("cluster_size") is not None)
    config = launch_config(launch)
    result = compute(resolved.arch, config)
    findings = _findings(resolved, result, selection)
    curves = None
    if graphs or plot:
        from ..advisor.engine.curves import occupancy_curves

        curves = occupancy_curves(result)
    from ..advisor.engine.clusters import cluster_document

    clusters = cluster_document(resolved.product, result.active_blocks_per_sm, config.cluster_size) \
        if result.launchable else None
    memory = None
    if bytes_in_flight is not None and result.launchable:
        from ..advisor.memory_parallelism import advice

        memory = advice(resolved.product, result.active_warps_per_sm, bytes_in_flight)
    if choose_format(fmt, FORMATS) == "table":
        from .render import render_occupancy

        render_occupancy(resolved, result, config.dims, findings, curves if graphs else None)
        if clusters is not None:
            _render_clusters(clusters)
        if bytes_in_flight is not None:
            _render_memory(memory, result.active_warps_per_sm, bytes_in_flight)
    else:
        document = resolved_document(resolved, result, findings)
        if bytes_in_flight is not None:
            document["memory_parallelism"] = memory
        if graphs:
            from ..advisor.engine.curves import curves_document

            document["curves"] = curves_document(curves)
        write_json_line(document)
    if plot:
        from .plots import occupancy_figure, save

        save(occupancy_figure(curves, _plot_title(resolved, result, config.dims)), plot)
    ctx.exit(EXIT_OK if result.launchable else EXIT_FINDINGS)


def _render_memory(memory: dict | None, warps: int, bytes_in_flight: float) -> None:
    from ..advisor.memory_parallelism import sentence
    from .common import console

    if memory is None:
        console().print("Memory parallelism: this --arch carries no DRAM latency or measured curve "
                        "(name a product such as h100-sxm, or a spec from 'probe --save').")
    else:
        console().print(sentence(memory, warps, bytes_in_flight))


def _render_clusters(clusters: dict) -> None:
    from .common import console

    out = console()
    if clusters["max_active_clusters"] is None:
        out.print(f"Clusters of {clusters['cluster_size']}: {clusters['why_not']}.")
        return
    per_gpc = ", ".join(map(str, clusters["per_gpc"]))
    out.print(f"Clusters of {clusters['cluster_size']}{' (non-portable size)' if clusters['non_portable'] else ''}: "
              f"{clusters['max_active_clusters']} active at once on the device (per GPC: {per_gpc}; "
              f"{clusters['blocks_per_sm_in_clusters']} blocks per SM). GPC layout {clusters['layout_basis']}.")


def _plot_title(resolved, result, dims) -> str:
    from ..advisor.text import percent

    kernel = result.kernel
    where = resolved.product.title if resolved.product else f"{result.arch.sm} ({result.arch.family})"
    shared = kernel.static_shared_mem + kernel.dynamic_shared_mem
    return (f"Occupancy on {where}: {kernel.registers} registers/thread, block {'x'.join(map(str, dims))}, "
            f"{shared:,} B shared memory{' (opt-in)' if kernel.opt_in else ''} -> "
            + (percent(result.occupancy) if result.launchable else f"cannot launch ({result.errors[0].code})"))


def _selection(select, ignore):
    from ..advisor.rules import RuleSelection

    try:
        return RuleSelection.parse(select, ignore)
    except ValueError as exc:
        raise BadInput(str(exc)) from None


def _findings(resolved, result, selection) -> list[dict]:
    from ..advisor.report import findings_of

    return findings_of(resolved, result, selection)
