"""Terminal report of a lint document: grouped by kernel, the worst first, with
the numbers and the change each finding suggests."""

from __future__ import annotations

from tuneadvise.cli.common import console
from tuneadvise.cli.render import SEVERITY_STYLE


def render_lint(doc: dict) -> None:
    from rich.markup import escape
    from rich.table import Table

    out = console()
    for kernel in doc["kernels"]:
        occ = kernel["occupancy"]
        spills = "-" if kernel["spill_bytes"] is None else f"{kernel['spill_bytes']} B"
        block = "x".join(map(str, kernel["launch"]["block_dims"]))
        where = kernel["location"]
        place = f"{where['file']}:{where['line']}" if where["line"] else where["file"]
        out.print(f"[bold]{escape(kernel['demangled'])}[/bold] [dim]{kernel['arch']}  {escape(place)}[/dim]")
        out.print(f"  {kernel['registers']} regs, {kernel['shared_mem']} B smem, spills {spills}, block {block}: "
                  f"{occ['active_blocks_per_sm']} blocks/SM, occupancy {occ['occupancy']:.1%}"
                  + (f" ({' + '.join(occ['limiters'])})" if occ["limiters"] else "")
                  + ("" if occ["launchable"] else " [bold red]cannot launch[/bold red]"))
        for finding in kernel["findings"]:
            style = SEVERITY_STYLE[finding["severity"]]
            status = f" [dim]({finding['baseline']})[/dim]" if finding.get("baseline") else ""
            out.print(f"  [{style}]{finding['code']}[/{style}] {escape(finding['message'])}{status}", soft_wrap=True)
    for finding in doc["source_findings"]:
        out.print(f"[{SEVERITY_STYLE[finding['severity']]}]{finding['code']}[/] {escape(finding['message'])}")
    summary = doc["summary"]
    table = Table(show_header=False, box=None, pad_edge=False)
    counts = ", ".join(f"{n} {s}" for s, n in summary["by_severity"].items() if n) or "no findings"
    table.add_row("kernels x archs", str(summary["kernels"]))
    table.add_row("findings", counts)
    table.add_row(f"failing (>= {summary['fail_on']})", str(summary["failing_findings"]))
    if "baseline" in summary:
        base = summary["baseline"]
        table.add_row("baseline", f"{base['new']} new, {base['worse']} worse, {base['baselined']} accepted")
        for line in base["improved"]:
            table.add_row("improved", escape(line))
    for line in summary["skipped"]:
        table.add_row("skipped", escape(line))
    for line in summary["ptx_only_archs"]:
        table.add_row("PTX only", escape(line))
    out.print(table)
    out.print("[bold green]passed[/bold green]" if summary["passed"] else "[bold red]failed[/bold red]")
