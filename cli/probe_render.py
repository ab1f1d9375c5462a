"""Probe results as a rich table: value, unit, theoretical peak, efficiency, method."""

from __future__ import annotations


def _fmt(value, unit: str) -> str:
    if value is None:
        return "-"
    if unit in ("GB/s",) and value >= 1000:
        return f"{value:,.0f}"
    return f"{value:,.3g}" if value < 100 else f"{value:,.1f}"


def render_probe(out, doc: dict, product) -> None:
    from rich.table import Table

    device = doc["device"]
    title = f"{device['name']} (sm_{device['compute_capability'].replace('.', '')}, {device['attributes']['sm_count']} SMs)"
    if doc["sm_clock_mhz"]:
        title += f", SM clock during the run {doc['sm_clock_mhz']:.0f} MHz"
    table = Table(title=title, title_justify="left")
    for column in ("probe", "value", "unit", "peak", "efficiency", "spread", "method"):
        table.add_column(column, justify="right" if column in ("value", "peak", "efficiency", "spread") else "left")
    for r in doc["results"]:
        if r["error"]:
            table.add_row(r["name"], "[red]failed[/]", "", "", "", "", r["error"])
            continue
        value = _fmt(r["value"], r["unit"])
        if r.get("unstable"):
            spread = r["stability_spread"]
            table.add_row(r["name"], "[yellow]unstable[/]", r["unit"], _fmt(r["peak"], r["unit"]), "",
                          f"{spread:.1%}", f"repeats disagree by more than 10%, not a result; {r['method']}")
            continue
        if r["group"] == "occupancy":
            value = f"{r['value']}/{r['details']['total']}"
        elif r["group"] == "latency" and r["details"].get("ns"):
            value = f"{r['value']:.0f} ({r['details']['ns']:.0f} ns)"
        efficiency = f"{r['efficiency']:.1%}" if r["efficiency"] is not None else ""
        if r["above_peak"]:
            efficiency = f"[yellow]{efficiency} above peak?[/]"
        spread = f"{r['spread']:.1%}" if r["spread"] is not None else ""
        table.add_row(r["name"], value, r["unit"], _fmt(r["peak"], r["unit"]), efficiency, spread, r["method"])
    out.print(table)
    if product is None:
        out.print("No shipped product spec matches this device: theoretical peaks for memory and arithmetic are left out.")
    for r in doc["results"]:
        if r["above_peak"]:
            out.print(f"[yellow]{r['name']}: {r['value']:.4g} {r['unit']} is above the theoretical {r['peak']:.4g} "
                      f"({r['peak_basis']}); treat it as a measurement problem, not a fact.[/]")
