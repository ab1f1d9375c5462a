"""Nsight Compute exports: the details page that `ncu --csv` prints (and
`ncu --import R.ncu-rep --csv` for a saved report), one row per metric of one
launch. Read as a stream, one launch held at a time: rows of a launch are
consecutive, keyed by (Process ID, ID). Exports appended to one file (a header
row again, each run's IDs from 0) are read one after the other, every launch
of each; a UTF-8 byte-order mark is ignored; a gzip-compressed export
(`.csv.gz`, by content) is read as it decompresses, at most
MAX_DECOMPRESSED bytes and MAX_RATIO times its own size. Only the figures the analysis reads are kept (Launch
Statistics, Occupancy, Speed Of Light, Warp State and Scheduler Statistics,
Memory Workload Analysis); values are converted from ncu's units (SI
prefixes, thousands separators) to bytes, nanoseconds, cycles, bytes per
second, percent or plain counts. Lines that are not rows of the export (ncu's
==PROF== lines, the program's own output) are skipped; a row that does not
parse is reported as (file, line, what was expected) and the rest is read. A
line longer than MAX_LINE is dropped unread, and csv's field limit bounds a
quoted field that never closes."""

from __future__ import annotations

import csv
import gzip
import io
import re
import shutil
import subprocess
import tempfile
import threading
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..tool_bounds import Finished, failure, limited
from .usage import InputProblem

NCU_REP_MAGIC = b"NVR\0"  # a saved .ncu-rep report
GZIP_MAGIC = b"\x1f\x8b"
BOM = "\ufeff"
MAX_DECOMPRESSED = 4 << 30  # a gzipped export past this is a bomb: real 100 MB exports hold about 15,000 launches
HEADER_START = '"ID","Process ID"'
SNIFF_BYTES = 64 << 10  # ncu's ==PROF== lines and a program's output may come before the header
EXPORT_SUFFIXES = (".csv", ".csv.gz", ".ncu-rep")  # read as exports whatever they hold: their errors say so
MAX_LINE = 1 << 20  # no real row is near this: a kernel name of kilobytes, a rule's paragraph
CHUNK = 1 << 20
MAX_LAUNCHES = 1_000_000  # a 100 MB export holds about 15,000
MAX_PROBLEMS = 100
CONVERT_TIMEOUT_S = 300
# The address space `ncu --import` may take, a generous constant (the compiler's default bound,
# toolchain/settings.py's COMPILE_MEMORY_MIB), raised here for a report that needs more. On an
# H200 machine, Nsight Compute 2025.3.1 converting a 19 MB report of 280 launches (six sections)
# peaked at 348 MB of address space (172 MB resident), as much as a 10 MB `--set full` report.
# Far below that it is killed or aborts (a one-line error), but at 128 to 256 MiB it exited 0
# printing wrong units, so the bound must stay far above what ncu needs, never near it.
CONVERT_MEMORY_MIB = 8192
MAX_ERRORS_READ = 1 << 16  # bytes of what a failed conversion printed on stderr that its error is read from
EXPORT_HINT = ("{name} is a saved Nsight Compute report and ncu is not on PATH to convert it: "
               "export it with `ncu --import {name} --csv > report.csv` and pass report.csv")

# The columns a launch is identified by, and the metric column names.
REQUIRED_COLUMNS = ("ID", "Process ID", "Process Name", "Kernel Name", "Block Size", "Grid Size",
                    "Metric Name", "Metric Unit", "Metric Value")

