"""The outcome table: does each verdict of tuneadvise's advice hold when measured? For every
kernel of the recorded outcome grid (this project's advice kernels and PolyBench-ACC's CUDA
kernels, timed on a GPU by benchmarks/advice_outcomes.py: every register cap at an occupancy
cliff and block sizes 32-1024), the verdict tuneadvise gives each change (advisor/advice/judge.py:
the build at the cap, the machine code, the baseline's Nsight Compute profile, the launch) is
printed beside what the GPU measured.

A change is measured faster or slower when its median time differs from the baseline's by more
than the noise: the larger of 2% and twice the spread between the baseline's two medians (timed
at the start and the end of its kernel's run). The targets (docs/advice.md): of `likely_gain`,
at least 80% measured faster and none 10% or more slower; of `likely_loss`, at least 80% measured
slower or equal; `unknown` is counted.

CPU only; it replays recorded measurements:

    python benchmarks/advice.py [--outcomes F.json] [--profile F.csv ...] [--machine-code F.json] [--out F.txt]

(defaults: the H200 recordings in benchmarks/recorded/, tests/fixtures/ncu/advice/ and
tests/fixtures/advice/)."""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RECORDED = HERE / "recorded"
FIXTURES = ROOT / "tests" / "fixtures" / "advice"
PROFILES = ROOT / "tests" / "fixtures" / "ncu" / "advice"  # Nsight Compute exports of each baseline
NOISE_FLOOR = 0.02
TARGET_SHARE, WORST_GAIN = 0.8, 1.10


def profiles_by_kernel(paths) -> dict[str, dict]:
    """Each profiled baseline's `measured` object as lint reports it, by kernel function name
    (the demangled name up to its '(' or '<')."""
    from tuneadvise.advisor.lint.records import LintOptions
    from tuneadvise.advisor.lint.run import lint_paths

    found = {}
    for kernel in lint_paths([str(path) for path in paths], LintOptions()).kernels if paths else ():
        if kernel.measured is not None:
            name = kernel.demangled.removeprefix("void ").split("(")[0].strip()
            found.setdefault(name, kernel.measured)
    return found


def outcome(ratio: float, noise: float) -> str:
    return "faster" if ratio < 1 - noise else "slower" if ratio > 1 + noise else "equal"


def machine_code_of(path: Path) -> dict:
    """{source file: {kernel: {instructions, hot_loop}}}: the recorded nvdisasm listings
    (benchmarks/advice_machine_code.py) read through tuneadvise's reader now."""
    import gzip
    import io

    from tuneadvise.advisor.readers.sass import read_sass

    listings = json.loads(gzip.decompress(path.read_bytes()))["listings"]
    return {file: {sass.name: {"instructions": sass.instructions, "hot_loop": sass.hot_loop}
                   for sass in read_sass(io.StringIO(text))} for file, text in listings.items()}


def _known(row: dict, device: dict, profiles: dict, machine_code: dict):
    from tuneadvise.advisor.advice.evidence_profile import figures
    from tuneadvise.advisor.advice.judge import Known
    from tuneadvise.advisor.launch import LaunchConfig
    from tuneadvise.specs.resolve import resolve_arch

    base, built = row["baseline"]["launch"], row["baseline"]["ptxas"]
    launch = LaunchConfig(registers=built["registers"], block_size=math.prod(base["block"]),
                          block_dims=tuple(base["block"]) if len(base["block"]) > 1 else (),
                          static_shared_mem=built.get("smem", 0), grid_size=math.prod(base["grid"]),
                          spill_stores=built.get("spill_stores", 0), spill_loads=built.get("spill_loads", 0))
    code = machine_code.get(row["origin"]["file"], {}).get(row["entry"], {})
    profile = profiles.get(row["kernel"]) or profiles.get(row["kernel"].split("<")[0])
    return Known(resolve_arch(row["arch"]), launch, device.get("sms"), name=row["kernel"],
                 instructions=code.get("instructions"), hot_loop=code.get("hot_loop"), profile=figures(profile))


