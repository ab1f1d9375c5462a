"""Probe results as a rich table: value, unit, theoretical peak, efficiency and spread per figure,
with how each figure was measured in numbered notes under the table (a method is a sentence:
as a column it would wrap every row into many lines)."""

from __future__ import annotations

TABLE_WIDTH = 72  # the table's columns side by side, every figure whole
_LABELS = ("peak", "efficiency", "spread")


def _fmt(value, unit: str) -> str:
    if value is None:
        return "-"
    if unit in ("GB/s",) and value >= 1000:
        return f"{value:,.0f}"
    return f"{value:,.3g}" if value < 100 else f"{value:,.1f}"


def _row(r: dict) -> tuple[list[str], str]:
    """The cells of one figure (markup escaped) and the note that says how it was measured."""
    from ..advisor.text import markup_text

    if r["error"]:
        return [markup_text(r["name"]), "[red]failed[/]", "", "", "", ""], r["error"]
    if r.get("unstable"):
        return ([markup_text(r["name"]), "[yellow]unstable[/]", markup_text(r["unit"]), _fmt(r["peak"], r["unit"]), "",
                 f"{r['stability_spread']:.1%}"], f"repeats disagree by more than 10%, not a result; {r['method']}")
    value = _fmt(r["value"], r["unit"])
    if r["group"] == "occupancy":
        value = f"{r['value']}/{r['details']['total']}"
    elif r["group"] == "latency" and r["details"].get("ns"):
        value = f"{r['value']:.0f} ({r['details']['ns']:.0f} ns)"
    efficiency = f"{r['efficiency']:.1%}" if r["efficiency"] is not None else ""
    if r["above_peak"]:
        efficiency = f"[yellow]{efficiency} above peak?[/]"
    spread = f"{r['spread']:.1%}" if r["spread"] is not None else ""
    return [markup_text(r["name"]), value, markup_text(r["unit"]), _fmt(r["peak"], r["unit"]), efficiency, spread], r["method"]


def render_probe(out, doc: dict, product) -> None:
    from rich.table import Table

    from ..advisor.text import markup_text
    from .layout import wrap

    device = doc["device"]
    title = f"{device['name']} (sm_{device['compute_capability'].replace('.', '')}, {device['attributes']['sm_count']} SMs)"
    if doc["sm_clock_mhz"]:
        title += f", SM clock during the run {doc['sm_clock_mhz']:.0f} MHz"
    table = Table(title=markup_text(title), title_justify="left")
    # A probe's name is what --only takes: never cut.
    table.add_column("probe", no_wrap=True, min_width=max((len(r["name"]) for r in doc["results"]), default=5))
    for column in ("value", "unit", "peak", "efficiency", "spread", "how"):
        table.add_column(column, justify="left" if column == "unit" else "right")
    notes, rows = [], []
    for r in doc["results"]:
        cells, note = _row(r)
        notes.append(f"{r['name']}: {note}")
        rows.append([*cells, f"({len(notes)})"])
    if out.width >= TABLE_WIDTH:
        for row in rows:
            table.add_row(*row)
        out.print(table)
    else:  # too narrow for the columns side by side: a figure per line, labelled
        out.print(table.title)
        for name, value, unit, *cells, how in rows:
            figures = ", ".join(f"{label} {cell}" for label, cell in zip(_LABELS, cells) if cell)
            for line in wrap(f"{value} {unit} ({figures}) {how}", out.width, f"{name}: ", "    "):
                out.print(line, highlight=False)
    out.print("How each figure was measured:")
    for number, note in enumerate(notes, 1):
        for line in wrap(note, out.width, f"  ({number}) ", "      "):
            out.print(line, markup=False, highlight=False)
    if product is None:
        out.print("No shipped product spec matches this device: theoretical peaks for memory and arithmetic are left out.")
    for r in doc["results"]:
        if r["above_peak"]:
            out.print(markup_text(f"{r['name']}: {r['value']:.4g} {r['unit']} is above the theoretical {r['peak']:.4g} "
                             f"({r['peak_basis']}); treat it as a measurement problem, not a fact."), style="yellow")
