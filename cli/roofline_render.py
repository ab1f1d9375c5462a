"""The roofline as tables and a log-log chart drawn in the terminal."""

from __future__ import annotations

import string

from rich.text import Text

from .charts import UNICODE, Axis, Canvas, Glyphs, glyphs_for

# Kernel marks on the chart: 'o' for a lone kernel, else 1-9 then a-z.
_MARKS = string.digits[1:] + string.ascii_lowercase
ROOF_STYLE = "bold"
KERNEL_STYLE = "bold magenta"


def _si(value: float, unit: str) -> str:
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def marks_for(kernels) -> list[str]:
    return ["o"] if len(kernels) == 1 else [_MARKS[i] if i < len(_MARKS) else "*" for i in range(len(kernels))]


def chart(machine, kernels, width: int = 64, height: int = 14, glyphs: Glyphs = UNICODE) -> list[Text]:
    """Log-log roofline: x = FLOP/byte, y = FLOP/s; '/' the memory roof, '-' the
    compute roof, '|' the ridge point, and each kernel's mark at its intensity
    and achieved FLOP/s (its ceiling where none was given)."""
    from ..advisor.roofline import chart_range

    ridge = machine.ridge
    window = chart_range(machine, [placement for _, placement in kernels])
    x = Axis(window.x_low, window.x_high, log=True)
    y = Axis(window.y_low, window.y_high, log=True)
    canvas = Canvas(x, y, width, height, glyphs)
    for column in range(width):
        at = canvas.x_at(column)
        canvas.put(column, canvas.row(min(machine.peak.value, at * machine.memory.value)), "-" if at >= ridge else "/",
                   ROOF_STYLE)
    canvas.put(canvas.column(ridge), canvas.row(machine.peak.value), "|", ROOF_STYLE)
    for mark, (_, placement) in zip(marks_for(kernels), kernels):
        canvas.put(canvas.column(placement.intensity), canvas.row(placement.achieved or placement.ceiling), mark,
                   KERNEL_STYLE)
    ticks = {0: _si(y.high, "FLOP/s"), height - 1: _si(y.low, "FLOP/s")}
    return canvas.lines(ticks, (f"{x.low:.3g}", f"{x.high:.3g}"), "FLOP/byte (log)")


def verdict(name: str, placement) -> str:
    text = (f"{name}: at {placement.intensity:.3g} FLOP/byte, {placement.bound}-bound, ceiling "
            f"{_si(placement.ceiling, 'FLOP/s')}")
    if placement.pyramid_cap is not None:
        text += f" (roofline {_si(placement.attainable, 'FLOP/s')}, pyramid cap {_si(placement.pyramid_cap, 'FLOP/s')})"
    if placement.headroom is not None:
        text += f"; achieved {_si(placement.achieved, 'FLOP/s')}, headroom {placement.headroom:.2f}x"
    return text + "."


def _kernels_rows(kernels, marks, with_names: bool) -> tuple[list[str], list[list[str]]]:
    header = ["#", *(["kernel"] if with_names else []), "FLOP per byte", "bound", "ceiling", "achieved", "headroom"]
    rows = [[mark, *([name] if with_names else []), f"{p.intensity:.3g}", p.bound, _si(p.ceiling, "FLOP/s"),
             _si(p.achieved, "FLOP/s") if p.achieved else "-", f"{p.headroom:.2f}x" if p.headroom else "-"]
            for mark, (name, p) in zip(marks, kernels)]
    return header, rows


