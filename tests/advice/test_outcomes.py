"""The outcome table is the contract: every change of the recorded grid (register caps at every
occupancy cliff and block sizes, on this project's advice kernels and PolyBench-ACC's, timed on
a GPU by benchmarks/advice_outcomes.py) is replayed through today's verdicts, beside the
measured outcome. Of `likely_gain`, at least 80% measured faster beyond the noise and none 10%
or more slower; of `likely_loss`, at least 80% measured slower or equal. The inputs are outside
truth only: the GPU's times, ptxas's figures, Nsight Compute's profiles, nvdisasm's listings
(read through today's reader)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from ..helpers import ROOT

RECORDED = ROOT / "benchmarks" / "recorded"
OUTCOMES = sorted(RECORDED.glob("advice-outcomes*.json"))


def _advice():
    spec = importlib.util.spec_from_file_location("advice_table", ROOT / "benchmarks" / "advice.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def replayed():
    # The grid is recorded in the repository: without it the contract is not checked, which fails.
    assert OUTCOMES, "no recorded outcome grid in benchmarks/recorded/ (benchmarks/record_advice_outcomes.sh)"
    advice = _advice()
    recording = json.loads(OUTCOMES[-1].read_text())
    profiles = advice.profiles_by_kernel(sorted(advice.PROFILES.glob("advice-*.csv*")))
    machine_code = advice.machine_code_of(ROOT / "tests" / "fixtures" / "advice" / "nvdisasm_sm_90.json.gz")
    return advice, recording, profiles, machine_code


def test_the_recorded_grid_meets_the_targets(replayed):
    advice, recording, profiles, machine_code = replayed
    found = advice.rows(recording, profiles, machine_code)
    summary = advice.summary(found)
    print(advice.table(found, recording["device"]))
    assert summary["changes"] >= 25
    assert {r["suite"] for r in found} >= {"tuneadvise", "PolyBench-ACC"}
    assert {r["change"]["kind"] for r in found} == {"register_cap", "block_size"}
    assert summary["gain_target_met"], summary
    assert summary["loss_target_met"], summary
    # The gains the recorded grid shows today's verdicts calling, and measured faster: a change of
    # the verdicts that stops calling them (or calls one that measured slower) fails here.
    assert summary["gain_faster"] >= 1 and summary["likely_gain"] >= 1, summary


@pytest.mark.parametrize("outcome", ["unknown", "likely_loss"])
def test_a_verdict_set_that_never_says_likely_gain_misses_the_gain_target(replayed, monkeypatch, outcome):
    """The target once held over zero gains: `not gains or ...` met it with nothing measured."""
    advice, recording, profiles, machine_code = replayed
    from tuneadvise.advisor.advice.verdict import Verdict

    monkeypatch.setattr(advice, "verdict_of", lambda known, variant: Verdict(outcome, ()))
    summary = advice.summary(advice.rows(recording, profiles, machine_code))
    assert summary["likely_gain"] == 0 and not summary["gain_target_met"], summary


def test_the_targets_can_fail_a_verdict_that_believes_occupancy(replayed, monkeypatch):
    """Occupancy alone as the verdict (more warps: likely gain, fewer: likely loss), as the tool
    advised before verdicts: the recorded grid refutes it."""
    advice, recording, profiles, machine_code = replayed
    from tuneadvise.advisor.advice.verdict import Verdict

    def believes_occupancy(known, variant):
        from tuneadvise.advisor.engine.occupancy import occupancy

        before = occupancy(known.arch, known.launch)
        registers = variant["ptxas"]["registers"]
        block = 1
        for d in variant["launch"]["block"]:
            block *= d
        after = occupancy(known.arch, known.launch.replace(registers=registers, block_size=block))
        if after.active_warps_per_sm == before.active_warps_per_sm:
            return Verdict("unknown", ())
        return Verdict("likely_gain" if after.active_warps_per_sm > before.active_warps_per_sm else "likely_loss", ())

    monkeypatch.setattr(advice, "verdict_of", believes_occupancy)
    summary = advice.summary(advice.rows(recording, profiles, machine_code))
    assert not (summary["gain_target_met"] and summary["loss_target_met"]), summary
