"""Text laid out line by line, for the outputs drawn without rich's layout (lint's report, explain, the
frontier, statistics, diffs, long tables stacked): lines wrapped between words at the output's
width (common.output_width: the terminal's, else COLUMNS, 80 by default, 40 at least)."""

from __future__ import annotations

import re


def wrap(text: str, width: int, first: str = "", rest: str = "", whole_words: bool = False) -> list[str]:
    """`text` in lines of at most `width` characters, broken at spaces. A word longer than a line
    (a path, a mangled kernel name) continues on the next lines, broken after its slashes, a part
    still too long with its middle elided; with `whole_words` (a file:line location, which editors
    and terminals jump to) it stands whole on its own line instead."""
    room = max(8, width - max(len(first), len(rest)))
    lines, line = [], first
    empty = True
    for word in text.split(" "):
        parts = _parts(word, room) if len(word) > room and not whole_words else [word]
        for index, part in enumerate(parts):
            if not empty and (index or len(line) + 1 + len(part) > width):
                lines.append(line)
                line = rest + part
            else:
                line = line + part if empty else line + " " + part
            empty = False
    lines.append(line)
    return lines


def _parts(word: str, room: int) -> list[str]:
    """A word too long for `room` in pieces that fit: broken after a '/', else its middle elided."""
    from ..advisor.text import clip

    parts = [""]
    for piece in re.split(r"(?<=/)", word):
        if parts[-1] and len(parts[-1]) + len(piece) > room:
            parts.append("")
        parts[-1] += piece
    return [clip(part, room) for part in parts]


