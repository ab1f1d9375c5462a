"""Fetch NVIDIA's cuda_occupancy.h of each release at test time and drive it through harness.cpp.

The releases, their wheels and the header's path inside each come from
specs/data/releases.toml (the data `--cuda` reads too). A wheel is downloaded
into a cache directory (never into the repository) and the harness is compiled
once per header. Anything missing raises Unavailable, which the tests turn into
a skip with the reason, or into a failure where TUNEADVISE_REQUIRE_REFERENCE=1
(as in CI).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tuneadvise.specs.releases import release

HARNESS = Path(__file__).with_name("harness.cpp")


class Unavailable(RuntimeError):
    pass


def required(get, what: str):
    """get()'s answer; where NVIDIA's tool or header cannot be had (Unavailable), a skip naming
    `what`, or a failure where TUNEADVISE_REQUIRE_REFERENCE=1 (as in CI: never a silent skip)."""
    import pytest

    try:
        return get()
    except Unavailable as exc:
        if os.environ.get("TUNEADVISE_REQUIRE_REFERENCE") == "1":
            pytest.fail(f"{what} required but unavailable: {exc}")
        pytest.skip(f"{what} unavailable: {exc}")


def cache_dir() -> Path:
    root = os.environ.get("TUNEADVISE_TEST_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "tuneadvise-tests")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def header_path(cuda: str) -> Path:
    """The release's cuda_occupancy.h, downloaded once into the cache."""
    chosen = release(cuda)
    folder = cache_dir() / f"cuda-{chosen.cuda}"
    target = folder / "cuda_occupancy.h"
    if target.exists():
        return target
    folder.mkdir(exist_ok=True)
    wheels = folder / "wheels"
    wheels.mkdir(exist_ok=True)
    if not list(wheels.glob("*.whl")):
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
             "-d", str(wheels), chosen.wheel],
            capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise Unavailable(f"could not download {chosen.wheel}: {proc.stderr.strip().splitlines()[-1:]}")
    wheel = next(wheels.glob("*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        try:
            text = archive.read(chosen.member)
        except KeyError:
            raise Unavailable(f"{wheel.name} has no {chosen.member}") from None
    target.write_bytes(text)
    return target


def has_virtual_resources(cuda: str) -> bool:
    """Whether the header has CUDA 13's virtual-resource limiter (cudaOccFuncAttributes.virtualResourceCount)."""
    return b"virtualResourceCount" in header_path(cuda).read_bytes()


def harness_binary(cuda: str) -> Path:
    compiler = os.environ.get("CXX") or shutil.which("g++") or shutil.which("clang++") or shutil.which("c++")
    if not compiler:
        raise Unavailable("no C++ compiler (g++, clang++ or c++) on PATH")
    header = header_path(cuda)
    digest = hashlib.sha256(header.read_bytes() + HARNESS.read_bytes()).hexdigest()[:16]
    binary = cache_dir() / f"occ-harness-{digest}"
    if not binary.exists():
        flags = ["-DTA_VIRTUAL_RESOURCES"] if has_virtual_resources(cuda) else []
        proc = subprocess.run(
            [compiler, "-O2", "-std=c++11", "-w", *flags, f"-I{header.parent}", str(HARNESS), "-o", str(binary)],
            capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise Unavailable(f"compiling the harness failed: {proc.stderr.strip()[:500]}")
    return binary


def run(cuda: str, lines: list[str]) -> list[list[int]]:
    proc = subprocess.run([str(harness_binary(cuda))], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=600, check=True)
    rows = [list(map(int, line.split())) for line in proc.stdout.splitlines()]
    if len(rows) != len(lines):
        raise RuntimeError(f"harness answered {len(rows)} of {len(lines)} cases")
    return rows
