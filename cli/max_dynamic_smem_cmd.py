"""`tuneadvise max-dynamic-smem`: the most dynamic shared memory per block that keeps N blocks
resident per SM, as cudaOccAvailableDynamicSMemPerBlock computes it, and what bounds it.

The launch options come from advisor/launch.FIELDS (cli/options.py), as for `occupancy`;
the dynamic shared memory is what this command answers, so it takes none.
"""

from __future__ import annotations

import click

from ..advisor import MAX_BLOCKS_ASKED
from .common import EXIT_FINDINGS, EXIT_OK, choose_format, console, emit, require, resolved_arch
from .options import arch_option, cuda_option, format_option, launch_config, launch_options
from .params import Count, FilePath

BUDGET_KEYS = ("registers", "block_size", "shared_mem", "carveout", "opt_in", "barriers", "virtual_resources",
               "max_threads_per_block")

LIMITER_WORDS = {
    "shared_memory": "the SM's shared memory split among the blocks",
    "shared_mem_per_block": "the per-block shared-memory limit",
    "max_dynamic": "the kernel's maximum dynamic shared memory (cudaFuncAttributeMaxDynamicSharedMemorySize)",
}


@click.command("max-dynamic-smem")
@arch_option()
@launch_options(BUDGET_KEYS)
@click.option("--blocks-per-sm", "-n", type=Count(1, MAX_BLOCKS_ASKED), metavar="N",
              help="Blocks that must stay resident per SM (1 or more).")
@click.option("--spec-file", type=FilePath(dir_okay=False), help="Use a validated spec file of your own.")
@cuda_option()
@format_option()
@click.pass_context
def max_dynamic_smem(ctx, arch, blocks_per_sm, spec_file, cuda, fmt, **launch):
    """Most dynamic shared memory per block that keeps N blocks per SM, and the limiter that binds.

    \b
    Example:
      tuneadvise max-dynamic-smem --arch h100-sxm -r 32 -b 256 --blocks-per-sm 2 \\
        --opt-in
    \b
    Exit codes: 0 answered; 1 N blocks cannot reside even without dynamic shared
    memory; 2 bad input.
    """
    from ..advisor.queries.max_dynamic_smem import max_dynamic_smem_query

    require("max-dynamic-smem", arch=arch or spec_file, registers=launch["registers"],
            block_size=launch["block_size"], blocks_per_sm=blocks_per_sm)
    answer = max_dynamic_smem_query(resolved_arch(arch, spec_file, cuda), launch_config(launch), blocks_per_sm)
    emit(choose_format(fmt), answer.to_json(), lambda: _render(answer))
    ctx.exit(EXIT_OK if answer.answered else EXIT_FINDINGS)


def _render(answer) -> None:
    from ..advisor.text import markup_text, plural

    out = console()
    resolved, budget = answer.resolved, answer.budget
    arch, kernel = budget.arch, budget.kernel
    if resolved.note:
        out.print(f"[dim]{markup_text(resolved.note)}[/]")
    where = resolved.product.title if resolved.product else f"{arch.sm} (compute capability {arch.cc}, {arch.family})"
    out.print(f"{markup_text(where)}, as cuda_occupancy.h of CUDA {arch.cuda_release} computes it")
    out.print(f"Input: {plural(kernel.registers, 'register')}/thread, {plural(kernel.block_size, 'thread')}/block, "
              f"{kernel.static_shared_mem:,} B static shared memory{', opt-in' if kernel.opt_in else ''}")
    wanted = plural(budget.blocks_per_sm, "block")
    if budget.max_dynamic_shared_mem is None:
        reason = budget.errors[0].message if budget.errors else (
            f"{budget.limiter} allow only {plural(budget.blocks_without_dynamic, 'block')}/SM")
        out.print(f"[bold red]{wanted}/SM cannot reside[/] even without dynamic shared memory: {markup_text(reason)}")
        return
    out.print(f"[bold]Up to {budget.max_dynamic_shared_mem:,} B of dynamic shared memory per block keep {wanted}/SM[/] "
              f"(bound by {LIMITER_WORDS[budget.limiter]})")
    if budget.keeps_more_blocks:
        out.print(f"At that size {plural(budget.blocks_at_max, 'block')}/SM reside, more than asked")
    if not budget.keeps_blocks:
        out.print(f"[yellow]note:[/] with that much the occupancy calculation gives "
                  f"{plural(budget.blocks_at_max, 'block')}/SM: cuda_occupancy.h's subtraction wraps when the static "
                  "and reserved shared memory exceed the SM's share per block")
