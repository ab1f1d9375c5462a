"""Batch throughput with findings, through the command line as users run it:
`tuneadvise occupancy --batch - --format jsonl`, seeded lines on stdin, one
result line out per input line with every rule's findings.

    python benchmarks/batch.py [--lines 200000] [--repeats 3] [--profile 20000] [--save FILE]
                               [--seed 7] [--instructions 1000] [--ignore CODES]

Each repeat is a fresh process (no cache starts warm) on its own seeded lines,
timed from start to exit, start-up included. Beside it, the floor of the stack
measured in this process on the same lines in the same run: json.loads of each
input line plus json.dumps of the very document printed for it, nothing else
(no tool can print that document for less). It prints lines/s, the floor and
the ratio (target: at most 3x), in wall time and in CPU time (the tool's process
against the floor's loop: on a loaded machine the wall clock also counts waiting
for a core), then the profile (cProfile, most costly
functions by their own time) of the library path on --profile lines.
`--save FILE` writes every output line of the first repeat, so that two
versions can be compared byte for byte on the same seeded lines; `--seed N`
seeds the first repeat's lines (the next repeats N+1, N+2...), for a second
comparison on other lines. `--ignore CODES` passes --ignore to the command (`--ignore TA`: no
findings at all, against the floor of the smaller document it then prints): what the rules cost.
`--instructions N` (where valgrind is installed) also counts the instructions
per line of the library path (run_batch) and of the floor on N of those lines,
with callgrind: the ratio a loaded machine's wall time cannot blur. Each count
is a run over the N lines less the same run without them (or without the
floor's loop), after the same warm-up, so start-up is not counted.

The lines vary as users' sweeps do, so most are distinct configurations: every
architecture of every family (each compute capability, and family and product
names), registers 16-255, one block size in six random (1-1024, the others
64-1024 in powers of two), static shared memory, dynamic shared memory up to the
architecture's opt-in limit with opt-in set on half the lines, and every
carveout form (default, max-shared, max-l1, percentages).
"""

import argparse
import io
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def architectures() -> list[tuple[str, int]]:
    """(name as a line gives it, its opt-in shared memory per block) for every shipped compute
    capability, plus each family's and each product's name."""
    from tuneadvise.specs.catalog import shipped_catalog

    catalog = shipped_catalog()
    names = [(arch.sm, arch.shared_mem_per_block_optin) for arch in catalog.sorted_archs()]
    names += [(family, catalog.archs[cc].shared_mem_per_block_optin) for family, (cc, _) in catalog.family_default.items()]
    names += [(p.name, catalog.archs[p.cc].shared_mem_per_block_optin) for p in catalog.products.values()]
    return names


def make_lines(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    archs = architectures()
    carveouts = ["default", "max-shared", "max-l1", 0, 25, 50, 100, "50%"]
    lines = []
    for _ in range(count):
        name, optin_limit = rng.choice(archs)
        line = {"arch": name, "registers": rng.randint(16, 255),
                "block_size": rng.choice([64, 128, 256, 512, 1024, rng.randint(1, 1024)]),
                "shared_mem": rng.choice([0, 0, 4096, 12288, 40000])}
        if rng.random() < 0.5:
            line["opt_in"] = True
            line["dynamic_shared_mem"] = rng.randint(0, optin_limit)
        else:
            line["dynamic_shared_mem"] = rng.choice([0, 1024, 16384, rng.randint(0, 48 << 10)])
        line["carveout"] = rng.choice(carveouts)
        lines.append(json.dumps(line) + "\n")
    return lines


def tuneadvise_command(ignore: str | None = None) -> list[str]:
    script = shutil.which("tuneadvise") or str(Path(sys.executable).with_name("tuneadvise"))
    return [script, "occupancy", "--batch", "-", "--format", "jsonl", *(["--ignore", ignore] if ignore else [])]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cli_run(lines: list[str], ignore: str | None = None) -> tuple[float, float, list[str]]:
    """(seconds from start to exit, CPU seconds, the lines printed) of the command line on these
    lines. CPU time as well as wall time: on a loaded machine the wall clock counts the time the
    process waited for a core."""
    data = "".join(lines).encode()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cpu, start = _children_cpu(), time.perf_counter()
    proc = subprocess.run(tuneadvise_command(ignore), input=data, capture_output=True, env=env)
    seconds, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if proc.returncode not in (0, 1):
        raise SystemExit(f"batch failed ({proc.returncode}): {proc.stderr.decode()[:500]}")
    return seconds, cpu, proc.stdout.decode().splitlines()


def floor_seconds(lines: list[str], printed: list[str]) -> tuple[float, float]:
    """(seconds, CPU seconds) of json.loads of each input line + json.dumps of the document printed for it,
    encoded as the command encodes it (compact, and without the circular-reference check a tree needs not)."""
    documents = [json.loads(line) for line in printed]  # what was printed, untimed
    assert len(documents) == len(lines)
    out = io.StringIO()
    cpu, start = time.process_time(), time.perf_counter()
    for line, document in zip(lines, documents):
        json.loads(line)
        out.write(json.dumps(document, separators=(",", ":"), check_circular=False) + "\n")
    return time.perf_counter() - start, time.process_time() - cpu


def profile(lines: list[str], top: int = 25) -> str:
    """cProfile of the library path the command takes (run_batch), cold, most costly own time first."""
    code = ("import io, sys, cProfile, pstats\n"
            "from tuneadvise.advisor.batch import run_batch\n"
            "lines = sys.stdin.read().splitlines(True)\n"
            "profiler = cProfile.Profile(); profiler.enable(); run_batch(lines, io.StringIO()); profiler.disable()\n"
            f"text = io.StringIO(); pstats.Stats(profiler, stream=text).sort_stats('tottime').print_stats({top})\n"
            "print(text.getvalue())\n")
    proc = subprocess.run([sys.executable, "-c", code], input="".join(lines), capture_output=True, text=True, check=True)
    body = proc.stdout
    body = body[body.find("   ncalls"):].rstrip() if "   ncalls" in body else body
    return _without_machine_paths(body)


def _without_machine_paths(text: str) -> str:
    """The profile's file names as the package and the standard library name them
    (tuneadvise/advisor/batch.py, json/encoder.py), not where this machine keeps them: the
    output is recorded in benchmarks/recorded/."""
    import sysconfig

    import tuneadvise.advisor

    # The folder that holds advisor/, cli/, specs/...: site-packages/tuneadvise in a regular install,
    # the checkout in an editable one.
    package = os.path.dirname(os.path.dirname(os.path.abspath(tuneadvise.advisor.__file__))) + os.sep
    stdlib = sysconfig.get_paths()["stdlib"] + os.sep
    return text.replace(package, "tuneadvise/").replace(stdlib, "")


_COUNTED = """import io, json, sys
sys.path.insert(0, {here!r})
from batch import make_lines
from tuneadvise.advisor.batch import run_batch
part, count = sys.argv[1], int(sys.argv[2])
run_batch(make_lines(50, 99), io.StringIO())  # imports and first uses, in every run alike
lines = make_lines(count, 7)
out = io.StringIO()
run_batch(lines if part != "none" else [], out)
if part == "floor":
    documents = [json.loads(line) for line in out.getvalue().splitlines()]
    floor = io.StringIO()
    for line, document in zip(lines, documents):
        json.loads(line)
        floor.write(json.dumps(document, separators=(",", ":"), check_circular=False) + "\\n")
elif part == "printed":  # the floor's run without its loop
    documents = [json.loads(line) for line in out.getvalue().splitlines()]
"""


def callgrind_instructions(part: str, count: int) -> int:
    """Instructions callgrind counts for one run of _COUNTED."""
    code = _COUNTED.format(here=str(Path(__file__).parent))
    # One hash seed for every run: set and dict orders, and so the instructions, vary with it.
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", code,
                           part, str(count)], capture_output=True, text=True, check=True, env=env)
    return int(proc.stderr.rsplit("Collected : ", 1)[1].split()[0])


