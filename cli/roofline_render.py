"""The roofline as a table and a log-log chart drawn in the terminal."""

from __future__ import annotations

import math


def _si(value: float, unit: str) -> str:
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def chart(machine, placement, width: int = 64, height: int = 14) -> list[str]:
    """Log-log roofline: x = FLOP/byte, y = FLOP/s; '|' marks the ridge, 'o' the kernel."""
    ridge = machine.ridge
    x_lo, x_hi = ridge / 64, ridge * 16
    y_hi = machine.peak.value * 2
    y_lo = machine.memory.value * x_lo / 2
    grid = [[" "] * width for _ in range(height)]

    def column(x):
        return min(width - 1, max(0, round((math.log(x) - math.log(x_lo)) / (math.log(x_hi) - math.log(x_lo)) * (width - 1))))

    def row(y):
        r = (math.log(y) - math.log(y_lo)) / (math.log(y_hi) - math.log(y_lo)) * (height - 1)
        return min(height - 1, max(0, height - 1 - round(r)))

    for c in range(width):
        x = math.exp(math.log(x_lo) + (math.log(x_hi) - math.log(x_lo)) * c / (width - 1))
        grid[row(min(machine.peak.value, x * machine.memory.value))][c] = "-" if x >= ridge else "/"
    grid[row(machine.peak.value)][column(ridge)] = "|"
    if placement is not None and x_lo <= placement.intensity <= x_hi:
        y = placement.achieved or placement.ceiling
        grid[row(y)][column(placement.intensity)] = "o"
    lines = [f"{_si(y_hi, 'FLOP/s'):>12} ┤" + "".join(grid[0])]
    lines += [" " * 12 + " │" + "".join(r) for r in grid[1:-1]]
    lines.append(f"{_si(y_lo, 'FLOP/s'):>12} ┤" + "".join(grid[-1]))
    lines.append(" " * 13 + "└" + "─" * width)
    lines.append(" " * 14 + f"{x_lo:.3g} FLOP/byte" + " " * max(1, width - 28) + f"{x_hi:.3g}")
    return lines


def render_roofline(out, machine, placement, doc: dict) -> None:
    from rich.table import Table

    table = Table(title=f"{machine.name}, {machine.precision}", title_justify="left")
    for column in ("ceiling", "value", "basis"):
        table.add_column(column)
    table.add_row("peak", _si(machine.peak.value, "FLOP/s"), machine.peak.basis)
    table.add_row("memory bandwidth", _si(machine.memory.value, "B/s"), machine.memory.basis)
    if machine.memory_theoretical and machine.memory_theoretical.value != machine.memory.value:
        table.add_row("theoretical memory", _si(machine.memory_theoretical.value, "B/s"), machine.memory_theoretical.basis)
    if machine.shared_l1:
        table.add_row("shared + L1", _si(machine.shared_l1.value, "B/s"), machine.shared_l1.basis)
    table.add_row("ridge point", f"{machine.ridge:.3g} FLOP/byte", "peak / memory bandwidth")
    for band in doc["pyramid"]:
        table.add_row(f"pyramid {band['shared_bytes_per_flop']:g} B/FLOP", _si(band["attainable_flop_per_s"], "FLOP/s"),
                      "min(peak, shared+L1 bandwidth / bytes per FLOP)")
    out.print(table)
    if placement is not None:
        verdict = (f"At {placement.intensity:.3g} FLOP/byte the kernel is {placement.bound}-bound: ceiling "
                   f"{_si(placement.ceiling, 'FLOP/s')}")
        if placement.pyramid_cap is not None:
            verdict += f" (roofline {_si(placement.attainable, 'FLOP/s')}, pyramid cap {_si(placement.pyramid_cap, 'FLOP/s')})"
        if placement.headroom is not None:
            verdict += f"; achieved {_si(placement.achieved, 'FLOP/s')}, headroom {placement.headroom:.2f}x"
        out.print(verdict + ".")
        if doc["kernel"]["achieved_above_ceiling"]:
            out.print("The achieved figure is above the ceiling: check the FLOP and byte counts, or measure the "
                      "machine (probe) rather than trusting its spec.")
    out.print("\n".join(chart(machine, placement)), markup=False, highlight=False)
