"""Launches read from host code over NVIDIA's public CUDA samples: what lint finds, and what
reading them costs.

    python benchmarks/host_launches.py SAMPLES_CHECKOUT [--under Samples/0_Introduction] [--arch sm_90]
        [--time N]

SAMPLES_CHECKOUT is a checkout of NVIDIA's cuda-samples (its Samples/ and Common/ folders). Every
`.cu` under Samples/ is linted (`lint FILE.cu --arch sm_90 -I Common -I the file's folder`, no
report cache) through the library, and each kernel's checked launch is listed: where its block
comes from (`host code` with the site, or the fallback), the block, and the sources the
compiler rejected (missing library headers, OpenGL...).

The listing is then held to what the sources' own text says, found without tuneadvise: every
`kernel<<<grid, N...>>>` whose block is an integer literal (a pattern over the text, outside
comments) must be listed from host code, at that line and column, with block N; every such
site missed or read otherwise is printed (exit 1 where any), except one on a line NVIDIA's
preprocessor drops (`nvcc -E`: an `#if` branch the build does not take). The figures are printed as JSON.

--time N: instead of the survey, for the first N sources of the folder, the wall time of `tuneadvise lint FILE.cu` (a fresh
process, no cache) with host code read and without it (TUNEADVISE_HOST_LAUNCHES=off), each the
median of three runs, and the ratio; the target is at most 1.5. The load average is printed
before and after: the figures are only as quiet as the machine was.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

# `name<<<grid, 256` or `name<T><<<grid, 256>>>`: a launch whose block is a literal number.
LITERAL_LAUNCH = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^<>;]*>)?\s*<<<\s*[^,;<>]+,\s*(\d+)\s*(?:,|>>>)")
KERNEL_DEFINITION = re.compile(r"__global__[^;{}()]*?\b([A-Za-z_]\w*)\s*\(")


def include_flags(checkout: Path, path: Path) -> tuple[str, ...]:
    """The samples' own include folders: their Common/ and the sample's folder."""
    return ("-I", str(checkout / "Common"), "-I", str(path.parent))


def lint_sample(path: Path, checkout: Path, arch: str) -> dict:
    """{kernels: [[name, from, site, block]], run_time: [...], problems: [...]} of one sample."""
    from tuneadvise.advisor.lint.run import LintOptions, lint_paths
    from tuneadvise.advisor.toolchain.settings import BuildSettings

    flags = include_flags(checkout, path)
    options = LintOptions(archs=(arch,), machine_code=False)
    cwd = os.getcwd()
    os.chdir(checkout)
    try:
        report = lint_paths([str(path.relative_to(checkout))], options, build=BuildSettings(flags=flags, cache=False))
    finally:
        os.chdir(cwd)
    kernels = sorted({(k.demangled, k.launch_from,
                       f"{k.launch_site.line}:{k.launch_site.column}" if k.launch_site is not None else None,
                       "x".join(map(str, k.launch.dims))) for k in report.kernels}, key=str)
    notes = [f.message for f in report.source_findings if f.code == "TA906"] + \
        [w for w in report.warnings if "set at run time" in w]
    # Messages name files relative to the checkout, wherever it is.
    return {"kernels": [list(k) for k in kernels], "run_time": [_relative(n, checkout) for n in notes],
            "problems": [_relative(p.message[:200], checkout) for p in report.problems]}


def _relative(text: str, checkout: Path) -> str:
    return text.replace(str(checkout) + os.sep, "")


def literal_launches(text: str) -> set[tuple[str, str, str]]:
    """(kernel, line:column, block) of each launch whose block is an integer literal, of a kernel
    the same file defines (a launch of another file's kernel is not joined to it: a known limit),
    read from the source text by patterns (whole-line comments skipped), independently of tuneadvise."""
    defined = set(KERNEL_DEFINITION.findall(text))
    found = set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.lstrip().startswith(("//", "*", "/*")):
            found.update((m[1], f"{number}:{m.start(1) + 1}", m[2]) for m in LITERAL_LAUNCH.finditer(line)
                         if m[1] in defined)
    return found


def unmatched(checkout: Path, results: dict, arch: str) -> list[str]:
    """The literal launches of the sources that compiled which lint did not list as the text says."""
    missed = []
    for key, result in results.items():
        if result["problems"]:
            continue
        listed = {(_own_name(name), site, block) for name, origin, site, block in result["kernels"]
                  if origin == "host code"}
        text = (checkout / key).read_text(encoding="utf-8", errors="replace")
        unlisted = literal_launches(text) - listed
        if unlisted:  # a launch the preprocessor drops (an #if branch the build does not take) is not one
            kept = lines_the_build_keeps(checkout, key, arch)
            unlisted = {(name, site, block) for name, site, block in unlisted if int(site.split(":")[0]) in kept}
        missed += [f"{key}:{site}: {name}<<<..., {block}>>> not listed so" for name, site, block in sorted(unlisted)]
    return missed


LINE_MARKER = re.compile(r'# (\d+) "([^"]*)"')


def lines_the_build_keeps(checkout: Path, key: str, arch: str) -> set[int]:
    """The lines of `key` that NVIDIA's preprocessor keeps (nvcc -E with the survey's flags), read
    from the line markers of its output: what the build compiles, found without tuneadvise."""
    from tuneadvise.advisor.toolchain.discovery import find_toolchain

    flags = include_flags(checkout, checkout / key)
    done = subprocess.run([find_toolchain().nvcc, "-E", f"-arch={arch}", *flags, key], cwd=checkout,
                          capture_output=True, text=True, errors="replace", check=False)
    kept, current, number = set(), None, 0
    for line in done.stdout.splitlines():
        marker = LINE_MARKER.match(line)
        if marker:
            current, number = marker[2], int(marker[1])
            continue
        if current == key and line.strip():
            kept.add(number)
        number += 1
    return kept


def _own_name(demangled: str) -> str:
    """`testKernel` of `void testKernel<LA32>(LA32*, int)`, `k` of `ns::k(float*)`."""
    head = demangled.split("(")[0].split("<")[0]
    return head.split()[-1].split("::")[-1] if head.split() else demangled


def survey(checkout: Path, arch: str, under: str) -> dict:
    results = {}
    for path in sorted((checkout / under).rglob("*.cu")):
        key = str(path.relative_to(checkout))
        results[key] = lint_sample(path, checkout, arch)
        print(f"{key}: {len(results[key]['kernels'])} kernel launches, {len(results[key]['problems'])} problems",
              file=sys.stderr)
    return results


def figures(results: dict) -> dict:
    kernels = [k for r in results.values() for k in r["kernels"]]
    compiled = [r for r in results.values() if not r["problems"]]
    return {"sources": len(results), "compiled": len(compiled),
            "kernel_entries": len(kernels),
            "from": {origin: sum(1 for k in kernels if k[1] == origin)
                     for origin in ("host code", "config", "launch bounds", "assumed")}}


def timed(command: list[str], cwd: Path, env: dict) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode not in (0, 1):  # lint's own outcomes; anything else is not a lint to time
            raise SystemExit(f"{' '.join(command)}: exit {done.returncode}: {done.stderr.decode()[-300:]}")
    return statistics.median(times)


def time_samples(checkout: Path, keys: list[str], arch: str) -> None:
    print(f"load average before: {os.getloadavg()}")
    ratios = []
    for key in keys:
        path = checkout / key
        command = [str(Path(sys.executable).parent / "tuneadvise"), "lint", key, "--arch", arch, "--no-cache",
                   "--no-sass", "-I", "Common", "-I", str(path.parent.relative_to(checkout))]
        env = dict(os.environ)
        with_host = timed(command, checkout, env)
        without = timed(command, checkout, {**env, "TUNEADVISE_HOST_LAUNCHES": "off"})
        ratios.append(with_host / without)
        print(f"{key:70} {without:6.2f} s  {with_host:6.2f} s  x{with_host / without:.2f}")
    print(f"ratio median {statistics.median(ratios):.2f}, max {max(ratios):.2f} over {len(ratios)} sources")
    print(f"load average after: {os.getloadavg()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--time", type=int, default=0)
    parser.add_argument("--under", default="Samples", help="the folder of the checkout surveyed (Samples/0_Introduction...)")
    args = parser.parse_args()
    checkout = args.checkout.resolve()
    if args.time:  # timing alone: the first N sources of the folder
        keys = [str(p.relative_to(checkout)) for p in sorted((checkout / args.under).rglob("*.cu"))][:args.time]
        time_samples(checkout, keys, args.arch)
        return 0
    results = survey(checkout, args.arch, args.under)
    missed = unmatched(checkout, results, args.arch)
    checked = sum(len(literal_launches((checkout / k).read_text(encoding="utf-8", errors="replace")))
                  for k, r in results.items() if not r["problems"])
    print(json.dumps({**figures(results), "literal_launches": checked, "missed": len(missed)}))
    print("\n".join(missed))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
