"""`tuneadvise suggest`: the block size with the highest occupancy, as
cudaOccMaxPotentialOccupancyBlockSize chooses it."""

from __future__ import annotations

import click

from tuneadvise.advisor.report import SCHEMA_VERSION
from tuneadvise.cli.common import EXIT_FINDINGS, BadInput, choose_format, console, emit_json, resolve_arch


@click.command()
@click.option("--arch", "-a", required=True, help="Family, sm_XX, X.Y or product (a product supplies the SM count).")
@click.option("--registers", "-r", required=True)
@click.option("--shared-mem", "-s", default="0", show_default=True, help="Static shared memory per block.")
@click.option("--dynamic-shared-mem", "-d", default=None, help="Fixed dynamic shared memory per block.")
@click.option("--dynamic-shared-mem-per-thread", default=None, help="Dynamic shared memory that grows with the block: bytes per thread.")
@click.option("--dynamic-shared-mem-base", default="0", show_default=True, help="Constant part added to the per-thread amount.")
@click.option("--carveout", default="default", show_default=True)
@click.option("--opt-in", is_flag=True)
@click.option("--barriers", default="1", show_default=True)
@click.option("--max-threads-per-block", help="__launch_bounds__ maximum threads per block.")
@click.option("--sm-count", type=click.IntRange(1, 10000), help="SMs on the device (default: the product's).")
@click.option("--grid-size", type=click.IntRange(1), help="Planned grid: report waves and the tail effect.")
@click.option("--spec-file", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]))
@click.pass_context
def suggest(ctx, arch, registers, shared_mem, dynamic_shared_mem, dynamic_shared_mem_per_thread, dynamic_shared_mem_base,
            carveout, opt_in, barriers, max_threads_per_block, sm_count, grid_size, spec_file, fmt):
    """Block size with the highest occupancy and the minimum grid that fills the device."""

    from tuneadvise.advisor.engine.occupancy import occupancy
    from tuneadvise.advisor.engine.optimizer import LinearSharedMem, kernel_errors, max_potential_block_size
    from tuneadvise.advisor.inputs import InputError, parse_size
    from tuneadvise.advisor.launch import LaunchConfig
    from tuneadvise.advisor.rules.checks import waves

    if dynamic_shared_mem is not None and dynamic_shared_mem_per_thread is not None:
        raise BadInput("--dynamic-shared-mem: give either a fixed size or --dynamic-shared-mem-per-thread, not both")
    resolved = resolve_arch(arch, spec_file)
    try:
        kernel = LaunchConfig.from_mapping({
            "registers": registers, "block_size": 32, "shared_mem": shared_mem, "carveout": carveout, "opt_in": opt_in,
            "barriers": barriers, "max_threads_per_block": max_threads_per_block})
        if dynamic_shared_mem_per_thread is not None:
            shared = LinearSharedMem(parse_size(dynamic_shared_mem_base, "dynamic_shared_mem_base"),
                                     parse_size(dynamic_shared_mem_per_thread, "dynamic_shared_mem_per_thread"))
        else:
            shared = LinearSharedMem(parse_size(dynamic_shared_mem or 0, "dynamic_shared_mem"), 0)
    except InputError as exc:
        raise BadInput(exc.as_option()) from None
    arch_spec = resolved.arch
    sms = sm_count or (resolved.product.get("sm_count") if resolved.product else None)
    errors = kernel_errors(arch_spec, kernel)
    choice = max_potential_block_size(arch_spec, kernel, shared, sms or 1)
    document = {
        "schema_version": SCHEMA_VERSION,
        "arch": arch_spec.sm,
        "compute_capability": arch_spec.cc,
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
        best = occupancy(arch_spec, kernel.replace(block_size=choice.block_size, dynamic_shared_mem=choice.dynamic_shared_mem))
        document["waves"] = waves(best, grid_size, sms)
    if choose_format(fmt) == "json":
        emit_json(document)
    else:
        out = console()
        if errors or not choice.block_size:
            for e in errors:
                out.print(f"[bold red]cannot launch:[/] {e.message}")
            if not errors:
                out.print("[bold red]no block size can launch with these resources[/]")
        else:
            out.print(f"[bold]Block size {choice.block_size}[/]: {choice.blocks_per_sm} blocks/SM, "
                      f"occupancy {choice.occupancy * 100:.1f}% on {arch_spec.sm} [dim](model)[/]")
            if sms:
                out.print(f"Minimum grid to fill {sms} SMs: {choice.min_grid_size} blocks")
            else:
                out.print("Give a product (--arch h100-sxm) or --sm-count for the minimum grid size")
            if choice.tie_note:
                out.print(f"[dim]{choice.tie_note}[/]")
            if document["waves"]:
                w = document["waves"]
                out.print(f"Grid {grid_size}: {w['waves']} waves of {w['blocks_per_wave']} blocks; tail may cost up to "
                          f"{w['tail_share_upper_bound'] * 100:.1f}% of run time (upper bound, uniform block times)")
    if errors or not choice.block_size:
        ctx.exit(EXIT_FINDINGS)
