"""CLI start-up, measured side by side in one run: tuneadvise against the
nearest peer (cuxray, if installed) and against the floor of the stack (a bare
interpreter, and a minimal click command that parses the same options), on a
regular install (`pip install .`, made here in a scratch environment that reuses
this one's dependencies) and on this environment's own install (editable in a
checkout).

    python benchmarks/startup.py [--runs 30] [--cuxray PATH_TO_CUXRAY] [--no-regular]

Prints the median wall time of each (the commands run round-robin, so a burst
of load on the machine hits all of them alike), the ratios the project is held
to: tuneadvise/minimal-click <= 1.3 and tuneadvise/cuxray <= 0.6, and the
modules that cost tuneadvise's start-up most (-X importtime, the least of five
runs). The commands run without PYTHONDONTWRITEBYTECODE, as installed tools
do: an installation holds its compiled bytecode (pip writes it; an editable
install writes it on the first run).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ARGS = ["--arch", "sm_90", "--registers", "32", "--block-size", "256", "--format", "json"]
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def median_ms(commands: dict, runs: int) -> dict:
    """{name: (median ms, min ms)}, the commands run round-robin."""
    samples = {name: [] for name in commands}
    for command in commands.values():  # warm the page cache (and write an editable install's bytecode)
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    for _ in range(runs):
        for name, command in commands.items():
            start = time.perf_counter()
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=ENV)
            samples[name].append((time.perf_counter() - start) * 1000)
    return {name: (statistics.median(times), min(times)) for name, times in samples.items()}


def regular_install(scratch: Path) -> tuple[str, str]:
    """(python, script): a fresh environment with tuneadvise installed from this checkout as `pip install .`
    does (bytecode compiled), its dependencies those of this environment."""
    venv = scratch / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    target = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                            check=True, capture_output=True, text=True).stdout.strip()
    Path(target, "_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", target, str(ROOT)],
                   check=True, env=ENV)
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    return str(python), str(Path(target, "bin", "tuneadvise"))


def commands_for(python: str, script: list[str], cuxray: str | None) -> dict:
    commands = {
        "bare python": [python, "-c", "pass"],
        "minimal click": [python, str(HERE / "minimal_click.py"), *ARGS],
        "tuneadvise": [*script, "occupancy", *ARGS],
    }
    if cuxray:
        commands["cuxray 0.6"] = [cuxray, "occupancy", "--arch", "sm_90", "--regs", "32", "--threads", "256", "--json"]
    return commands


def report(title: str, results: dict) -> None:
    print(title)
    for name, (median, fastest) in results.items():
        print(f"  {name:14s} median {median:7.1f} ms   min {fastest:7.1f} ms")
    ours = results["tuneadvise"][0]
    print(f"  tuneadvise / bare python   = {ours / results['bare python'][0]:.2f}x")
    print(f"  tuneadvise / minimal click = {ours / results['minimal click'][0]:.2f}x  (target <= 1.3x)")
    if "cuxray 0.6" in results:
        print(f"  tuneadvise / cuxray        = {ours / results['cuxray 0.6'][0]:.2f}x  (target <= 0.6x)")


def import_times(command: list[str], top: int = 12, runs: int = 5) -> list[tuple[int, int, str]]:
    """(self us, cumulative us, module): the least of `runs` runs of -X importtime, most costly first."""
    best: dict[str, tuple[int, int]] = {}
    for _ in range(runs):
        err = subprocess.run([command[0], "-X", "importtime", *command[1:]], capture_output=True, text=True,
                             env=ENV).stderr
        for line in err.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            own, total, name = line[len("import time:"):].split("|")
            key = name.strip()
            value = (int(own), int(total))
            best[key] = min(best.get(key, value), value)
    return sorted(((own, total, name) for name, (own, total) in best.items()), reverse=True)[:top]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--cuxray", default=shutil.which("cuxray"))
    parser.add_argument("--no-regular", action="store_true", help="only this environment's install")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}; PYTHONDONTWRITEBYTECODE unset for the runs")
    script = shutil.which("tuneadvise") or str(Path(sys.executable).with_name("tuneadvise"))
    installs = [("this environment's install", sys.executable, [script])]
    with tempfile.TemporaryDirectory() as scratch:
        if not args.no_regular:
            python, regular_script = regular_install(Path(scratch))
            installs.insert(0, ("regular install (pip install .)", python, [python, regular_script]))
        for title, python, command in installs:
            report(title, median_ms(commands_for(python, command, args.cuxray), args.runs))
        if not args.cuxray:
            print("cuxray not found: pip install cuxray==0.6.* or pass --cuxray")
        title, python, command = installs[0]
        print(f"-X importtime of tuneadvise, {title} (self / cumulative us, least of 5 runs):")
        for own, total, name in import_times([python, *command[1:], "occupancy", *ARGS] if len(command) > 1
                                             else [python, command[0], "occupancy", *ARGS]):
            print(f"  {own:7d} {total:8d}  {name}")


if __name__ == "__main__":
    main()
