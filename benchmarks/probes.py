"""Probe figures against their peers, measured side by side in one run on the
same GPU:

  * device-memory copy and triad against BabelStream's CUDA backend
    (UoB-HPC/BabelStream, built with nvcc; pass its binary with --babelstream),
    both at BabelStream's default size and at the probe's own array size;
  * FP32 FMA and shared-memory bandwidth against their theoretical peaks at
    the SM clock observed during the run;
  * empirical occupancy against the engine;
  * wall time of the default suite and of --quick (compilation included; a
    --cold run clears the CuPy kernel cache first).

Usage: python benchmarks/probes.py [--babelstream PATH] [--cold]
Prints one table of ratios; exits non-zero only if a command fails.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import time

TUNEADVISE = [sys.executable, "-m", "tuneadvise.cli"]


def run_suite(extra: list[str]) -> tuple[dict, float]:
    start = time.perf_counter()
    proc = subprocess.run([*TUNEADVISE, "probe", "--format", "json", *extra], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"probe failed ({proc.returncode}): {proc.stderr.strip()}")
    return json.loads(proc.stdout), wall


def babelstream(binary: str, elements: int | None) -> dict:
    """BabelStream's --csv rows: function -> (best GB/s, GB/s from the average time)."""
    args = [binary, "--csv"] + (["--arraysize", str(elements)] if elements else [])
    proc = subprocess.run(args, capture_output=True, text=True, check=True)
    rows = {}
    lines = [line for line in proc.stdout.splitlines() if line.count(",") >= 7]
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        unit_key = next(k for k in row if k.startswith("max_") and k.endswith("_per_sec"))
        scale = {"max_MB_per_sec": 1e-3, "max_GB_per_sec": 1.0, "max_MiB_per_sec": 1.048576e-3,
                 "max_GiB_per_sec": 1.073741824}[unit_key]
        best = float(row[unit_key]) * scale
        moved = best * float(row["min_runtime"])  # GB per kernel
        rows[row["function"].strip()] = (best, moved / float(row["avg_runtime"]))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--babelstream", help="path of a BabelStream CUDA binary")
    parser.add_argument("--cold", action="store_true", help="clear CuPy's kernel cache before the first run")
    args = parser.parse_args()
    if args.cold:
        shutil.rmtree(os.path.expanduser("~/.cupy/kernel_cache"), ignore_errors=True)

    quick_doc, quick_wall = run_suite(["--quick"])
    doc, wall = run_suite([])
    results = {r["name"]: r for r in doc["results"]}
    print(f"device: {doc['device']['name']}, SM clock during the run {doc['sm_clock_mhz']:.0f} MHz")
    print(f"suite wall time: default {wall:.1f} s (target < 20 s), --quick {quick_wall:.1f} s (target < 5 s)"
          + (" [cold cache for the --quick run]" if args.cold else ""))
    for name in ("fp32_fma", "fp64_fma", "fp16x2_fma", "shared_read", "dram_copy", "dram_triad"):
        r = results.get(name)
        if r and r["efficiency"] is not None:
            print(f"{name:12s} {r['value']:10.1f} {r['unit']:8s} = {r['efficiency']:.1%} of {r['peak']:.1f} "
                  f"({r['peak_basis']})")
    occ = results.get("occupancy_empirical")
    if occ and not occ["error"]:
        print(f"empirical occupancy: {occ['value']}/{occ['details']['total']} configurations equal to the engine")
    if args.babelstream:
        element_count = results["dram_triad"]["details"]["array_bytes"] // 8
        for label, elements in (("BabelStream default size", None), ("probe's array size", element_count)):
            peer = babelstream(args.babelstream, elements)
            for ours, theirs in (("dram_copy", "Copy"), ("dram_triad", "Triad")):
                r = results[ours]
                best, from_avg = peer[theirs]
                print(f"{ours} vs BabelStream {theirs} ({label}): best {r['best']:.0f} / {best:.0f} GB/s = "
                      f"{r['best'] / best:.3f}x; median {r['value']:.0f} / average {from_avg:.0f} GB/s = "
                      f"{r['value'] / from_avg:.3f}x")


if __name__ == "__main__":
    main()