def _kernels_table(kernels, marks, width: int, with_names: bool = True):
    """One row per kernel, as wide as `width` allows, or None where it does not fit.

    A kernel's name is never split or cut (it is what the user typed and searches for);
    where a row does not fit on one line the other cells wrap between words, never
    inside one; numbers are right-aligned so their digits line up."""
    from rich import box
    from rich.table import Table

    header, rows = _kernels_rows(kernels, marks, with_names)
    whole = [max(len(cell) for cell in (title, *(row[i] for row in rows))) for i, title in enumerate(header)]
    words = [max(len(word) for cell in (title, *(row[i] for row in rows)) for word in cell.split())
             for i, title in enumerate(header)]
    if with_names:
        words[1] = whole[1]
    # Each column's padding (one each side, none at the table's edges), one divider between
    # columns and the two edges.
    frame = 3 * len(header) - 1
    if sum(whole) + frame <= width:
        widths = whole
    elif sum(words) + frame <= width:
        widths = words  # every cell wraps at its longest word
    else:
        return None
    table = Table(title="Kernels", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for title, column_width in zip(header, widths):
        table.add_column(title, justify="left" if title in ("#", "kernel", "bound") else "right", width=column_width,
                         no_wrap=title == "kernel")
    for row in rows:
        table.add_row(*map(Text, row))  # Text: a kernel's name is shown as written, never read as markup
    return table


def print_kernels(out, kernels, marks) -> None:
    """The kernels table; where the names and the figures do not fit side by side, each
    name on a line of its own beside its mark, then the table by mark."""
    table = _kernels_table(kernels, marks, out.width)
    if table is not None:
        out.print(table)
        return
    out.print(Text("Kernels", style="italic"))
    for mark, (name, _) in zip(marks, kernels):
        out.print(Text(f"{mark}  {name}"), crop=False, soft_wrap=True)
    table = _kernels_table(kernels, marks, out.width, with_names=False)
    if table is not None:
        table.title = None
        out.print(table)
    else:  # narrower than its longest words: one line per kernel
        header, rows = _kernels_rows(kernels, marks, False)
        for row in rows:
            out.print(Text("  ".join(f"{h} {c}" for h, c in zip(header, row))))


def _ceilings_table(machine, doc: dict):
    """The machine's ceilings with their basis (spec or probe text: shown as written, never as markup)."""
    from rich.table import Table

    rows = [("peak", _si(machine.peak.value, "FLOP/s"), machine.peak.basis),
            ("memory bandwidth", _si(machine.memory.value, "B/s"), machine.memory.basis)]
    if machine.memory_theoretical and machine.memory_theoretical.value != machine.memory.value:
        rows.append(("theoretical memory", _si(machine.memory_theoretical.value, "B/s"), machine.memory_theoretical.basis))
    if machine.shared_l1:
        rows.append((machine.shared_name, _si(machine.shared_l1.value, "B/s"), machine.shared_l1.basis))
    rows.append(("ridge point", f"{machine.ridge:.3g} FLOP/byte", "peak / memory bandwidth"))
    shared = "shared+L1" if machine.shared_l1_unified else "shared-memory"
    rows += [(f"pyramid {band['shared_bytes_per_flop']:g} B/FLOP", _si(band["attainable_flop_per_s"], "FLOP/s"),
              f"min(peak, {shared} bandwidth / bytes per FLOP)") for band in doc["pyramid"]]
    table = Table(title=Text(f"{machine.name}, {machine.precision}"), title_justify="left")
    for column in ("ceiling", "value", "basis"):
        table.add_column(column)
    for row in rows:
        table.add_row(*map(Text, row))
    return table


def render_roofline(out, answer) -> None:
    """A RooflineAnswer (advisor/queries/roofline.py) as tables, verdicts and the chart."""
    machine, kernels, doc = answer.machine, list(answer.kernels), answer.document

    out.print(_ceilings_table(machine, doc))
    marks = marks_for(kernels)
    if len(kernels) > 1:
        print_kernels(out, kernels, marks)
    for name, placement in kernels:
        out.print(Text(verdict(name, placement)))
        if placement.achieved_above_ceiling:
            out.print(Text(f"{name}: the achieved figure is above the ceiling: check the FLOP and byte counts, or "
                           "measure the machine (probe) rather than trusting its spec."))
    for line in chart(machine, kernels, width=max(32, min(64, out.width - 14)), glyphs=glyphs_for(out)):
        out.print(line)