# Metric label as ncu prints it -> key in ProfiledLaunch.metrics.
METRICS = {
    "Registers Per Thread": "registers",
    "Static Shared Memory Per Block": "static_shared_mem",
    "Dynamic Shared Memory Per Block": "dynamic_shared_mem",
    "Driver Shared Memory Per Block": "driver_shared_mem",
    "Shared Memory Configuration Size": "shared_mem_config_size",
    "Block Size": "block_size",
    "Grid Size": "grid_size",
    "Cluster Size": "cluster_size",
    "Max Active Clusters": "max_active_clusters",
    "# SMs": "sm_count",
    "Waves Per SM": "waves_per_sm",
    "Block Limit SM": "block_limit_sm",
    "Block Limit Registers": "block_limit_registers",
    "Block Limit Shared Mem": "block_limit_shared_mem",
    "Block Limit Warps": "block_limit_warps",
    "Block Limit Barriers": "block_limit_barriers",
    "Theoretical Active Warps per SM": "theoretical_warps",
    "Theoretical Occupancy": "theoretical_occupancy",
    "Achieved Occupancy": "achieved_occupancy",
    "Achieved Active Warps Per SM": "achieved_warps",
    "Duration": "duration_ns",
    # GPU Speed Of Light Throughput: each unit's throughput as a percentage of its peak
    "Compute (SM) Throughput": "sol_compute_pct",
    "DRAM Throughput": "sol_dram_pct",
    "L1/TEX Cache Throughput": "sol_l1tex_pct",
    "L2 Cache Throughput": "sol_l2_pct",
    "SM Active Cycles": "sm_active_cycles",
    "Elapsed Cycles": "elapsed_cycles",
    # Warp State Statistics
    "Warp Cycles Per Issued Instruction": "warp_cycles_per_issued",
    "Warp Cycles Per Executed Instruction": "warp_cycles_per_executed",
    "Avg. Active Threads Per Warp": "active_threads_per_warp",
    "Avg. Not Predicated Off Threads Per Warp": "not_predicated_off_threads_per_warp",
    # Scheduler Statistics (per scheduler, per cycle)
    "One or More Eligible": "one_or_more_eligible_pct",
    "No Eligible": "no_eligible_pct",
    "Active Warps Per Scheduler": "active_warps_per_scheduler",
    "Eligible Warps Per Scheduler": "eligible_warps_per_scheduler",
    "Issued Warp Per Scheduler": "issued_warps_per_scheduler",
    # Memory Workload Analysis
    "L1/TEX Hit Rate": "l1tex_hit_rate_pct",
    "L2 Hit Rate": "l2_hit_rate_pct",
    "Mem Busy": "mem_busy_pct",
    "Max Bandwidth": "max_bandwidth_pct",
    "Mem Pipes Busy": "mem_pipes_busy_pct",
}
# One label, two sections: Speed Of Light's "Memory Throughput" is a percentage of peak, Memory
# Workload Analysis's the DRAM bandwidth in bytes per second. Told apart by the unit ('%' or not).
BY_UNIT = {("Memory Throughput", True): "sol_memory_pct", ("Memory Throughput", False): "dram_bytes_per_second"}
# Warp State Statistics' stall breakdown: warp cycles per issued instruction spent in each stall reason.
STALL_METRIC = re.compile(r"smsp__average_warps?_(?:issue_stalled|latency_issue_stalled)_([a-z0-9_]{1,40}?)"
                          r"(?:_per_issue_active)?\.ratio$")

# Unit (without its "/block"-style denominator) -> factor to the base unit the metric keys use.
UNIT_FACTORS = {
    "": 1, "byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
    "ns": 1, "nsecond": 1, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "s": 1e9, "second": 1e9,
    "%": 1, "block": 1, "warp": 1, "register": 1, "SM": 1, "thread": 1, "cluster": 1,
    "cycle": 1, "Kcycle": 1e3, "Mcycle": 1e6, "Gcycle": 1e9, "inst": 1, "Kinst": 1e3, "Minst": 1e6,
}


@dataclass
class ProfiledLaunch:
    """One profiled kernel launch, its figures as the report gives them."""
    file: str
    line: int  # the launch's first row
    process_id: str
    process_name: str
    launch_id: int  # ncu's ID: the launch's index among the profiled launches of the run
    kernel: str
    block: tuple[int, ...]
    grid: tuple[int, ...]
    compute_capability: str  # "9.0"; "" when the export has no CC column
    metrics: dict[str, float] = field(default_factory=dict)
    # metric key -> half the last printed digit, where ncu scaled the unit (32.77 Kbyte: 5 bytes)
    rounding: dict[str, float] = field(default_factory=dict)

    @property
    def process(self) -> str:
        return f"{self.process_name} ({self.process_id})"


@dataclass
class NcuReadResult:
    launches: list[ProfiledLaunch] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)


class NcuConversionError(Exception):
    """A .ncu-rep that ncu could not convert."""


class NcuMissing(NcuConversionError):
    """A .ncu-rep and no ncu on PATH to convert it: the one sentence on how to export the CSV."""


def is_ncu_export(head: bytes) -> bool:
    """True for a `ncu --csv` export: its header row within the first lines read."""
    return HEADER_START.encode() in head


def is_ncu_report(head: bytes) -> bool:
    return head.startswith(NCU_REP_MAGIC)


