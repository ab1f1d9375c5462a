"""A verdict on one proposed change, and how evidence combines into it.

Each piece of evidence says one of four things about the change:

- "loss": it will likely run slower (a cap that spills more than today);
- "no_gain": more resident warps cannot help much here (tensor-core or register-tiled code,
  throughput already near its peak, a grid that is already resident whole, a tail wave);
- "gain": more resident warps likely help (a latency-bound profile);
- "neutral": a fact worth showing that decides nothing (the occupancy the change buys).

The combination is deliberately asymmetric, because a wrong "likely gain" costs a user a
slower kernel while a wrong "unknown" costs only a timing run: any "loss" makes the change
`likely_loss`; otherwise any "no_gain" keeps it `unknown`; otherwise a "gain" makes it
`likely_gain`; with nothing but neutral facts it is `unknown`.

    >>> occupancy = Evidence("occupancy", {"blocks_per_sm": [4, 5]}, "neutral", "4 -> 5 blocks/SM")
    >>> combine([occupancy]).outcome
    'unknown'
    >>> spill = Evidence("compiler_at_cap", {"spill_stores": 44}, "loss", "the cap spills 44 B")
    >>> latency = Evidence("profile", {"eligible_warps_per_scheduler": 0.4}, "gain", "latency-bound")
    >>> combine([occupancy, latency]).outcome, combine([occupancy, latency, spill]).outcome
    ('likely_gain', 'likely_loss')
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

OUTCOMES = ("likely_gain", "likely_loss", "unknown")
SAYS = ("gain", "loss", "no_gain", "neutral")
WORDS = {"likely_gain": "likely gain", "likely_loss": "likely loss", "unknown": "unknown"}
# The evidence a verdict's text names: what decided it.
_DECIDING = {"likely_loss": ("loss",), "likely_gain": ("gain",), "unknown": ("no_gain",)}
_UNDECIDED = "no build, machine code or profile decides it: time it"


class Evidence(NamedTuple):
    kind: str  # "occupancy", "compiler_at_cap", "machine_code", "profile", "library", "launch"
    value: object  # the figures it rests on, as JSON values
    says: str  # one of SAYS
    why: str  # one clause, for the finding's text

    def to_dict(self) -> dict:
        return {"kind": self.kind, "value": self.value, "says": self.says, "why": self.why}

    @classmethod
    def from_dict(cls, data: dict) -> Evidence:
        return cls(data["kind"], data["value"], data["says"], data["why"])


class Verdict(NamedTuple):
    outcome: str  # one of OUTCOMES
    evidence: tuple[Evidence, ...]

    def to_dict(self) -> dict:
        return {"outcome": self.outcome, "evidence": [e.to_dict() for e in self.evidence]}

    @classmethod
    def from_dict(cls, data: dict) -> Verdict:
        return cls(data["outcome"], tuple(Evidence.from_dict(e) for e in data["evidence"]))

    def text(self) -> str:
        """'verdict: likely loss (the cap spills 44 B of stores per thread)'."""
        reasons = [e.why for e in self.evidence if e.says in _DECIDING[self.outcome]]
        return f"verdict: {WORDS[self.outcome]} ({'; '.join(reasons) or _UNDECIDED})"


def combine(evidence: Iterable[Evidence]) -> Verdict:
    """The verdict the evidence supports (see the module's docstring for the order)."""
    found = tuple(evidence)
    says = {e.says for e in found}
    if "loss" in says:
        outcome = "likely_loss"
    elif "no_gain" in says:
        outcome = "unknown"
    elif "gain" in says:
        outcome = "likely_gain"
    else:
        outcome = "unknown"
    return Verdict(outcome, found)


def verdict_of(details: dict) -> Verdict | None:
    """The verdict a finding's details carry, None where the finding proposes no change."""
    data = details.get("verdict")
    return Verdict.from_dict(data) if data is not None else None
