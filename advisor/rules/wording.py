"""Words the messages share: percentages, counted nouns ("1 block/SM", "2 blocks/SM"), and
text from outside (a name, a compiler's line) clipped to a length."""

from __future__ import annotations


def pct(x: float) -> str:
    """0.5 -> '50%', 0.625 -> '62.5%' (one decimal, none when it is .0)."""
    return f"{x * 100:.1f}%".replace(".0%", "%")


def count(n: int, noun: str, plural: str | None = None) -> str:
    """'1 block', '2 blocks' (`plural` where adding an s is wrong)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def per_sm(n: int) -> str:
    """'1 block/SM', '4 blocks/SM'."""
    return count(n, "block") + "/SM"


def clipped(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and "...": outside text quoted in a message stays short."""
    return text if len(text) <= limit else text[:limit] + "..."
