"""Fetch NVIDIA's cuda_occupancy.h at test time and drive it through harness.cpp.

The header ships in the nvidia-cuda-runtime-cu12 wheel; it is downloaded into
a cache directory (never into the repository) and the harness is compiled
once per header version. Anything missing raises Unavailable, which the tests
turn into a skip with the reason, or into a failure where TUNEADVISE_REQUIRE_REFERENCE=1
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

WHEEL_SPEC = "nvidia-cuda-runtime-cu12==12.9.79"
HEADER_IN_WHEEL = "nvidia/cuda_runtime/include/cuda_occupancy.h"
HARNESS = Path(__file__).with_name("harness.cpp")


class Unavailable(RuntimeError):
    pass


def cache_dir() -> Path:
    root = os.environ.get("TUNEADVISE_TEST_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "tuneadvise-tests")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def header_path() -> Path:
    target = cache_dir() / "cuda_occupancy.h"
    if target.exists():
        return target
    wheels = cache_dir() / "wheels"
    wheels.mkdir(exist_ok=True)
    if not list(wheels.glob("nvidia_cuda_runtime_cu12-*.whl")):
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
             "-d", str(wheels), WHEEL_SPEC],
            capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise Unavailable(f"could not download {WHEEL_SPEC}: {proc.stderr.strip().splitlines()[-1:]}")
    wheel = next(wheels.glob("nvidia_cuda_runtime_cu12-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        target.write_bytes(archive.read(HEADER_IN_WHEEL))
    return target


def harness_binary() -> Path:
    compiler = os.environ.get("CXX") or shutil.which("g++") or shutil.which("clang++") or shutil.which("c++")
    if not compiler:
        raise Unavailable("no C++ compiler (g++, clang++ or c++) on PATH")
    header = header_path()
    digest = hashlib.sha256(header.read_bytes() + HARNESS.read_bytes()).hexdigest()[:16]
    binary = cache_dir() / f"occ-harness-{digest}"
    if not binary.exists():
        proc = subprocess.run(
            [compiler, "-O2", "-std=c++11", "-w", f"-I{header.parent}", str(HARNESS), "-o", str(binary)],
            capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise Unavailable(f"compiling the harness failed: {proc.stderr.strip()[:500]}")
    return binary


def run(lines: list[str]) -> list[list[int]]:
    proc = subprocess.run([str(harness_binary())], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=600, check=True)
    rows = [list(map(int, line.split())) for line in proc.stdout.splitlines()]
    if len(rows) != len(lines):
        raise RuntimeError(f"harness answered {len(rows)} of {len(lines)} cases")
    return rows