def is_export_head(head: bytes) -> bool:
    """The first bytes of an Nsight Compute export (gzip-compressed or not) or saved report."""
    if head.startswith(GZIP_MAGIC):
        try:
            head = zlib.decompressobj(wbits=31).decompress(head, SNIFF_BYTES)
        except zlib.error:
            return False
    return head.startswith(NCU_REP_MAGIC) or is_ncu_export(head)


def read_ncu(path: str | Path) -> NcuReadResult:
    """Every launch in a `ncu --csv` export (gzip-compressed or not), or in a .ncu-rep converted
    through ncu."""
    with open(path, "rb") as handle:
        return read_ncu_opened(handle, str(path))


def read_ncu_opened(handle, name: str) -> NcuReadResult:
    """read_ncu on a binary stream opened at its start (a buffered reader: its head is peeked,
    not consumed), for a caller that opened the file once to tell what it is."""
    head = handle.peek(len(NCU_REP_MAGIC))[:len(NCU_REP_MAGIC)]
    if is_ncu_report(head):
        return read_lines(_converted_lines(Path(name)), name)
    if head.startswith(GZIP_MAGIC):
        compressed = _Counted(handle)
        raw = _Bounded(gzip.GzipFile(fileobj=compressed), MAX_DECOMPRESSED, compressed)
    else:
        raw = handle
    text = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")
    try:
        return read_lines(_bounded_lines(text), name)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:  # a damaged or truncated gzip stream
        result = NcuReadResult()
        result.problems.append(InputProblem(name, None, f"not a readable gzip-compressed export: {exc}"))
        return result
    finally:
        text.detach()  # the caller's handle stays the caller's to close


class _Counted:
    """The compressed stream GzipFile reads, counting the bytes it gave."""

    def __init__(self, inner):
        self.inner, self.count = inner, 0

    def read(self, size: int = -1) -> bytes:
        data = self.inner.read(size)
        self.count += len(data)
        return data


# Real exports compress 18 to 39 times (tests/fixtures/ncu); a stream past MAX_RATIO times what was
# read, once past BOMB_FLOOR, is a bomb (zeros compress a thousandfold: a 1 MB file made 1 GB, 9 s).
MAX_RATIO = 100
BOMB_FLOOR = 64 << 20


class _Bounded(io.RawIOBase):
    """A decompressed stream that ends with an OSError past `limit` bytes, or past MAX_RATIO times
    the compressed bytes read once past BOMB_FLOOR (a decompression bomb)."""

    def __init__(self, inner, limit: int, compressed: _Counted):
        self.inner, self.left, self.compressed, self.given = inner, limit, compressed, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        count = self.inner.readinto(buffer)
        self.left -= count
        self.given += count
        if self.left < 0:
            raise OSError(f"it decompresses to more than {MAX_DECOMPRESSED >> 30} GiB")
        if self.given > BOMB_FLOOR and self.given > MAX_RATIO * self.compressed.count:
            raise OSError(f"it decompresses to over {MAX_RATIO} times its size, which no export does")
        return count


def _converted_lines(path: Path) -> Iterator[str]:
    """The CSV of a saved report, as `ncu --import R --csv --print-units base` prints it (base
    units: exact byte counts), streamed line by line; ncu runs within CONVERT_MEMORY_MIB of address
    space and is killed past CONVERT_TIMEOUT_S, and a failure raises NcuConversionError (said as
    every tool's failure is: tool_bounds.failure) when the output ends."""
    ncu = shutil.which("ncu")
    if ncu is None:
        raise NcuMissing(EXPORT_HINT.format(name=path.name))
    command = limited([ncu, "--import", str(path), "--csv", "--print-units", "base"], CONVERT_MEMORY_MIB)
    with tempfile.TemporaryFile() as errors:
        try:
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, stdin=subprocess.DEVNULL)
        except OSError as exc:
            raise NcuConversionError(f"ncu --import {path.name} --csv failed: {exc.strerror}") from None
        expired = threading.Event()
        timer = threading.Timer(CONVERT_TIMEOUT_S, lambda: (expired.set(), process.kill()))
        timer.start()
        try:
            with io.TextIOWrapper(process.stdout, encoding="utf-8", errors="replace", newline="") as text:
                yield from _bounded_lines(text)
            code = process.wait()
        finally:
            timer.cancel()
            if process.poll() is None:
                process.kill()
                process.wait()
        if code != 0:
            errors.seek(0)
            said = Finished(None if expired.is_set() else code, bytearray(errors.read(MAX_ERRORS_READ)), False)
            problem = failure(said, "ncu", CONVERT_TIMEOUT_S, CONVERT_MEMORY_MIB, MAX_ERRORS_READ)
            raise NcuConversionError(f"ncu --import {path.name} --csv failed: {problem}")


