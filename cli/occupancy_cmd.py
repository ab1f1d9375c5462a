"""`tuneadvise occupancy`: theoretical occupancy of one kernel, or a batch."""

from __future__ import annotations

import click

from tuneadvise.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    BadInput,
    choose_format,
    emit_json,
    resolve_arch,
)


@click.command()
@click.option("--arch", "-a", help="Family (volta), sm_70, 7.0, compute_70, or product (v100, h100-sxm).")
@click.option("--registers", "-r", help="Registers per thread (0-255), as ptxas reports them.")
@click.option("--block-size", "-b", help="Threads per block: 256, or dimensions such as 16x16 or 32,8,2.")
@click.option("--shared-mem", "-s", default="0", show_default=True, help="Static shared memory per block: bytes, or 12K.")
@click.option("--dynamic-shared-mem", "-d", default="0", show_default=True, help="Dynamic shared memory per block at launch.")
@click.option("--carveout", default="default", show_default=True,
              help="Shared-memory carveout preference: default, max-shared, max-l1, or a percentage 0-100.")
@click.option("--opt-in", is_flag=True, help="The kernel raised cudaFuncAttributeMaxDynamicSharedMemorySize (over 48 KB).")
@click.option("--barriers", default="1", show_default=True, help="Barriers per block (ptxas: 'used N barriers'); limits 9.0+.")
@click.option("--max-threads-per-block", help="__launch_bounds__ maximum threads per block.")
@click.option("--spec-file", type=click.Path(dir_okay=False), help="Use a validated spec file of your own.")
@click.option("--batch", type=click.File("r"), help="JSON Lines of configurations ('-' for stdin); pair with --format jsonl.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "jsonl"]),
              help="Output format; default: table on a terminal, json otherwise.")
@click.option("--spill-stores", "--spill-bytes", "spill_bytes",
              help="Spill stores per thread in bytes (ptxas 'N bytes spill stores'), for the spill rules.")
@click.option("--grid-size", help="Blocks in the grid, for the launch-level rules (with a product or --sm-count).")
@click.option("--sm-count", help="SMs on the device (default: the product's, when --arch names one).")
@click.option("--cluster-size", help="Blocks per thread-block cluster (9.0+).")
@click.option("--compiled-for", help="The target the binary was compiled for (e.g. sm_70), if not the one it runs on.")
@click.option("--select", help="Only these finding codes or prefixes (comma-separated).")
@click.option("--ignore", help="Drop these finding codes or prefixes (comma-separated).")
@click.option("--graphs", "-g", is_flag=True,
              help="Occupancy against block size, registers and shared memory: drawn (table) or as 'curves' (json).")
@click.option("--plot", type=click.Path(dir_okay=False),
              help="Write the three occupancy graphs to FILE.png, .svg or .pdf (needs the 'plot' extra).")
@click.pass_context
def occupancy(ctx, arch, registers, block_size, shared_mem, dynamic_shared_mem, carveout, opt_in, barriers,
              max_threads_per_block, spill_bytes, grid_size, sm_count, cluster_size, compiled_for, spec_file, batch,
              fmt, select, ignore, graphs, plot):
    """Theoretical occupancy per SM, the limiting resources, and launch failures.

    \b
    Example:
      tuneadvise occupancy --arch volta --registers 64 --block-size 256 --shared-mem 12K --graphs
    \b
    Exit codes: 0 launchable; 1 cannot launch on that architecture;
    2 bad input (in a batch: the worst line decides); 3 --plot without matplotlib.
    """
    from tuneadvise.advisor.engine.occupancy import occupancy as compute
    from tuneadvise.advisor.inputs import InputError
    from tuneadvise.advisor.launch import LaunchConfig
    from tuneadvise.advisor.report import occupancy_document

    if batch is not None:
        if fmt not in (None, "jsonl"):
            raise BadInput("--format: batch output is JSON Lines; use --format jsonl")
        if graphs or plot:
            raise BadInput("--graphs/--plot: draw one configuration at a time, not a batch")
        import sys

        from tuneadvise.advisor.batch import run_batch

        default = resolve_arch(arch, spec_file) if (arch or spec_file) else None
        ctx.exit(run_batch(batch, sys.stdout, default=default))
    missing = [name for name, value in (("--arch", arch), ("--registers", registers), ("--block-size", block_size))
               if value is None and not (name == "--arch" and spec_file)]
    if missing:
        raise BadInput(f"{', '.join(missing)}: required (see 'tuneadvise occupancy --help')")
    if plot:
        from tuneadvise.cli.plots import plot_format

        plot_format(plot)  # a bad path fails before any work
    resolved = resolve_arch(arch, spec_file)
    try:
        kernel = LaunchConfig.from_mapping({
            "registers": registers, "block_size": block_size, "shared_mem": shared_mem,
            "dynamic_shared_mem": dynamic_shared_mem, "carveout": carveout, "opt_in": opt_in, "barriers": barriers,
            "max_threads_per_block": max_threads_per_block, "spill_stores": spill_bytes, "grid_size": grid_size,
            "sm_count": sm_count, "cluster_size": cluster_size, "compiled_for": compiled_for})
    except InputError as exc:
        raise BadInput(exc.as_option()) from None
    dims = kernel.dims
    result = compute(resolved.arch, kernel)
    findings = _findings(resolved, result, select, ignore)
    curves = None
    if graphs or plot:
        from tuneadvise.advisor.engine.curves import occupancy_curves

        curves = occupancy_curves(result)
    fmt = choose_format(fmt)
    if fmt == "table":
        from tuneadvise.cli.render import render_occupancy

        render_occupancy(resolved, result, dims, findings, curves if graphs else None)
    else:
        document = occupancy_document(result, dims, resolved.note,
                                      resolved.product.name if resolved.product else None, findings)
        if graphs:
            from tuneadvise.advisor.engine.curves import curves_document

            document["curves"] = curves_document(curves)
        emit_json(document)
    if plot:
        from tuneadvise.cli.plots import occupancy_figure, save

        save(occupancy_figure(curves, _plot_title(resolved, result, dims)), plot)
    ctx.exit(EXIT_OK if result.launchable else EXIT_FINDINGS)


def _plot_title(resolved, result, dims) -> str:
    kernel = result.kernel
    where = resolved.product.title if resolved.product else f"{result.arch.sm} ({result.arch.family})"
    shared = kernel.static_shared_mem + kernel.dynamic_shared_mem
    return (f"Occupancy on {where}: {kernel.registers} registers/thread, block {'x'.join(map(str, dims))}, "
            f"{shared:,} B shared memory{' (opt-in)' if kernel.opt_in else ''} -> "
            + (f"{result.occupancy * 100:.1f}%" if result.launchable else f"cannot launch ({result.errors[0].code})"))


def _findings(resolved, result, select, ignore):
    from tuneadvise.advisor.rules import RuleSelection, check_occupancy

    try:
        selection = RuleSelection.parse(select, ignore)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    return [f.to_dict() for f in check_occupancy(resolved, result, selection)]
