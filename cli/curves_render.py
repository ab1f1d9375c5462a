"""The occupancy calculator's three graphs, drawn in the terminal: occupancy
against block size, registers per thread and shared memory per block, with
the current configuration marked (a coloured column and a ▲ under the axis)
and the values that cannot launch marked × on the axis, apart from a low
occupancy (which is a short bar, never an empty column)."""

from __future__ import annotations

import bisect

from rich.text import Text

from .charts import UNICODE, Axis, Canvas, Glyphs, glyphs_for

CURRENT_STYLE = "bold magenta"
CURVE_STYLE = "cyan"
CANNOT_LAUNCH_STYLE = "bold red"


def curve_lines(curve, width: int = 60, height: int = 10, glyphs: Glyphs = UNICODE) -> list[Text]:
    from ..advisor.text import plural

    values = [point.value for point in curve.points]
    canvas = Canvas(Axis(values[0], values[-1]), Axis(0.0, 1.0), width, height, glyphs)
    current_column = canvas.column(min(max(curve.current.value, values[0]), values[-1]))
    refused = False
    for column in range(width):
        if column == current_column:  # the marked column shows the configuration itself, whatever it rounds to
            point, style = curve.current, CURRENT_STYLE
        else:
            # The curve is a staircase: each column shows the last sampled point at or before its x.
            point, style = curve.points[max(0, bisect.bisect_right(values, canvas.x_at(column) + 1e-9) - 1)], CURVE_STYLE
        if point.blocks_per_sm:
            # At least an eighth of a cell: a launchable configuration never looks like one that cannot launch.
            canvas.fill_column(column, max(point.occupancy, 1 / (8 * height)), style)
        else:
            canvas.put(column, height - 1, glyphs.refused, CANNOT_LAUNCH_STYLE)
            refused = True
    current = curve.current
    head = Text(f"{curve.title}: ", style="bold")
    head.append(f"{curve.format(current.value)} {curve.x_label.split(' (')[0]} -> "
                f"{plural(current.blocks_per_sm, 'block')}/SM, {current.occupancy * 100:.1f}%"
                f"{'' if current.blocks_per_sm else ' (cannot launch)'} ({glyphs.current})")
    x_labels = (curve.format(values[0]), curve.format(values[-1]))
    # Bars fill the cells from the axis up: the top row's top edge is 100%, the middle row's top edge 50%.
    ticks = {0: "100%", height // 2: "50%"}
    lines = [head, *canvas.lines(ticks, x_labels, curve.x_label, "0%", [(current_column, glyphs.current, CURRENT_STYLE)])]
    if refused:
        legend = Text(" " * 8)
        legend.append(glyphs.refused, CANNOT_LAUNCH_STYLE)
        lines.append(legend.append(" cannot launch (0 blocks/SM)"))
    return lines


def render_curves(out, curves, width: int | None = None) -> None:
    width = width or max(32, min(72, out.width - 14))
    glyphs = glyphs_for(out)
    for curve in curves:
        out.print()
        for line in curve_lines(curve, width, glyphs=glyphs):
            out.print(line)
