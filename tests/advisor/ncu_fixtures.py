"""The recorded Nsight Compute exports (tests/fixtures/ncu, outside truth from an H200), read
once per test session, and each launch's carveout preference from the program's launch log."""

import gzip
import io
from functools import cache

from tuneadvise.advisor.readers.ncu import read_lines

from ..helpers import TESTS

FIXTURES = TESTS / "fixtures" / "ncu"
# One file per program (ncu --csv), and the two-process export: the launches the analysis is held to.
PROGRAMS = ("ncu_tails", "ncu_smem", "ncu_imbalance", "ncu_templates", "ncu_cupy", "ncu_torch", "ncu_torch_nn",
            "ncu_triton", "ncu_sweep")
EXPORTS = PROGRAMS + ("processes", "smem_import", "smem_import_base")


# The six-section re-recordings (sections/: SpeedOfLight, WarpStateStats, SchedulerStats,
# MemoryWorkloadAnalysis, Occupancy, LaunchStats; ncu_smem_config the last two only), named "sections/<program>".
SECTION_PROGRAMS = ("ncu_tails", "ncu_smem", "ncu_imbalance", "ncu_templates", "ncu_cupy", "ncu_torch", "ncu_torch_nn",
                    "ncu_triton", "ncu_sweep", "ncu_clusters", "ncu_smem_config", "ncu_torch_model")
SECTION_EXPORTS = tuple(f"sections/{name}" for name in SECTION_PROGRAMS)


def text(name: str) -> str:
    with gzip.open(FIXTURES / f"{name}.csv.gz", "rt", encoding="utf-8", newline="") as handle:
        return handle.read()


@cache
def launches(name: str) -> tuple:
    result = read_lines(io.StringIO(text(name)), f"{name}.csv")
    assert not result.problems, result.problems
    return tuple(result.launches)


def launch_log(name: str) -> list[dict]:
    """The program's own log: one dict per launch (kernel, grid, block, dynamic, carveout, cluster)."""
    rows = []
    for line in (FIXTURES / f"{name}.log").read_text().splitlines():
        program, kernel, *fields = line.split()
        rows.append({"program": program, "kernel": kernel, **{k: int(v) for k, v in (f.split("=") for f in fields)}})
    return rows
