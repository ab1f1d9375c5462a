"""Phrases the rule messages share ("1 block/SM", "2 blocks/SM")."""

from __future__ import annotations

from ..text import plural


def per_sm(n: int) -> str:
    """'1 block/SM', '4 blocks/SM'."""
    return plural(n, "block", grouped=False) + "/SM"
