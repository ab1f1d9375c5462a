"""`tuneadvise suggest`: the block size with the highest occupancy, as
cudaOccMaxPotentialOccupancyBlockSize chooses it.

The launch options are generated from advisor/launch.FIELDS (cli/options.py), as
for `occupancy`; the block size is what this command chooses, so it takes none.
"""

from __future__ import annotations

import click

from .common import EXIT_FINDINGS, BadInput, choose_format, console, emit, require, resolved_arch
from .options import arch_option, cuda_option, format_option, launch_config, launch_options
from .params import FilePath, Size

SUGGEST_KEYS = ("registers", "shared_mem", "dynamic_shared_mem", "carveout", "opt_in", "barriers", "virtual_resources",
                "max_threads_per_block", "grid_size", "sm_count")


@click.command()
@arch_option(help="Family (volta), sm_70, 7.0, compute_70, chip (ga102) or product (h100-sxm; a product supplies "
                  "the SM count).")
@launch_options(SUGGEST_KEYS, help={
    "dynamic_shared_mem": "Fixed dynamic shared memory per block, whatever the block size.",
    "grid_size": "Planned grid in blocks: report waves and the tail effect (with a product or --sm-count).",
    "sm_count": "SMs on the device, for the minimum grid (default: the product's, when --arch names one).",
})
@click.option("--dynamic-shared-mem-per-thread", type=Size(), metavar="BYTES",
              help="Dynamic shared memory that grows with the block: bytes per thread (instead of --dynamic-shared-mem).")
@click.option("--dynamic-shared-mem-base", type=Size(), metavar="BYTES", show_default="0",
              help="Constant part added to the per-thread amount.")
@click.option("--spec-file", type=FilePath(dir_okay=False), help="Use a validated spec file of your own.")
@cuda_option()
@format_option()
@click.pass_context
def suggest(ctx, arch, dynamic_shared_mem_per_thread, dynamic_shared_mem_base, spec_file, cuda, fmt, **launch):
    """Block size with the highest occupancy and the minimum grid that fills the device.

    \b
    Example:
      tuneadvise suggest --arch h100-sxm -r 32 --dynamic-shared-mem-per-thread 64
    \b
    Exit codes: 0 a block size launches; 1 none can; 2 bad input.
    """
    from ..advisor.queries.suggest import launches, shared_mem_function, suggest_query

    require("suggest", arch=arch or spec_file, registers=launch["registers"])
    if launch["dynamic_shared_mem"] is not None and dynamic_shared_mem_per_thread is not None:
        raise BadInput("--dynamic-shared-mem: give either a fixed size or --dynamic-shared-mem-per-thread, not both")
    resolved = resolved_arch(arch, spec_file, cuda)
    # The block size is chosen by the query; 32 only completes the configuration.
    kernel = launch_config({**launch, "dynamic_shared_mem": None}, block_size=32)
    shared = shared_mem_function(launch["dynamic_shared_mem"], dynamic_shared_mem_per_thread,
                                 dynamic_shared_mem_base)
    document = suggest_query(resolved, kernel, shared)
    emit(choose_format(fmt), document, lambda: render_suggestion(document))
    if not launches(document):
        ctx.exit(EXIT_FINDINGS)


def render_suggestion(document: dict) -> None:
    from ..advisor.queries.suggest import launches
    from ..advisor.text import markup_text, percent, plural

    out = console()
    if not launches(document):
        for e in document["errors"]:
            out.print(f"[bold red]cannot launch:[/] {markup_text(e['message'])}")
        if not document["errors"]:
            out.print("[bold red]no block size can launch with these resources[/]")
        return
    sms = document["sm_count"]
    out.print(f"[bold]Block size {document['block_size']}[/]: {plural(document['blocks_per_sm'], 'block')}/SM, "
              f"occupancy {percent(document['occupancy'])} on {document['arch']} "
              f"[dim](model: cuda_occupancy.h of CUDA {document['cuda_release']})[/]")
    if sms:
        out.print(f"Minimum grid to fill {plural(sms, 'SM')}: {plural(document['min_grid_size'], 'block')}")
    else:
        out.print("Give a product (--arch h100-sxm) or --sm-count for the minimum grid size")
    if document["tie_note"]:
        out.print(f"[dim]{markup_text(document['tie_note'])}[/]")
    if document["verdict"]:
        from ..advisor.advice.verdict import Verdict

        out.print(markup_text(Verdict.from_dict(document["verdict"]).text()))
    w = document["waves"]
    if w:
        grid = w["full_waves"] * w["blocks_per_wave"] + w["partial_wave_blocks"]
        out.print(f"Grid {grid}: {plural(w['waves'], 'wave')} of {plural(w['blocks_per_wave'], 'block')}; "
                  f"tail may cost up to {percent(w['tail_share_upper_bound'])} of run time (upper bound, "
                  "uniform block times)")