def instructions(count: int) -> tuple[float, float]:
    """(library path, floor) instructions per line on `count` lines."""
    library = callgrind_instructions("library", count) - callgrind_instructions("none", count)
    floor = callgrind_instructions("floor", count) - callgrind_instructions("printed", count)
    return library / count, floor / count


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", type=int, default=20_000, help="lines profiled (0: no profile)")
    parser.add_argument("--save", help="write the first repeat's output lines here")
    parser.add_argument("--seed", type=int, default=7, help="the first repeat's seed (the next: seed + 1, ...)")
    parser.add_argument("--instructions", type=int, default=0, help="lines counted with callgrind (0: none)")
    parser.add_argument("--ignore", help="rule codes the command ignores (--ignore TA: no findings)")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    runs, cpu_ratios = [], []
    for repeat in range(args.repeats):
        lines = make_lines(args.lines, args.seed + repeat)
        ours, ours_cpu, printed = cli_run(lines, args.ignore)
        if repeat == 0 and args.save:
            Path(args.save).write_text("\n".join(printed) + "\n")
        floor, floor_cpu = floor_seconds(lines, printed)
        runs.append((ours, floor))
        cpu_ratios.append(ours_cpu / floor_cpu)
        print(f"  repeat {repeat + 1}: {args.lines / ours:,.0f} lines/s, floor {args.lines / floor:,.0f} lines/s, "
              f"{ours / floor:.2f}x; CPU time {ours_cpu:.2f} s vs {floor_cpu:.2f} s, {cpu_ratios[-1]:.2f}x")
    ours = sorted(r[0] for r in runs)
    floors = sorted(r[1] for r in runs)
    ratios = sorted(r[0] / r[1] for r in runs)
    findings = f"without {args.ignore}* findings" if args.ignore else "with findings"
    print(f"{args.lines:,} varied lines {findings} through `{' '.join(['tuneadvise', *tuneadvise_command(args.ignore)[1:]])}`, "
          f"{args.repeats} cold runs: median {args.lines / statistics.median(ours):,.0f} lines/s, "
          f"best {args.lines / ours[0]:,.0f}, worst {args.lines / ours[-1]:,.0f}")
    print(f"floor, json.loads of each line + json.dumps of the document printed for it: "
          f"{args.lines / statistics.median(floors):,.0f} lines/s ({statistics.median(floors) / args.lines * 1e6:.2f} us/line)")
    print(f"ratio: tuneadvise takes {statistics.median(ratios):.2f}x the floor (median of the runs; target <= 3x); "
          f"in CPU time {statistics.median(cpu_ratios):.2f}x")
    if args.instructions and shutil.which("valgrind"):
        library, floor = instructions(args.instructions)
        print(f"instructions (callgrind) per line on {args.instructions:,} of those lines: library path {library / 1e3:,.0f} k, "
              f"floor {floor / 1e3:,.0f} k: {library / floor:.2f}x")
    if args.profile:
        print(f"profile of the library path (run_batch) on {args.profile:,} of those lines, cold, by own time:")
        print(profile(make_lines(args.profile, args.seed)))


if __name__ == "__main__":
    main()