def _bounded_lines(handle) -> Iterator[str]:
    """The file's lines (without their newline), read a chunk at a time; a line longer than
    MAX_LINE is dropped whole, never held."""
    tail, skipping = "", False
    while True:
        chunk = handle.read(CHUNK)
        if not chunk:
            if tail and not skipping:
                yield tail
            return
        lines = (tail + chunk).split("\n")
        tail = lines.pop()
        if skipping and lines:  # the rest of an overlong line ends at the first newline
            lines[0], skipping = "\0overlong", False
        if len(tail) > MAX_LINE:
            tail, skipping = "", True
        yield from lines


class _Assembler:
    """Collects consecutive rows of one launch and finishes it when the key changes."""

    def __init__(self, name: str, columns: dict[str, int], result: NcuReadResult):
        self.name, self.columns, self.result = name, columns, result
        self.process, self.launch = columns["Process ID"], columns["ID"]
        self.metric, self.unit, self.value = columns["Metric Name"], columns["Metric Unit"], columns["Metric Value"]
        self.current: ProfiledLaunch | None = None
        self.key: tuple[str, str] = ("", "")
        self.said: dict[str, InputProblem] = {}  # the first problem of each kind
        self.repeats: dict[str, int] = {}

    def problem(self, line: int | None, message: str) -> None:
        """Said once per kind (the figure or columns it is about) with the first row's line; repeats
        are counted into it (close_problems), so a large export never prints a line per row."""
        kind = message.split(":", 1)[0]
        if kind in self.said:
            self.repeats[kind] = self.repeats.get(kind, 0) + 1
        elif len(self.result.problems) < MAX_PROBLEMS:
            self.said[kind] = InputProblem(self.name, line, message)
            self.result.problems.append(self.said[kind])

    def close_problems(self) -> None:
        for kind, count in self.repeats.items():
            self.said[kind].message += f" (and {count} more {'row' if count == 1 else 'rows'} like it)"

    def row(self, row: list[str], number: int) -> None:
        if row[self.launch] != self.key[1] or row[self.process] != self.key[0]:
            self.finish()
            self.key = (row[self.process], row[self.launch])
            self.current = self._start(row, number)
        if self.current is None:
            return
        text, unit = row[self.value], row[self.unit]
        metric = metric_key(row[self.metric], unit)
        if metric is None:
            return
        factor = UNIT_FACTORS.get(unit) or _factor(unit)
        value = _number(text, factor)
        if value is None:
            if text != "n/a":
                self.problem(number, f"{row[self.metric]}: expected a number in a known unit, got "
                                     f"{text[:40]!r} {unit[:20]!r}")
            return
        self.current.metrics[metric] = value
        if factor > 1:  # a scaled unit: the printed digits round the value
            rounding = _rounding(text, factor)
            if rounding >= 1:
                self.current.rounding[metric] = rounding

    def _start(self, row: list[str], number: int) -> ProfiledLaunch | None:
        c = self.columns
        block, grid = _dims(row[c["Block Size"]]), _dims(row[c["Grid Size"]])
        launch_id = row[c["ID"]]
        if block is None or grid is None or not launch_id.isdigit() or len(launch_id) > 12:
            self.problem(number, "ID, Block Size and Grid Size: expected a launch index and '(x, y, z)' sizes")
            return None
        if len(self.result.launches) >= MAX_LAUNCHES:
            self.problem(number, f"more than {MAX_LAUNCHES} launches: the rest are not read")
            return None
        # Optional columns may come after the required ones, past what a short row holds.
        cc = row[c["CC"]] if c.get("CC", len(row)) < len(row) else ""
        return ProfiledLaunch(file=self.name, line=number, process_id=row[c["Process ID"]][:20],
                              process_name=row[c["Process Name"]][:200], launch_id=int(launch_id),
                              kernel=row[c["Kernel Name"]][:4096], block=block, grid=grid,
                              compute_capability=cc[:8])

    def finish(self) -> None:
        if self.current is not None:
            self.result.launches.append(self.current)
        self.current, self.key = None, ("", "")


