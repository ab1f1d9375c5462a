"""Machine code against the compiler: the suite's own CUDA sources compiled with -lineinfo
at several register caps (and sources whose slow-path subroutines spill,
at theirs) for sm_80, sm_90 and sm_120 by NVIDIA's compiler run directly
(tests/reference/nvcc.py), then disassembled by tuneadvise. For every kernel the spill
stores and loads summed from the spill-annotated instructions equal ptxas's own report,
and every spill site's source line is the one in nvdisasm's JSON line table (read by
the reference, not by tuneadvise). Needs the `[nvcc]` extra, which brings nvdisasm; in CI
(TUNEADVISE_REQUIRE_REFERENCE=1) a missing toolchain fails the run."""

from __future__ import annotations

import bisect
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tuneadvise.advisor.toolchain.disassembler import Disassembler

from ..helpers import ROOT
from ..reference import nvcc
from ..reference.header import required

pytestmark = pytest.mark.reference

SOURCES = (ROOT / "tests" / "gpu" / "lint_kernels.cu", ROOT / "tests" / "gpu" / "occupancy_kernels.cu",
           ROOT / "tests" / "fixtures" / "sources" / "tiled_kernels.cu",
           ROOT / "tests" / "fixtures" / "sources" / "library_kernels.cu")
ARCHS = ("sm_80", "sm_90", "sm_120")
CAPS = (32, 64)  # 32 spills most of the register-tiled kernels; 64 a few
# Divisions and square roots whose internal slow-path subroutines spill too at
# these caps: ptxas counts a subroutine's spills apart from the kernel's.
SUBROUTINES = ROOT / "tests" / "fixtures" / "sources" / "subroutine_spills.cu"
SUBROUTINE_CAPS = (32, 40)


@pytest.fixture(scope="module")
def builds():
    """(source, arch, cap) -> (ptxas's report, nvdisasm's line table, tuneadvise's reading), built once."""
    chain = required(nvcc.toolchain, "NVIDIA's compiler (the [nvcc] extra)")
    disassembler = required(lambda: nvcc.nvdisasm(chain), "NVIDIA's disassembler (the [nvcc] extra)")
    requests = [(source, arch, cap) for source in SOURCES for arch in ARCHS for cap in CAPS]
    requests += [(SUBROUTINES, arch, cap) for arch in ARCHS for cap in SUBROUTINE_CAPS]

    def build(request):
        source, arch, cap = request
        report, cubin = nvcc.compile_cubin(chain, source, arch, "-lineinfo", f"-maxrregcount={cap}")
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "k.cubin"
            path.write_bytes(cubin)
            table = nvcc.nvdisasm_line_table(disassembler, path)
        return report, cubin, table

    with ThreadPoolExecutor(2) as pool:
        built = dict(zip(requests, pool.map(build, requests)))
    chosen = Disassembler(disassembler, "test")
    return {request: (report, table, chosen.kernels(cubin)) for request, (report, cubin, table) in built.items()}


def test_spill_bytes_equal_ptxas_for_every_kernel(builds):
    spilling = 0
    for (source, arch, cap), (report, _, found) in builds.items():
        assert set(found) == set(report), (source.name, arch, cap)
        for name, figures in report.items():
            sass = found[name]
            where = (source.name, arch, cap, name)
            assert (sass.spill_stores, sass.spill_loads) == (figures["spill_stores"], figures["spill_loads"]), where
            spilling += figures["spill_stores"] > 0
    assert spilling >= 10  # the caps make the comparison mean something: many kernels spill


def test_a_subroutines_spills_are_not_the_kernels(builds):
    # Each of these kernels spills at 32 registers, and so does the slow path it calls.
    for arch in ARCHS:
        report = builds[SUBROUTINES, arch, 32][0]
        assert len(report) == 4 and sum(figures["spill_stores"] > 0 for figures in report.values()) >= 3, arch


def _line_at(rows, offset):
    index = bisect.bisect_right([row[0] for row in rows], offset) - 1
    return rows[index][1:] if index >= 0 else None


def test_spill_sites_and_peaks_on_nvdisasm_line_table(builds):
    checked = 0
    for (source, arch, cap), (_, table, found) in builds.items():
        for name, sass in found.items():
            rows = table[name]
            for site in sass.spill_sites + sass.local_accesses:
                expected = _line_at(rows, site.offset)
                assert expected is not None and site.file is not None, (source.name, arch, cap, name, site)
                assert (Path(site.file).name, site.line) == expected, (source.name, arch, cap, name, site)
                checked += 1
            assert bool(sass.peak_lines) == bool(rows), (source.name, arch, cap, name)
            lines = {(file, line) for _, file, line in rows}
            assert {(Path(file).name, line) for file, line in sass.peak_lines} <= lines
    assert checked > 100
