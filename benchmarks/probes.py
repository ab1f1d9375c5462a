"""Probe figures against their peers, measured side by side in one run on the
same GPU:

  * device-memory copy and triad against BabelStream's CUDA backend
    (UoB-HPC/BabelStream, built with nvcc; pass its binary with --babelstream)
    at 2^25 doubles (its default) and 2^28 (the size its users quote): ours
    measured in this process at each size right after BabelStream's run;
  * the bandwidth-vs-occupancy curve against gpu-benches' gpu-stream
    (RRZE-HPC/gpu-benches, --gpu-stream) read column at 25/50/100% occupancy;
  * L2 read bandwidth against gpu-benches' gpu-l2-cache (--gpu-l2-cache): its
    best figure for data sets inside L2;
  * --quick against the full run, figure by figure (unstable ones named);
  * FP32 FMA and shared-memory bandwidth against their theoretical peaks at
    the SM clock observed during the run; empirical and cluster occupancy
    against the engine and the driver;
  * wall time of the default suite and of --quick.

  * host memory: the peak resident set of `probe --device DEVICES --quick`
    (--rss-devices; '0,0' runs the multi-device path twice on one GPU), per device.

Usage: python benchmarks/probes.py [--babelstream PATH] [--gpu-stream PATH]
       [--gpu-l2-cache PATH] [--json PATH] [--cold] [--no-suite] [--rss-devices 0,0]
Prints one table of ratios; exits non-zero only if a command fails.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from peak_memory import measured  # this folder: the script's own

TUNEADVISE = [sys.executable, "-m", "tuneadvise.cli"]


def run_suite(extra: list[str]) -> tuple[dict, float]:
    start = time.perf_counter()
    proc = subprocess.run([*TUNEADVISE, "probe", "--format", "json", *extra], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"probe failed ({proc.returncode}): {proc.stderr.strip()}")
    return json.loads(proc.stdout), wall


def peak_host_memory(devices: str) -> tuple[float, float]:
    """(peak resident set in MB of `probe --device DEVICES --quick`, its wall seconds), under
    peak_memory's launcher: this process's own memory is not counted as the probe's."""
    wall, peak, code = measured([*TUNEADVISE, "probe", "--device", devices, "--quick", "--format", "json"])
    if code not in (0, 1):
        raise SystemExit(f"probe --device {devices} failed ({code})")
    return peak, wall


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


def device_count() -> int:
    from tuneadvise.probes.gpu import load_cupy

    return load_cupy("benchmark").cuda.runtime.getDeviceCount()


def ours_at(elements: int) -> dict:
    """Copy and triad measured in this process at `elements` doubles per array."""
    from tuneadvise.probes.gpu import device_info, load_cupy
    from tuneadvise.probes.suite import ProbeContext, dram_bandwidth

    cupy = load_cupy("benchmark")
    ctx = ProbeContext(cupy, device_info(cupy, 0))
    found = {m.name: m for m in dram_bandwidth(ctx, elements)}
    cupy.get_default_memory_pool().free_all_blocks()
    return {name: {"best": m.best, "median": m.value, "shape": m.details["shape"], "block": m.details["block"],
                   "grid": m.details["grid"], "spread": m.spread, "shapes_tried": m.details["shapes_tried"]}
            for name, m in found.items() if name in ("dram_copy", "dram_triad")}


def gpu_stream(binary: str) -> list[dict]:
    """gpu-stream's rows: occupancy % -> GB/s per kernel (init read scale triad 3pt 5pt)."""
    proc = subprocess.run([binary], capture_output=True, text=True, check=True, timeout=300)
    rows = []
    for line in proc.stdout.splitlines():
        if "|" not in line or "GB/s" not in line:
            continue
        left, right = line.split("|", 1)
        head = left.replace("%", " ").split()
        values = right.replace("GB/s:", " ").split()
        if len(head) >= 4 and len(values) >= 4:
            rows.append({"block": int(head[0]), "threads": int(head[1]), "blocks_per_sm": int(head[2]),
                         "occupancy": float(head[3]) / 100,
                         **dict(zip(("init", "read", "scale", "triad", "3pt", "5pt"), map(float, values)))})
    return rows


