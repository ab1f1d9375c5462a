"""The rule registry: rule texts from rules.toml, checks from checks.py.

    >>> from tuneadvise.advisor.rules import registry
    >>> registry()["TA106"].name
    'dynamic-shared-mem-needs-opt-in'
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import NamedTuple

from tuneadvise.advisor.memo import PerArch
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


def check_occupancy(resolved, result, selection: RuleSelection | None = None, **context) -> list[Finding]:
    """Run every selected rule against one occupancy result; the findings in finding_order.

    `context` may carry spill_bytes, grid_size, sm_count, cluster_size,
    compiled_for and block_dims, as lint or the command line know them.
    """
    findings = config_findings(resolved, result, selection or RuleSelection(), context)
    findings.sort(key=finding_order)
    return findings


def config_findings(resolved, result, selection: RuleSelection, context: dict) -> list[Finding]:
    """check_occupancy's findings in no particular order, for a caller that adds its own and sorts once."""
    from tuneadvise.advisor.rules.checks import Context

    ctx = Context.build(resolved, result, context)
    result_only, with_context = _config_checks(selection)
    findings = list(_result_findings(ctx, selection, result_only)) if result_only else []
    return _run(ctx, with_context, findings)


def _run(ctx, checks, findings: list) -> list:
    for rule, check in checks:
        for message, details in check(ctx, rule.params):
            findings.append(finding_of(rule, message, ctx.result.arch.sm, details))
    return findings


# Findings of the checks that read nothing but the occupancy result, per result: kernels
# with the same figures and block but other grids, clusters or block shapes share them.
_BY_RESULT = PerArch(1 << 14)


def _result_findings(ctx, selection: RuleSelection, checks: tuple) -> list:
    result = ctx.result
    return _BY_RESULT.get(result.arch, (result.kernel, selection), lambda: _run(ctx, checks, []))


# Lint reports the same finding for many kernels (same figures, same words, same
# numbers); one object per distinct finding keeps memory flat and lets the JSON
# writer encode each once. Keyed by the words: the numbers behind them almost
# always agree too, and are compared only when the words recur, by repr(), which
# tells 1 from 1.0 and True where == does not, so a shared finding means equal JSON.
_FINDINGS: dict = {}


def finding_of(rule: Rule, message: str, arch: str, details: dict) -> Finding:
    """The Finding for `rule` with this message and details on `arch`, shared when it recurs."""
    key = (rule.code, message, arch)
    finding = _FINDINGS.get(key)
    if finding is not None and finding.details == details and repr(finding.details) == repr(details):
        return finding
    finding = Finding(rule.code, rule.severity, message, arch, details, rule.source)
    if key not in _FINDINGS:  # the first details seen with these words are the shared ones
        if len(_FINDINGS) >= 1 << 16:
            _FINDINGS.clear()
        _FINDINGS[key] = finding
    return finding


@lru_cache(maxsize=8)
def checks_reading(field: str) -> tuple[str, ...]:
    """The codes of the config rules whose checks read `field` of the context ("spill_bytes"...)."""
    from tuneadvise.advisor.rules.checks import READS

    return tuple(code for code, reads in READS.items() if field in reads)


@lru_cache(maxsize=32)
def _config_checks(selection: RuleSelection) -> tuple[tuple, tuple]:
    """((rule, check) pairs that read only the result, those that read more of the context), for
    the config rules the selection allows: decided once per selection, not per kernel."""
    from tuneadvise.advisor.rules.checks import CHECKS, READS

    chosen = [(rule, CHECKS[code]) for code, rule in registry().items()
              if rule.kind == "config" and selection.allows(code)]
    return (tuple(pair for pair in chosen if not READS[pair[0].code]),
            tuple(pair for pair in chosen if READS[pair[0].code]))
