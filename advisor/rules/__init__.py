"""The rule registry: rule texts from rules.toml, checks from checks.py.

    >>> from tuneadvise.advisor.rules import registry
    >>> registry()["TA106"].name
    'dynamic-shared-mem-needs-opt-in'
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import NamedTuple

from tuneadvise.specs.catalog import read_toml_cached

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {name: rank for rank, name in enumerate(reversed(SEVERITIES))}  # info 0 < warning 1 < error 2


# NamedTuple rather than dataclass: creating a dataclass at import costs ~1 ms,
# and this module is on every command's start-up path (benchmarks/startup.py).
class Rule(NamedTuple):
    code: str
    name: str
    kind: str  # "config" (checked against an occupancy result) or "source" (CUDA source scan)
    severity: str
    summary: str
    explanation: str
    source: str
    params: dict
    trigger: dict
    clean: dict

    def to_dict(self) -> dict:
        return {"code": self.code, "name": self.name, "severity": self.severity, "summary": self.summary,
                "explanation": self.explanation, "source": self.source}


class Finding(NamedTuple):
    code: str
    severity: str
    message: str
    arch: str
    details: dict  # the numbers behind the message
    source: str = ""

    def to_dict(self) -> dict:
        return {"code": self.code, "severity": self.severity, "message": self.message, "arch": self.arch,
                "details": self.details, "source": self.source}


@lru_cache(maxsize=1)
def registry() -> dict[str, Rule]:
    [raw] = read_toml_cached([os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules.toml")])
    return {
        code: Rule(code=code, name=entry["name"], kind=entry.get("kind", "config"), severity=entry["severity"], summary=entry["summary"],
                   explanation=entry["explanation"].strip(), source=entry["source"],
                   params=entry.get("params", {}), trigger=entry["trigger"], clean=entry["clean"])
        for code, entry in raw.items()
    }


def lookup(code_or_name: str) -> Rule | None:
    rules = registry()
    key = code_or_name.strip()
    if key.upper() in rules:
        return rules[key.upper()]
    return next((r for r in rules.values() if r.name == key.lower()), None)


class RuleSelection(NamedTuple):
    """ruff-style --select/--ignore: codes or prefixes ("TA1", "TA106")."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    @classmethod
    def parse(cls, select: str | None, ignore: str | None) -> RuleSelection:
        def split(text, option):
            items = tuple(p.strip().upper() for p in (text or "").split(",") if p.strip())
            known = registry()
            for item in items:
                if not any(code.startswith(item) for code in known):
                    raise ValueError(f"{option}: '{item}' matches no rule code (see 'tuneadvise rules')")
            return items

        return cls(split(select, "--select"), split(ignore, "--ignore"))

    def allows(self, code: str) -> bool:
        if self.select and not any(code.startswith(p) for p in self.select):
            return False
        return not any(code.startswith(p) for p in self.ignore)


def finding_order(finding: Finding) -> tuple:
    """Sort key: the most severe first, then by code."""
    return -SEVERITY_RANK[finding.severity], finding.code


def check_occupancy(resolved, result, selection: RuleSelection | None = None) -> list[Finding]:
    """Run every selected rule against one occupancy result and its LaunchConfig (launch context
    included: grid, cluster, spills); the findings in finding_order."""
    findings = config_findings(resolved, result, selection or RuleSelection())
    findings.sort(key=finding_order)
    return findings


def config_findings(resolved, result, selection: RuleSelection) -> list[Finding]:
    """check_occupancy's findings in no particular order, for a caller that adds its own and sorts once."""
    from tuneadvise.advisor.rules.checks import Context

    return _run(Context.build(resolved, result), _config_checks(selection), [])


def _run(ctx, checks, findings: list) -> list:
    for rule, check in checks:
        for message, details, *severity in check(ctx, rule.params):
            # A check may lower its rule's severity for one finding (TA304 at 100% occupancy).
            findings.append(finding_of(rule, message, ctx.result.arch.sm, details, *(s for s in severity if s)))
    return findings


def finding_of(rule: Rule, message: str, arch: str, details: dict, severity: str | None = None) -> Finding:
    """The Finding of `rule` with this message and details on `arch` (at the rule's severity,
    unless the check lowered it)."""
    return Finding(code=rule.code, severity=severity or rule.severity, message=message, arch=arch, details=details,
                   source=rule.source)


@lru_cache(maxsize=8)
@lru_cache(maxsize=32)
def _config_checks(selection: RuleSelection) -> tuple:
    """(rule, check) pairs of the config rules the selection allows: decided once per selection,
    not per kernel."""
    from tuneadvise.advisor.rules.checks import CHECKS

    return tuple((rule, CHECKS[code]) for code, rule in registry().items()
                 if rule.kind == "config" and selection.allows(code))