def gpu_l2_cache(binary: str, l2_bytes: int) -> tuple[float, list[dict]]:
    """gpu-l2-cache's best effective bandwidth over data sets well inside L2 (at most half
    of it), and all its rows (the caller also compares at the probe's own working set)."""
    proc = subprocess.run(["timeout", "120", binary], capture_output=True, text=True)
    rows = []
    for line in proc.stdout.splitlines():
        parts = line.replace("kB", " ").replace("ms", " ").replace("%", " ").replace("GB/s", " ").split()
        try:
            rows.append({"block_kb": float(parts[0]), "data_kb": float(parts[1]), "gbs": float(parts[4])})
        except (IndexError, ValueError):
            continue
    inside = [r["gbs"] for r in rows if r["data_kb"] * 1024 <= l2_bytes / 2]
    return (max(inside) if inside else float("nan")), rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--babelstream", help="path of a BabelStream CUDA binary")
    parser.add_argument("--gpu-stream", help="path of gpu-benches' cuda-stream binary")
    parser.add_argument("--gpu-l2-cache", help="path of gpu-benches' cuda-l2-cache binary")
    parser.add_argument("--json", help="also write every figure to this file")
    parser.add_argument("--cold", action="store_true", help="clear CuPy's kernel cache before the first run")
    parser.add_argument("--no-suite", action="store_true", help="skip the default and --quick suite runs")
    parser.add_argument("--rss-devices", help="measure probe --device THIS --quick's peak host memory (e.g. 0,0)")
    args = parser.parse_args()
    if args.cold:
        shutil.rmtree(os.path.expanduser("~/.cupy/kernel_cache"), ignore_errors=True)
    report: dict = {}
    try:
        measure(args, report)
    finally:
        if args.json:
            with open(args.json, "w") as handle:
                json.dump(report, handle, indent=1, default=str)


def measure(args, report: dict) -> None:
    if args.rss_devices:
        peak, wall = peak_host_memory(args.rss_devices)
        from tuneadvise.advisor.queries.probe import device_indices

        count = len(device_indices(args.rss_devices, device_count()))  # what `probe --device` runs on
        report["host_memory"] = {"devices": args.rss_devices, "peak_mb": peak, "wall_s": wall}
        print(f"probe --device {args.rss_devices} --quick: peak host memory {peak:,.0f} MB for {count} device runs "
              f"({peak / count:,.0f} MB per device; target <= 1,024), {wall:.1f} s")
    if args.no_suite:
        compare_babelstream(args, report)
        return
    quick_doc, quick_wall = run_suite(["--quick"])
    doc, wall = run_suite([])
    report.update(quick=quick_doc, full=doc, wall_s={"full": wall, "quick": quick_wall})
    results = {r["name"]: r for r in doc["results"]}
    print(f"device: {doc['device']['name']}, SM clock during the run {doc['sm_clock_mhz']:.0f} MHz")
    print(f"suite wall time: default {wall:.1f} s, --quick {quick_wall:.1f} s"
          + (" [cold cache for the --quick run]" if args.cold else ""))
    for name in ("fp32_fma", "fp64_fma", "fp16x2_fma", "shared_read", "dram_copy", "dram_triad"):
        r = results.get(name)
        if r and r["efficiency"] is not None:
            print(f"{name:12s} {r['value']:10.1f} {r['unit']:8s} = {r['efficiency']:.1%} of {r['peak']:.1f} "
                  f"({r['peak_basis']})")
    for name in ("occupancy_empirical", "cluster_occupancy"):
        occ = results.get(name)
        if occ and not occ["error"]:
            print(f"{name}: {occ['samples'][0]}/{occ['details']['total']} equal "
                  f"({'engine vs measured residency' if name == 'occupancy_empirical' else 'model vs driver'})")
    for name in ("launch_graph", "launch_async", "launch_sync"):
        r = results.get(name)
        if r and not r["error"]:
            print(f"{name:12s} median {statistics.median(r['samples']):.2f} us ({r['method']})")

    print("--quick against the full run (quick / full median):")
    quick = {r["name"]: r for r in quick_doc["results"]}
    for name, r in results.items():
        q = quick.get(name)
        if not q or r["error"] or q["error"] or not r["samples"] or not q["samples"] or r["group"] == "occupancy":
            continue
        full_median, quick_median = statistics.median(r["samples"]), statistics.median(q["samples"])
        flag = " [quick: unstable, not reported]" if q.get("unstable") else ""
        flag += " [full: unstable]" if r.get("unstable") else ""
        print(f"  {name:22s} {quick_median:10.4g} / {full_median:10.4g} = {quick_median / full_median:.3f}{flag}")

    compare_babelstream(args, report)
    compare_gpu_benches(args, report, results, doc)