def verdict_of(known, variant: dict):
    from tuneadvise.advisor.advice.judge import block_size_verdict, register_cap_verdict

    if variant["change"]["kind"] == "register_cap":
        return register_cap_verdict(known, {k: variant["ptxas"].get(k) for k in ("registers", "spill_stores",
                                                                                  "spill_loads")})
    return block_size_verdict(known, math.prod(variant["launch"]["block"]), math.prod(variant["launch"]["grid"]))


def rows(recording: dict, profiles: dict, machine_code: dict) -> list[dict]:
    """One row per measured change: the verdict beside the measured outcome."""
    found = []
    for row in recording["kernels"]:
        if "failed" in row:
            continue
        known = _known(row, recording["device"], profiles, machine_code)
        base = statistics.mean(row["baseline"]["median_us"])
        noise = max(NOISE_FLOOR, 2 * row["baseline_spread"])
        for variant in row["variants"]:
            if "median_us" not in variant:  # the driver refused the launch: no time to compare
                continue
            verdict = verdict_of(known, variant)
            ratio = variant["median_us"] / base
            found.append({"kernel": row["kernel"], "suite": row["origin"]["suite"],
                          "change": variant["change"], "verdict": verdict.outcome,
                          "deciding": [e.why for e in verdict.evidence if e.says != "neutral"],
                          "ratio": round(ratio, 4), "noise": round(noise, 4), "measured": outcome(ratio, noise)})
    return found


def summary(found: list[dict]) -> dict:
    """Counts per verdict and whether the targets hold. A target over no verdicts is not met:
    a verdict set that never says likely_gain (or likely_loss) has shown nothing."""
    gains = [r for r in found if r["verdict"] == "likely_gain"]
    losses = [r for r in found if r["verdict"] == "likely_loss"]
    faster = sum(r["measured"] == "faster" for r in gains)
    worst = max((r["ratio"] for r in gains), default=None)
    held = sum(r["measured"] in ("slower", "equal") for r in losses)
    return {"changes": len(found), "likely_gain": len(gains), "gain_faster": faster,
            "gain_worst_ratio": worst, "likely_loss": len(losses), "loss_slower_or_equal": held,
            "unknown": sum(r["verdict"] == "unknown" for r in found),
            "gain_target_met": bool(gains) and faster >= TARGET_SHARE * len(gains) and worst < WORST_GAIN,
            "loss_target_met": bool(losses) and held >= TARGET_SHARE * len(losses)}


def _change(change: dict) -> str:
    return f"cap {change['value']}" if change["kind"] == "register_cap" else f"block {change['value']}"


def table(found: list[dict], device: dict) -> str:
    lines = [f"{device.get('name', '?')} (cc {device.get('cc', '?')}, {device.get('sms', '?')} SMs)",
             f"{'kernel':<22} {'change':<14} {'verdict':<12} {'after/before':>12} {'measured':<8}  evidence"]
    for r in found:
        lines.append(f"{r['kernel'][:22]:<22} {_change(r['change']):<14} {r['verdict']:<12} {r['ratio']:>12.3f} "
                     f"{r['measured']:<8}  {'; '.join(r['deciding'])[:120]}")
    s = summary(found)
    lines += [f"changes: {s['changes']}; likely_gain {s['likely_gain']} (faster {s['gain_faster']}, worst "
              f"{s['gain_worst_ratio']}), likely_loss {s['likely_loss']} (slower or equal "
              f"{s['loss_slower_or_equal']}), unknown {s['unknown']}",
              f"targets: likely_gain {'met' if s['gain_target_met'] else 'MISSED'}, "
              f"likely_loss {'met' if s['loss_target_met'] else 'MISSED'}"]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outcomes", type=Path, default=RECORDED / "advice-outcomes-h200.json")
    parser.add_argument("--profile", type=Path, action="append")
    parser.add_argument("--machine-code", type=Path, default=FIXTURES / "nvdisasm_sm_90.json.gz")
    parser.add_argument("--out", type=Path, help="also write the table here")
    options = parser.parse_args()
    recording = json.loads(options.outcomes.read_text())
    profiles = profiles_by_kernel(options.profile or sorted(PROFILES.glob("advice-*.csv*")))
    machine_code = machine_code_of(options.machine_code)
    text = table(rows(recording, profiles, machine_code), recording["device"])
    print(text)
    if options.out:
        options.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
