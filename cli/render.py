"""Rich rendering for terminals. Imported only when stdout is a terminal or a
table is asked for, so JSON output never pays for rich."""

from __future__ import annotations

from tuneadvise.cli.common import console

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_ROWS = (
    ("warps", "Warps", lambda r: f"{r.warps_per_block} warps", lambda r: f"{r.arch.max_warps_per_sm} warps"),
    ("registers", "Registers", lambda r: f"{r.allocated_registers_per_block:,} regs",
     lambda r: f"{r.arch.registers_per_sm:,} regs"),
    ("shared_memory", "Shared memory", lambda r: f"{r.allocated_shared_mem_per_block:,} B",
     lambda r: f"{r.shared_mem_config:,} B" if r.shared_mem_config is not None else "-"),
    ("blocks", "Blocks", lambda r: "1 block", lambda r: f"{r.arch.max_blocks_per_sm} blocks"),
    ("barriers", "Barriers", lambda r: f"{r.kernel.barriers} barriers",
     lambda r: f"{(r.arch.barriers_per_block_slot or 0) * r.arch.max_blocks_per_sm} barriers"),
)


def render_findings(out, findings: list) -> None:
    from rich.table import Table

    if not findings:
        return
    table = Table(title="Findings", show_lines=False, expand=False)
    table.add_column("Code")
    table.add_column("Severity")
    table.add_column("Message", overflow="fold")
    for f in findings:
        table.add_row(f["code"], f"[{SEVERITY_STYLE[f['severity']]}]{f['severity']}[/]", f["message"])
    out.print(table)


def render_occupancy(resolved, result, dims, findings, curves=None) -> None:
    from rich.table import Table

    out = console()
    arch, kernel = result.arch, result.kernel
    title = f"{arch.sm} (compute capability {arch.cc}, {arch.family})"
    if resolved.product:
        title += f" - {resolved.product.title}"
    if resolved.note:
        out.print(f"[dim]{resolved.note}[/]")
    table = Table(title=title)
    table.add_column("Resource")
    table.add_column("Per block", justify="right")
    table.add_column("Per SM", justify="right")
    table.add_column("Blocks/SM allowed", justify="right")
    for key, label, per_block, per_sm in _ROWS:
        if key not in result.block_limits:
            continue
        limit = result.block_limits[key]
        shown = "unlimited" if limit is None else str(limit)
        style = "bold magenta" if key in result.limiters else ""
        table.add_row(f"[{style}]{label}{' (limiter)' if key in result.limiters else ''}[/]" if style else label,
                      per_block(result), per_sm(result), f"[{style}]{shown}[/]" if style else shown)
    out.print(table)
    dims_text = "x".join(map(str, dims))
    out.print(f"Input: {kernel.registers} registers/thread, block {dims_text} ({kernel.block_size} threads), "
              f"{kernel.static_shared_mem} B static + {kernel.dynamic_shared_mem} B dynamic shared memory"
              f"{', opt-in' if kernel.opt_in else ''}")
    if result.launchable:
        out.print(f"[bold]Occupancy: {result.active_blocks_per_sm} blocks, {result.active_warps_per_sm}/"
                  f"{result.max_warps_per_sm} warps per SM = {result.occupancy * 100:.1f}%[/] [dim](model)[/]")
    for error in result.errors:
        out.print(f"[bold red]cannot launch:[/] {error.message}")
    for note in result.notes:
        out.print(f"[dim]note: {note}[/]")
    render_findings(out, findings)
    if curves:
        from tuneadvise.cli.curves_render import render_curves

        render_curves(out, curves)
