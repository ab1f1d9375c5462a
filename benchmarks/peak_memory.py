"""The wall time and peak resident memory of one command, its own and nothing else's.

A child's ru_maxrss (wait4, RUSAGE_CHILDREN) is not only the child's: Linux keeps the
high-water mark of the memory a process had before execve, and a child started by
fork or vfork had its parent's. A benchmark that built a 100 MB log in memory before
starting the command would charge that log to the command. So the command runs under
a small launcher process, which starts it and reports what wait4 says of it: the
command then inherits only the launcher's few megabytes, under any command's own floor.

    seconds, peak_mb, exit_code = measured([sys.executable, "-m", "tuneadvise.cli", ...])
"""

from __future__ import annotations

import json
import subprocess
import sys

_LAUNCHER = """\
import json, os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(json.dumps([time.perf_counter() - start, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)]))
"""


def measured(argv: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MB, exit code) of `argv`, its output discarded (Linux: ru_maxrss in KiB)."""
    report = subprocess.run([sys.executable, "-c", _LAUNCHER, *argv], capture_output=True, text=True, check=True)
    seconds, peak_mb, code = json.loads(report.stdout)
    return seconds, peak_mb, code
