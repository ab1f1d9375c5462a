"""Rule.needs: a config rule is skipped where what it needs is absent (config_findings' plan).
The findings must be those of every selected rule run on every result, over a seeded sweep of
configurations with and without each launch-context input and with launch errors; and each
rule with needs must be silent wherever one of them is absent."""

import random

import pytest

from tuneadvise.advisor.engine.occupancy import occupancy
from tuneadvise.advisor.launch import LaunchConfig
from tuneadvise.advisor.rules import (
    NEEDS_ERRORS,
    LaunchContext,
    RuleSelection,
    config_findings,
    finding_of,
    registry,
    selected,
)
from tuneadvise.specs.catalog import shipped_catalog

CATALOG = shipped_catalog()
NAMES = [arch.sm for arch in CATALOG.sorted_archs()] + [p.name for p in CATALOG.products.values()]


def sweep(count: int, seed: int = 3):
    """(resolved, result) for varied configurations: every optional input set on some, launch errors on some."""
    rng = random.Random(seed)
    for _ in range(count):
        values = {"registers": rng.randint(0, 255),
                  "block_size": rng.choice([32, 96, 128, 256, 1024, "16x16", "4x8x2", rng.randint(1, 1024)]),
                  "shared_mem": rng.choice([0, 4096, 40000, 60000]),
                  "dynamic_shared_mem": rng.choice([0, 16384, rng.randint(0, 240000)]),
                  "carveout": rng.choice(["default", "max-l1", 25, 100]), "opt_in": rng.random() < 0.5,
                  "barriers": rng.choice([0, 1, 1, 16]), "virtual_resources": rng.choice([0, 0, 64, 129])}
        for key, value in (("grid_size", rng.randint(1, 5000)), ("sm_count", rng.randint(1, 200)),
                           ("cluster_size", rng.choice([1, 2, 8, 16, 32])), ("compiled_for", "sm_70"),
                           ("spill_stores", rng.choice([0, 8, 200])), ("spill_loads", rng.choice([0, 8])),
                           ("stack_frame", rng.choice([0, 64, 512])), ("max_threads_per_block", rng.choice([128, 1024]))):
            if rng.random() < 0.3:
                values[key] = value
        resolved = CATALOG.resolve(rng.choice(NAMES))
        yield resolved, occupancy(resolved.arch, LaunchConfig.from_mapping(values))


def every_rule(resolved, result) -> list:
    """The findings of every config rule on the result, none skipped."""
    findings, launch = [], LaunchContext.of(resolved, result)
    for rule in selected(RuleSelection(), "config"):
        subject = launch if rule.context is LaunchContext else result
        for message, details, *severity in rule.check(subject, rule.params):
            findings.append(finding_of(rule, message, result.arch.sm, details, *severity))
    return findings


def test_the_plan_finds_what_every_rule_finds():
    seen = set()
    for resolved, result in sweep(3000):
        planned = config_findings(resolved, result, RuleSelection())
        assert planned == every_rule(resolved, result), result.kernel
        seen.update(f.code for f in planned)
    # The sweep reaches the rules that have needs, so the comparison covers them.
    assert {"TA102", "TA105", "TA501", "TA502", "TA603", "TA604", "TA701", "TA703", "TA202"} <= seen


def _absent(result, need: str) -> bool:
    return not (result.errors if need == NEEDS_ERRORS else getattr(result.kernel, need))


@pytest.mark.parametrize("code", [code for code, rule in registry().items() if rule.kind == "config" and rule.needs])
def test_a_rule_is_silent_without_what_it_needs(code):
    rule = registry()[code]
    checked = 0
    for resolved, result in sweep(1500, seed=int(code[2:])):
        if any(_absent(result, need) for need in rule.needs):
            subject = LaunchContext.of(resolved, result) if rule.context is LaunchContext else result
            assert list(rule.check(subject, rule.params)) == [], result.kernel
            checked += 1
    assert checked > 100
