"""`rules` and `explain`: the registry's rules, chosen by severity and code, and one rule by code or name."""

from __future__ import annotations

from dataclasses import dataclass

SCHEMA_VERSION = 1  # `rules --format json`'s own layout


@dataclass(frozen=True)
class RulesAnswer:
    rules: tuple  # the chosen Rule objects, in code order

    def to_json(self) -> dict:
        return {"schema_version": SCHEMA_VERSION, "rules": [r.to_dict() for r in self.rules]}


def rules_query(selection, severity: str | None = None) -> RulesAnswer:
    from ..rules import registry

    return RulesAnswer(tuple(r for r in registry().values()
                             if selection.allows(r.code) and (not severity or r.severity == severity)))


def explain_query(code: str):
    """The rule with this code (TA106) or name; InputError naming CODE where there is none."""
    from ...specs.errors import InputError, quoted
    from ..rules import lookup

    rule = lookup(code)
    if rule is None:
        raise InputError(f"CODE: no rule {quoted(code)} (see 'tuneadvise rules')")
    return rule