def read_lines(lines: Iterable[str], name: str) -> NcuReadResult:
    """Launches from the lines of an export (a file's, or ncu's output). Lines that are not rows
    of the export (ncu's ==PROF== lines, the program's output) parse as rows that name no
    launch and are skipped."""
    result = NcuReadResult()
    # An export saved with a byte-order mark, first or appended: dropped before csv reads the line, where a
    # mark before a quoted field would keep the field's quotes.
    reader = csv.reader(line[len(BOM):] if line.startswith(BOM) else line for line in lines)
    assembler: _Assembler | None = None
    width = 0
    for row in _rows(reader, name, result):
        if assembler is None or (row and row[0] == "ID"):
            if assembler is not None:  # an appended export: the launch before its header is complete
                assembler.finish()
                assembler.close_problems()
            assembler, width = _header(row, name, result, reader.line_num) or (assembler, width)
            continue
        if len(row) < width:
            if len(row) > 1 and row[0].isdigit():  # a launch's row, cut short
                assembler.problem(reader.line_num, f"expected {width} columns as the header names, "
                                                   f"got {len(row)}")
            continue
        assembler.row(row, reader.line_num)
    if assembler is None:
        empty = "the file is empty: " if reader.line_num == 0 else ""
        result.problems.append(InputProblem(name, None, f"{empty}expected the CSV that `ncu --csv` prints "
                                                   "(a header row starting \"ID\",\"Process ID\")"))
    else:
        assembler.finish()
        assembler.close_problems()
        if not result.launches and not result.problems:
            result.problems.append(InputProblem(name, None, "no profiled launch in this export"))
    return result


# csv's refusals, as a user reads them.
_CSV_ERRORS = {"field larger than field limit": f"a field longer than {csv.field_size_limit():,} characters",
               "new-line character seen in unquoted field": "a carriage return inside a line"}


def _rows(reader, name: str, result: NcuReadResult) -> Iterator[list[str]]:
    """The rows of `reader`. A line csv refuses (the profiled program's own output, interleaved
    with ncu's rows, can be one long line) is skipped and said once, with how many more there were:
    the export's other rows are still read."""
    first, more = None, 0
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            if first is not None:
                more += 1
                continue
            said = next((text for start, text in _CSV_ERRORS.items() if str(exc).startswith(start)), str(exc))
            first = InputProblem(name, reader.line_num, f"not CSV: {said}; the line is skipped")
            result.problems.append(first)
            continue
        yield row
    if more:
        first.message += f" (and {more} more {'line' if more == 1 else 'lines'} like it)"


def _header(row: list[str], name: str, result: NcuReadResult, number: int):
    if not row or row[0] != "ID":
        return None
    columns = {title: index for index, title in enumerate(row)}
    missing = [title for title in REQUIRED_COLUMNS if title not in columns]
    if missing:
        result.problems.append(InputProblem(name, number, f"header lacks {', '.join(missing)}"))
        return None
    return _Assembler(name, columns, result), max(columns[t] for t in REQUIRED_COLUMNS) + 1


def metric_key(label: str, unit: str) -> str | None:
    """The ProfiledLaunch.metrics key of a metric as ncu labels it, None for one not read."""
    key = METRICS.get(label) or BY_UNIT.get((label, unit == "%"))
    if key is None and label.startswith("smsp__"):
        stall = STALL_METRIC.match(label)
        return f"stall_{stall.group(1)}" if stall else None
    return key


def _dims(text: str) -> tuple[int, ...] | None:
    parts = text.strip("() ").split(",")
    if not 1 <= len(parts) <= 3 or not all(p.strip().isdigit() and len(p.strip()) <= 10 for p in parts):
        return None
    return tuple(int(p) for p in parts)


def _factor(unit: str) -> float:
    """The factor of a unit with a denominator ("Kbyte/block"); 0 for an unknown unit."""
    return UNIT_FACTORS.get(unit.split("/", 1)[0], 0)


def _rounding(value: str, factor: float) -> float:
    """Half the last printed digit, in the base unit."""
    decimals = len(value) - value.index(".") - 1 if "." in value else 0
    return factor * 0.5 * 10.0 ** -decimals


def _number(value: str, factor: float) -> float | None:
    if not factor:
        return None
    text = value.replace(",", "")
    if not text or len(text) > 40:
        return None
    try:
        number = float(text)
    except ValueError:
        return None
    if number != number or number in (float("inf"), float("-inf")):
        return None
    return number * factor