def compare_babelstream(args, report: dict) -> None:
    if args.babelstream:
        report["babelstream"] = {}
        for label, elements in (("2^25 (BabelStream default)", 1 << 25), ("2^28", 1 << 28)):
            peer = babelstream(args.babelstream, elements)
            ours = ours_at(elements)
            report["babelstream"][str(elements)] = {"peer": peer, "ours": ours}
            for mine, theirs in (("dram_copy", "Copy"), ("dram_triad", "Triad")):
                r = ours[mine]
                best, from_avg = peer[theirs]
                print(f"{mine} vs BabelStream {theirs} at {label}: best {r['best']:.0f} / {best:.0f} GB/s = "
                      f"{r['best'] / best:.3f}x; median {r['median']:.0f} / average {from_avg:.0f} GB/s = "
                      f"{r['median'] / from_avg:.3f}x; shape {r['shape']} block {r['block']} grid {r['grid']}")


def compare_gpu_benches(args, report: dict, results: dict, doc: dict) -> None:
    curve = results.get("dram_read_vs_occupancy")
    if args.gpu_stream and curve and not curve["error"]:
        rows = gpu_stream(args.gpu_stream)
        report["gpu_stream"] = rows
        for target in (0.25, 0.5, 1.0):
            theirs = max((r for r in rows if abs(r["occupancy"] - target) < 1e-6), key=lambda r: r["read"], default=None)
            mine = [p for p in curve["details"]["curve"] if abs(p["occupancy"] - target) < 1e-6]
            if theirs is None or not mine:
                continue
            for point in sorted(mine, key=lambda p: str(p["ilp"])):
                print(f"read at {target:.0%} occupancy, ILP {point['ilp']}: {point['gbs']:.0f} / gpu-stream read "
                      f"{theirs['read']:.0f} GB/s = {point['gbs'] / theirs['read']:.3f}x")
    l2 = results.get("l2_read")
    if args.gpu_l2_cache and l2 and not l2["error"]:
        best, rows = gpu_l2_cache(args.gpu_l2_cache, doc["device"]["attributes"]["l2_bytes"])
        report["gpu_l2_cache"] = rows
        ours = statistics.median(l2["samples"])
        working_set = l2["details"]["working_set_bytes"]
        same = min(rows, key=lambda r: abs(r["data_kb"] * 1024 - working_set))
        print(f"l2_read median {ours:.0f} GB/s ({working_set / 2**20:.1f} MiB, {l2['details']['shape']}) / gpu-l2-cache "
              f"at {same['data_kb'] / 1024:.1f} MiB {same['gbs']:.0f} GB/s = {ours / same['gbs']:.3f}x; / its best "
              f"inside L2 {best:.0f} GB/s = {ours / best:.3f}x (smaller data sets)")


if __name__ == "__main__":
    main()
