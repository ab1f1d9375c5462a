"""A change's verdict is one: what TA301 and TA302 attach to an occupancy step equals the judge's
verdict (`tune`, frontier, suggest, the outcome table) on the same change, over a seeded sweep of
every architecture, family and product, grids with and without an SM count, register and
block-size steps; and with the machine code lint reads, the finding's verdict weighs the same
evidence as the judge given that code."""

import random
from types import SimpleNamespace

from tuneadvise.advisor.advice.evidence_machine_code import of_finding
from tuneadvise.advisor.advice.judge import Known, block_size_verdict, register_cap_verdict
from tuneadvise.advisor.advice.verdict import verdict_of
from tuneadvise.advisor.engine.occupancy import occupancy
from tuneadvise.advisor.launch import LaunchConfig
from tuneadvise.advisor.rules import LaunchContext, RuleSelection, config_findings, with_evidence
from tuneadvise.specs.catalog import shipped_catalog

CATALOG = shipped_catalog()
NAMES = ([arch.sm for arch in CATALOG.sorted_archs()] + sorted(CATALOG.family_default)
         + [product.name for product in CATALOG.products.values()])
STEP_RULES = RuleSelection(select=("TA301", "TA302"))


def sweep(count: int, seed: int):
    """(resolved, result, sm_count) of varied launches: a grid on most (from under one wave to many),
    an SM count of their own on some, the product's on product names."""
    rng = random.Random(seed)
    for _ in range(count):
        values = {"registers": rng.randint(16, 255),
                  "block_size": rng.choice([32, 64, 96, 128, 256, 512, 1024, "16x16", rng.randint(1, 1024)]),
                  "shared_mem": rng.choice([0, 0, 4096, 12288, 40000]),
                  "dynamic_shared_mem": rng.choice([0, 1024, 16384]), "barriers": rng.choice([0, 1, 1, 4])}
        if rng.random() < 0.8:
            values["grid_size"] = rng.choice([1, 40, 132, 300, 1000, 4096, rng.randint(1, 100000)])
        if rng.random() < 0.4:
            values["sm_count"] = rng.choice([1, 20, 46, 108, 132, 170])
        if rng.random() < 0.2:
            values["max_threads_per_block"] = rng.choice([256, 1024])
        resolved = CATALOG.resolve(rng.choice(NAMES))
        result = occupancy(resolved.arch, LaunchConfig.from_mapping(values))
        yield resolved, result, LaunchContext.of(resolved, result).sm_count


def _judged(known: Known, details: dict, code: str):
    """The judge's verdict on the change a TA301 or TA302 finding attaches its verdict to, and that verdict."""
    if code == "TA302":
        step = details["next_step"]
        return register_cap_verdict(known, {"registers": step["value"]}), verdict_of(step)
    if "register_change" in details:
        step = next(s for s in details["next_steps"] if s["resource"] == "registers")
        return register_cap_verdict(known, {"registers": step["value"]}), verdict_of(details)
    return block_size_verdict(known, details["block_change"]["block_size"]), verdict_of(details)


def proposed_value(details: dict):
    """The register count TA301's register change caps at (its first register step), else None."""
    if "register_change" not in details:
        return None
    return next(s for s in details["next_steps"] if s["resource"] == "registers")["value"]


def _step_findings(resolved, result):
    return [f for f in config_findings(resolved, result, STEP_RULES)
            if "verdict" in f.details or "next_step" in f.details]


def test_a_rules_verdict_on_a_step_is_the_judges_on_the_same_change():
    seen = {"TA301 registers": 0, "TA301 block": 0, "TA302": 0, "grid evidence": 0, "no gain": 0}
    for resolved, result, sm_count in sweep(2500, seed=41):
        known = Known(result.arch, result.kernel, sm_count)
        for finding in _step_findings(resolved, result):
            judged, attached = _judged(known, finding.details, finding.code)
            assert attached.to_dict() == judged.to_dict(), (finding.message, result.kernel)
            for step in finding.details.get("next_steps", ()):  # every register step TA301 lists
                if "verdict" in step:
                    assert verdict_of(step) == register_cap_verdict(known, {"registers": step["value"]})
            kind = finding.code if finding.code == "TA302" else \
                "TA301 registers" if "register_change" in finding.details else "TA301 block"
            seen[kind] += 1
            seen["grid evidence"] += any(e.kind == "launch" for e in attached.evidence)
            seen["no gain"] += any(e.says == "no_gain" for e in attached.evidence)
    # Each kind of step and the grid's evidence many times over; "no gain" is rare now that a grid resident
    # whole (the grid's no_gain) gets no step at all (test_ta302_names_a_next_step_only_where_ta301_offers_one).
    assert min(v for kind, v in seen.items() if kind != "no gain") >= 20 and seen["no gain"] >= 1, seen


def test_with_its_machine_code_a_findings_verdict_weighs_what_the_judge_weighs():
    rng = random.Random(5)
    compared, relieved, low = 0, 0, 0
    for resolved, result, sm_count in sweep(1500, seed=43):
        for finding in _step_findings(resolved, result):
            instructions = {"barriers": rng.choice([0, 2]), "tensor": rng.choice([0, 0, 8])}
            weighed = with_evidence(finding, of_finding(finding.details, SimpleNamespace(
                instructions=instructions, hot_loop=None))).details
            linted = verdict_of(weighed)
            # Every copy of the verdict on this one change says the same (TA302's next step, TA301's first).
            steps = [weighed["next_step"]] if "next_step" in weighed else \
                [s for s in weighed["next_steps"] if s.get("value") == proposed_value(finding.details)]
            assert all(s["verdict"] == weighed["verdict"] for s in steps), finding.message
            judged, _ = _judged(Known(result.arch, result.kernel, sm_count, instructions=instructions),
                                finding.details, finding.code)
            assert linted.outcome == judged.outcome, (finding.message, instructions)
            assert sorted(map(repr, linted.evidence)) == sorted(map(repr, judged.evidence))  # in any order
            compared += 1
            low += finding.code == "TA302"
            relieved += any(e.says == "gain" and e.kind == "launch" for e in linted.evidence)
    assert compared >= 100 and relieved >= 5 and low >= 50, (compared, relieved, low)


def test_ta302_names_a_next_step_only_where_ta301_offers_one():
    # On a grid of one wave or less TA301 offers no step (a larger grid first): TA302 must not name one.
    one_wave = 0
    for resolved, result, _ in sweep(2500, seed=47):
        found = {f.code: f for f in config_findings(resolved, result, STEP_RULES)}
        if "TA302" not in found or "TA301" not in found:
            continue
        offers = found["TA301"].details.get("grid_fills_more", True) and "register_change" in found["TA301"].details
        names = "next_step" in found["TA302"].details
        if names:
            assert offers, found["TA302"].message
        one_wave += found["TA301"].details.get("grid_fills_more") is False
    assert one_wave >= 20, one_wave
