"""Words and text every output shares: percentages, counted nouns, outside text clipped for a
message, text made safe for a terminal, XML, Markdown or rich markup, and the one JSON line.

Outside text (a kernel name, a path, a compiler's line, a user's value) can hold anything:
control characters that would move the user's terminal, bytes that are not UTF-8, megabytes.
Every output writes it through one of these, so the rules of what is shown live here once.
"""

from __future__ import annotations

import json
import re

# Outside text quoted in a message (one line, clipped) lives with the bad-input error, the lowest layer
# (specs/) every output can import; it is part of this module's vocabulary all the same.
from ..specs.errors import MAX_ERROR, MAX_QUOTED, clip, one_line, quoted  # noqa: F401


def percent(fraction: float) -> str:
    """0.5 -> '50%', 0.625 -> '62.5%': one decimal, none when it is .0."""
    return f"{fraction * 100:.1f}%".replace(".0%", "%")


def plural(count, noun: str, nouns: str | None = None, grouped: bool = True) -> str:
    """'1 block', '4 blocks', '1,024 threads': the count with its noun agreeing (`nouns` where
    adding an s is wrong); `grouped=False` writes the count without thousands separators."""
    if isinstance(count, int):
        number = f"{count:,}" if grouped else str(count)
    else:
        number = f"{count:g}"
    return f"{number} {noun if count == 1 else (nouns or noun + 's')}"


# -- text that is safe to write -------------------------------------------------

def utf8_text(text: str) -> str:
    """`text` as valid UTF-8 text: undecodable bytes (surrogate escapes from a pipe) and lone
    surrogates become U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def terminal_text(text: str) -> str:
    """`text` for a terminal: valid UTF-8 (utf8_text), every control character written as an
    escape (a kernel name holding ESC [31m would otherwise recolour or move the user's terminal)."""
    return one_line(utf8_text(text))


# Patterns as text, compiled by re on first use (and cached there): compiling them when this module
# is imported cost every command's start-up, most of which never escapes text.
_XML_FORBIDDEN = "[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]"


def xml_text(text: str) -> str:
    """Text XML 1.0 allows: forbidden control characters written as \\xNN."""
    return re.sub(_XML_FORBIDDEN, lambda m: f"\\x{ord(m.group(0)):02x}", utf8_text(text))


CONTROL = "[\x00-\x09\x0b\x0c\x0e-\x1f\x7f\x85\u2028\u2029]"  # what breaks or hides a line


def hex_escaped(text: str) -> str:
    """Control and line-breaking characters (CONTROL) written as \\xNN."""
    return re.sub(CONTROL, lambda m: f"\\x{ord(m.group(0)):02x}", text)


_MARKDOWN_SYNTAX = r"([\\`*_\[\]<>|~&$])"


def markdown_text(text) -> str:
    """Text shown as itself in (GitHub-flavoured) Markdown: its syntax backslash-escaped, one line."""
    text = re.sub(_MARKDOWN_SYNTAX, r"\\\1", utf8_text(str(text))).replace("\r", " ").replace("\n", " ")
    return hex_escaped(text)


def markup_text(text) -> str:
    """Text shown as itself through rich, whose markup would read '[b]' or '[[kernels]]' as styles."""
    from rich.markup import escape

    return escape(str(text))


# -- the one JSON line ------------------------------------------------------------

# json.dumps(x, separators=(",", ":")), one encoder. Every document is a tree of fresh dicts and lists
# (none holds itself), so the encoder's check for circular references, an entry made and dropped per
# container, is left out: a batch encodes one document per line.
COMPACT = json.JSONEncoder(separators=(",", ":"), check_circular=False)
_STRICT = json.JSONEncoder(separators=(",", ":"), allow_nan=False, check_circular=False)


def json_line(document, allow_nan: bool = True) -> str:
    """A document as one compact JSON line, without the newline: what every JSON output prints.
    `allow_nan=False`: ValueError for NaN or Infinity (which Python reads but JSON lacks)."""
    return (COMPACT if allow_nan else _STRICT).encode(document)


def write_json_line(document, stream=None) -> None:
    """json_line(document) and a newline, on `stream` (stdout by default)."""
    if stream is None:
        import sys

        stream = sys.stdout
    stream.write(json_line(document) + "\n")
