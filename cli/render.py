"""Rich rendering of occupancy for people. Imported only when text is asked for,
so JSON output never pays for rich.

On a terminal: tables with colour (none under NO_COLOR); otherwise plain text
without box-drawing (cli/common.console). Lines fit the width (80 columns when
not a terminal) by wrapping between words; names a user typed are never cut,
and numbers are right-aligned.
"""

from __future__ import annotations

from ..advisor.text import markup_text, percent, plural
from .common import console

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


_ROWS = (
    ("warps", "Warps", lambda r: plural(r.warps_per_block, "warp"), lambda r: plural(r.arch.max_warps_per_sm, "warp")),
    ("registers", "Registers", lambda r: plural(r.allocated_registers_per_block, "reg"),
     lambda r: plural(r.arch.registers_per_sm, "reg")),
    ("shared_memory", "Shared memory", lambda r: f"{r.allocated_shared_mem_per_block:,} B",
     lambda r: f"{r.shared_mem_config:,} B" if r.shared_mem_config is not None else "-"),
    ("blocks", "Blocks", lambda r: plural(1, "block"), lambda r: plural(r.arch.max_blocks_per_sm, "block")),
    ("virtual_resources", "Virtual resources", lambda r: plural(r.kernel.virtual_resources, "resource"),
     lambda r: plural(r.arch.virtual_resources_per_sm or 0, "resource")),
    ("barriers", "Barriers", lambda r: plural(r.kernel.barriers, "barrier"),
     lambda r: plural((r.arch.barriers_per_block_slot or 0) * r.arch.max_blocks_per_sm, "barrier")),
)


def _render_driver_config(out, predicted: dict | None) -> None:
    """The shared-memory configuration the driver will pick (the document's shared_mem_config_prediction)."""
    if predicted is None:
        return
    if predicted["l1_bytes"] is not None:
        out.print(f"Shared memory the driver configures: {predicted['at_least']:,} B, leaving "
                  f"{predicted['l1_bytes']:,} B of L1 [dim](rule measured on 9.0)[/]")
    else:
        most = predicted.get("at_most")
        span = f"{predicted['at_least']:,} to {most:,} B" if most is not None else f"at least {predicted['at_least']:,} B"
        out.print(f"Shared memory the driver configures: {span} [dim]({markup_text(predicted['rule'])})[/]")


def render_findings(out, findings: list) -> None:
    from rich.table import Table

    from ..advisor.text import markup_text

    if not findings:
        return
    table = Table(title="Findings", title_justify="left", show_lines=False, expand=False)
    table.add_column("Code", no_wrap=True)
    table.add_column("Severity", no_wrap=True)
    table.add_column("Message", overflow="fold")  # wraps between words; a word longer than the column folds
    for f in findings:
        table.add_row(f["code"], f"[{SEVERITY_STYLE[f['severity']]}]{f['severity']}[/]", markup_text(f["message"]))
    out.print(table)


def render_occupancy(answer) -> None:
    """An OccupancyAnswer (advisor/queries/occupancy.py) as text."""
    from ..advisor.text import markup_text

    out = console()
    resolved, result = answer.resolved, answer.result
    if resolved.note:
        out.print(f"[dim]{markup_text(resolved.note)}[/]")
    out.print(_limits_table(resolved, result))
    kernel = result.kernel
    out.print(f"Input: {plural(kernel.registers, 'register')}/thread, block {'x'.join(map(str, kernel.dims))} "
              f"({plural(kernel.block_size, 'thread')}), {kernel.static_shared_mem:,} B static + "
              f"{kernel.dynamic_shared_mem:,} B dynamic shared memory{', opt-in' if kernel.opt_in else ''}")
    if result.launchable:
        out.print(f"[bold]Occupancy: {plural(result.active_blocks_per_sm, 'block')}/SM, {result.active_warps_per_sm}/"
                  f"{plural(result.max_warps_per_sm, 'warp')} per SM = {percent(result.occupancy)}[/] [dim](model)[/]")
        _render_driver_config(out, answer.driver_config)
        budget = answer.budget
        if budget is not None and budget.keeps_blocks:
            out.print(f"What if: up to {budget.max_dynamic_shared_mem:,} B of dynamic shared memory keep "
                      f"{plural(budget.blocks_per_sm, 'block')}/SM [dim](cudaOccAvailableDynamicSMemPerBlock)[/]")
    for error in result.errors:
        out.print(f"[bold red]cannot launch:[/] {markup_text(error.message)}")
    for note in result.notes:
        out.print(f"[dim]note: {markup_text(note)}[/]")
    render_findings(out, answer.findings)
    if answer.graphs:
        from .curves_render import render_curves

        render_curves(out, answer.curves)
    if answer.clusters is not None:
        out.print(markup_text(cluster_sentence(answer.clusters)))
    if answer.memory_asked:
        out.print(markup_text(memory_sentence(answer)))


def _limits_table(resolved, result):
    from rich.table import Table

    from ..advisor.text import markup_text

    arch = result.arch
    title = f"{arch.sm} (compute capability {arch.cc}, {arch.family}; cuda_occupancy.h of CUDA {arch.cuda_release})"
    if resolved.product:
        title += f" - {resolved.product.title}"
    table = Table(title=markup_text(title), title_justify="left")
    table.add_column("Resource", overflow="fold")
    table.add_column("Per block", justify="right")
    table.add_column("Per SM", justify="right")
    table.add_column("Blocks/SM allowed", justify="right")
    for key, label, per_block, per_sm in _ROWS:
        if key not in result.block_limits:
            continue
        limit = result.block_limits[key]
        shown = "unlimited" if limit is None else f"{limit:,}"
        style = "bold magenta" if key in result.limiters else ""
        table.add_row(f"[{style}]{label}{' (limiter)' if key in result.limiters else ''}[/]" if style else label,
                      per_block(result), per_sm(result), f"[{style}]{shown}[/]" if style else shown)
    return table


def cluster_sentence(clusters: dict) -> str:
    if clusters["max_active_clusters"] is None:
        return f"Clusters of {clusters['cluster_size']}: {clusters['why_not']}."
    per_gpc = ", ".join(map(str, clusters["per_gpc"]))
    return (f"Clusters of {clusters['cluster_size']}{' (non-portable size)' if clusters['non_portable'] else ''}: "
            f"{clusters['max_active_clusters']} active at once on the device (per GPC: {per_gpc}; "
            f"{clusters['blocks_per_sm_in_clusters']} blocks per SM). GPC layout {clusters['layout_basis']}.")


def memory_sentence(answer) -> str:
    from ..advisor.memory_parallelism import sentence

    if answer.memory is None:
        return ("Memory parallelism: this --arch carries no DRAM latency or measured curve "
                "(name a product such as h100-sxm, or a spec from 'probe --save').")
    return sentence(answer.memory, answer.result.active_warps_per_sm, answer.bytes_in_flight)
