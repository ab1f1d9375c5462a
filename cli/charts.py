"""Charts drawn with characters, for the terminal: a grid of cells with linear or
logarithmic axes, framed with tick labels, returned as rich Text lines.

Colour only emphasises; every mark is also a distinct character, so a chart
reads the same with NO_COLOR or in a log file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from rich.text import Text

_MIN_LABEL_WIDTH = 6


class Glyphs(NamedTuple):
    """The characters a chart is drawn with."""

    eighths: str  # index k fills k/8 of a cell from below (area charts)
    tick: str  # the y axis at a labelled row
    axis: str  # the y axis elsewhere
    origin: str  # where the axes meet, labelled
    corner: str  # where the axes meet
    rule: str  # the x axis
    current: str  # the mark under the axis for the configuration itself
    refused: str  # a value that cannot launch


UNICODE = Glyphs(" ▁▂▃▄▅▆▇█", "┤", "│", "┼", "└", "─", "▲", "×")
# Output that is not a terminal (a pipe, a log, a file) gets no box drawing: nine distinct fills, so
# that the drawing still reads (and parses) to the eighth of a cell.
ASCII = Glyphs(" _.:;=*%#", "+", "|", "+", "+", "-", "^", "x")


def glyphs_for(out) -> Glyphs:
    """Box drawing on a terminal that can show it; ASCII elsewhere (piped, or an ASCII-only terminal)."""
    encoding = (getattr(out, "encoding", "") or "").lower().replace("-", "")
    return UNICODE if out.is_terminal and encoding.startswith("utf") else ASCII


@dataclass(frozen=True)
class Axis:
    low: float
    high: float
    log: bool = False

    def fraction(self, value: float) -> float:
        """Where `value` falls between low (0) and high (1)."""
        if self.log:
            return (math.log(value) - math.log(self.low)) / (math.log(self.high) - math.log(self.low))
        return (value - self.low) / (self.high - self.low) if self.high != self.low else 0.0

    def value(self, fraction: float) -> float:
        if self.log:
            return math.exp(math.log(self.low) + (math.log(self.high) - math.log(self.low)) * fraction)
        return self.low + (self.high - self.low) * fraction


class Canvas:
    """width x height cells; (0, 0) is the top-left cell."""

    def __init__(self, x: Axis, y: Axis, width: int = 60, height: int = 12, glyphs: Glyphs = UNICODE):
        self.x, self.y, self.width, self.height = x, y, width, height
        self.glyphs = glyphs
        self.cells = [[(" ", "")] * width for _ in range(height)]

    def column(self, x: float) -> int:
        return min(self.width - 1, max(0, round(self.x.fraction(x) * (self.width - 1))))

    def row(self, y: float) -> int:
        return min(self.height - 1, max(0, self.height - 1 - round(self.y.fraction(y) * (self.height - 1))))

    def x_at(self, column: int) -> float:
        return self.x.value(column / (self.width - 1))

    def put(self, column: int, row: int, char: str, style: str = "") -> None:
        self.cells[row][column] = (char, style)

    def fill_column(self, column: int, fraction: float, style: str = "") -> None:
        """A bar from the bottom up to `fraction` (0..1) of the height, in eighths of a cell."""
        eighths = round(max(0.0, min(1.0, fraction)) * self.height * 8)
        for row in range(self.height - 1, -1, -1):
            part = min(8, eighths)
            if part:
                self.put(column, row, self.glyphs.eighths[part], style)
            eighths -= part

    def lines(self, y_ticks: dict[int, str], x_labels: tuple[str, str], x_title: str, axis_label: str = "",
              marks: list[tuple[int, str, str]] = ()) -> list[Text]:
        """The grid framed: tick labels on the rows named in `y_ticks`, `axis_label`
        at the corner, x labels under the ends of the axis, one line of marks
        (column, character, style) under the axis for the current configuration,
        then the axis title."""
        pad = max([_MIN_LABEL_WIDTH, len(axis_label), *map(len, y_ticks.values())])
        out = []
        for index, row in enumerate(self.cells):
            label = y_ticks.get(index, "")
            line = Text(f"{label:>{pad}} " + (self.glyphs.tick if label else self.glyphs.axis))
            for char, style in row:
                line.append(char, style)
            out.append(line)
        g = self.glyphs
        out.append(Text(f"{axis_label:>{pad}} " + (g.origin if axis_label else g.corner) + g.rule * self.width))
        if marks:
            line = [" "] * self.width
            styles = {}
            for column, char, style in marks:
                line[column], styles[column] = char, style
            text = Text(" " * (pad + 2))
            for column, char in enumerate(line):
                text.append(char, styles.get(column, ""))
            out.append(text)
        left, right = x_labels
        gap = max(1, self.width - len(left) - len(right))
        out.append(Text(" " * (pad + 2) + left + " " * gap + right))
        out.append(Text(" " * (pad + 2) + x_title.center(self.width).rstrip()))
        return out
