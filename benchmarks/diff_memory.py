"""diff's peak memory against the size of the logs: a synthetic ptxas -v log (shaped as
benchmarks/lint.py makes them) of about 25, 50 and 100 MB, diffed against itself by the
CLI (`python -m tuneadvise.cli diff LOG LOG --format json`, its output discarded), each run in its
own process so that its peak resident memory is its own.

    python benchmarks/diff_memory.py [--sizes 25,50,100]

Printed per size: the log's megabytes and kernels, the wall time and the peak RSS, and the
growth of the peak from the smallest size to each. Targets: at most 300 MB for 100 MB logs,
and under 20% growth from 25 to 100 MB. Set PYTHONPATH to measure another checkout.
"""

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from lint import ARCHS, make_log  # noqa: E402 - the one synthetic log shape of the benchmarks
from peak_memory import measured  # noqa: E402

BYTES_PER_KERNEL = 287  # a kernel's five report lines on one architecture, as make_log writes them


def peak(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one diff, measured under peak_memory's launcher: the
    log this process built must not count as the diff's."""
    seconds, rss, code = measured(argv)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed with exit {code}")
    return seconds, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="25,50,100", help="log sizes in MB, comma-separated")
    sizes = [int(size) for size in parser.parse_args().sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for size in sizes:
            log = Path(scratch) / f"{size}.log"
            kernels = size * 1_000_000 // (BYTES_PER_KERNEL * len(ARCHS))
            make_log(log, kernels)
            seconds, rss = peak([sys.executable, "-m", "tuneadvise.cli", "diff", str(log), str(log),
                                 "--format", "json"])
            rows.append((log.stat().st_size / 1e6, kernels * len(ARCHS), seconds, rss))
            log.unlink()
    print(f"{'log MB':>8} {'kernels':>9} {'seconds':>8} {'peak MB':>8} {'growth':>7}")
    for megabytes, kernels, seconds, rss in rows:
        print(f"{megabytes:8.1f} {kernels:9,} {seconds:8.1f} {rss:8.0f} {rss / rows[0][3] - 1:7.0%}")


if __name__ == "__main__":
    main()
