"""`tuneadvise suggest`: the block size with the highest occupancy, as
cudaOccMaxPotentialOccupancyBlockSize chooses it.

The launch options are generated from advisor/launch.FIELDS (cli/options.py), as
for `occupancy`; the block size is what this command chooses, so it takes none.
"""

from __future__ import annotations

import click

from ..advisor.report import SCHEMA_VERSION
from ..advisor.text import write_json_line
from .common import EXIT_FINDINGS, BadInput, choose_format, console, resolve_arch
from .options import arch_option, cuda_option, format_option, launch_config, launch_options

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
@click.option("--dynamic-shared-mem-per-thread", metavar="BYTES",
              help="Dynamic shared memory that grows with the block: bytes per thread (instead of --dynamic-shared-mem).")
@click.option("--dynamic-shared-mem-base", metavar="BYTES", show_default="0",
              help="Constant part added to the per-thread amount.")
@click.option("--spec-file", type=click.Path(dir_okay=False), help="Use a validated spec file of your own.")
@cuda_option()
@format_option()
@click.pass_context
def suggest(ctx, arch, dynamic_shared_mem_per_thread, dynamic_shared_mem_base, spec_file, cuda, fmt, **launch):
    """Block size with the highest occupancy and the minimum grid that fills the device.

    \b
    Example:
      tuneadvise suggest --arch h100-sxm --registers 32 --dynamic-shared-mem-per-thread 64
    \b
    Exit codes: 0 a block size launches; 1 none can; 2 bad input.
    """
    from ..advisor.engine.occupancy import occupancy
    from ..advisor.engine.optimizer import LinearSharedMem, kernel_errors, max_potential_block_size
    from ..advisor.inputs import InputError, parse_size
    from ..advisor.rules.families.ta7_grid import waves
    from ..advisor.text import percent

    if arch is None and not spec_file:
        raise BadInput("--arch: required (see 'tuneadvise suggest --help')")
    if launch["registers"] is None:
        raise BadInput("--registers: required (see 'tuneadvise suggest --help')")
    if launch["dynamic_shared_mem"] is not None and dynamic_shared_mem_per_thread is not None:
        raise BadInput("--dynamic-shared-mem: give either a fixed size or --dynamic-shared-mem-per-thread, not both")
    resolved = resolve_arch(arch, spec_file, cuda)
    # The block size is chosen below; 32 only completes the configuration.
    kernel = launch_config({**launch, "dynamic_shared_mem": None}, block_size=32)
    try:
        if dynamic_shared_mem_per_thread is not None:
            shared = LinearSharedMem(parse_size(dynamic_shared_mem_base or 0, "dynamic_shared_mem_base"),
                                     parse_size(dynamic_shared_mem_per_thread, "dynamic_shared_mem_per_thread"))
        else:
            shared = LinearSharedMem(parse_size(launch["dynamic_shared_mem"] or 0, "dynamic_shared_mem"), 0)
    except InputError as exc:
        raise BadInput(exc.as_option()) from None
    arch_spec = resolved.arch
    sms = kernel.sm_count or (resolved.product.get("sm_count") if resolved.product else None)
    grid_size = kernel.grid_size
    errors = kernel_errors(arch_spec, kernel)
    choice = max_potential_block_size(arch_spec, kernel, shared, sms or 1)
    document = {
        "schema_version": SCHEMA_VERSION,
        "arch": arch_spec.sm,
        "compute_capability": arch_spec.cc,
        "cuda_release": arch_spec.cuda_release,
        "block_size": choice.block_size,
        "blocks_per_sm": choice.blocks_per_sm,
        "min_grid_size": choice.min_grid_size if sms else None,
        "sm_count": sms,
        "occupancy": round(choice.occupancy, 6),
        "dynamic_shared_mem": choice.dynamic_shared_mem,
        "dynamic_shared_mem_function": shared.describe(),
        "tie_note": choice.tie_note,
        "curve": [{"block_size": b, "blocks_per_sm": n, "threads_per_sm": t} for b, n, t in choice.tried],
        "errors": [{"code": e.code, "field": e.field, "message": e.message} for e in errors],
        "waves": None,
        "provenance": "model",
    }
    if grid_size and sms and choice.block_size:
        best = occupancy(arch_spec, kernel.resources.replace(block_size=choice.block_size,
                                                             dynamic_shared_mem=choice.dynamic_shared_mem))
        document["waves"] = waves(best, grid_size, sms)
    if choose_format(fmt) == "json":
        write_json_line(document)
    else:
        from ..advisor.text import plural

        out = console()
        if errors or not choice.block_size:
            for e in errors:
                out.print(f"[bold red]cannot launch:[/] {e.message}")
            if not errors:
                out.print("[bold red]no block size can launch with these resources[/]")
        else:
            out.print(f"[bold]Block size {choice.block_size}[/]: {plural(choice.blocks_per_sm, 'block')}/SM, "
                      f"occupancy {percent(choice.occupancy)} on {arch_spec.sm} [dim](model)[/]")
            if sms:
                out.print(f"Minimum grid to fill {plural(sms, 'SM')}: {plural(choice.min_grid_size, 'block')}")
            else:
                out.print("Give a product (--arch h100-sxm) or --sm-count for the minimum grid size")
            if choice.tie_note:
                out.print(f"[dim]{choice.tie_note}[/]")
            if document["waves"]:
                w = document["waves"]
                out.print(f"Grid {grid_size}: {plural(w['waves'], 'wave')} of {plural(w['blocks_per_wave'], 'block')}; "
                          f"tail may cost up to {percent(w['tail_share_upper_bound'])} of run time (upper bound, "
                          "uniform block times)")
    if errors or not choice.block_size:
        ctx.exit(EXIT_FINDINGS)
