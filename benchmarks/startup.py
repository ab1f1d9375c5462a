"""CLI start-up, measured side by side in one run: tuneadvise against the
nearest peer (cuxray, if installed) and against the floor of the stack (a bare
interpreter, and a minimal click command that parses the same options).

    python benchmarks/startup.py [--runs 30] [--cuxray PATH_TO_CUXRAY]

Prints the median wall time of each and the ratios the project is held to:
tuneadvise/cuxray <= 0.6 and tuneadvise/minimal-click <= 1.3.
"""

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def median_ms(commands: dict, runs: int) -> dict:
    """{name: (median ms, min ms)}, the commands run round-robin so that a burst
    of load on the machine hits all of them alike."""
    samples = {name: [] for name in commands}
    for command in commands.values():
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # warm the page cache
    for _ in range(runs):
        for name, command in commands.items():
            start = time.perf_counter()
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            samples[name].append((time.perf_counter() - start) * 1000)
    return {name: (statistics.median(times), min(times)) for name, times in samples.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--cuxray", default=shutil.which("cuxray"))
    args = parser.parse_args()
    tuneadvise = shutil.which("tuneadvise") or str(Path(sys.executable).with_name("tuneadvise"))
    commands = {
        "bare python": [sys.executable, "-c", "pass"],
        "minimal click": [sys.executable, str(HERE / "minimal_click.py"), "--arch", "sm_90", "--registers", "32",
                          "--block-size", "256", "--format", "json"],
        "tuneadvise": [tuneadvise, "occupancy", "--arch", "sm_90", "--registers", "32", "--block-size", "256",
                       "--format", "json"],
    }
    if args.cuxray:
        commands["cuxray 0.6"] = [args.cuxray, "occupancy", "--arch", "sm_90", "--regs", "32", "--threads", "256", "--json"]
    results = median_ms(commands, args.runs)
    for name, (median, fastest) in results.items():
        print(f"{name:14s} median {median:7.1f} ms   min {fastest:7.1f} ms")
    ours = results["tuneadvise"][0]
    print(f"tuneadvise / bare python   = {ours / results['bare python'][0]:.2f}x")
    print(f"tuneadvise / minimal click = {ours / results['minimal click'][0]:.2f}x  (target <= 1.3x)")
    if "cuxray 0.6" in results:
        print(f"tuneadvise / cuxray        = {ours / results['cuxray 0.6'][0]:.2f}x  (target <= 0.6x)")
    else:
        print("cuxray not found: pip install cuxray==0.6.* or pass --cuxray")


if __name__ == "__main__":
    main()
