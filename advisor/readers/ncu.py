"""Nsight Compute exports: the details page that `ncu --csv` prints (and
`ncu --import R.ncu-rep --csv` for a saved report), one row per metric of one
launch. Read as a stream, one launch held at a time: rows of a launch are
consecutive, keyed by (Process ID, ID). Only the Launch Statistics, Occupancy
and Speed Of Light figures the occupancy analysis reads are kept; values are
converted from ncu's units (SI prefixes, thousands separators) to bytes,
nanoseconds, percent or plain counts. Lines that are not rows of the export
(ncu's ==PROF== lines, the program's own output) are skipped; a row that does
not parse is reported as (file, line, what was expected) and the rest is read.
A line longer than MAX_LINE is dropped unread, and csv's field limit bounds a
quoted field that never closes."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .usage import InputProblem

NCU_REP_MAGIC = b"NVR\0"  # a saved .ncu-rep report
HEADER_START = '"ID","Process ID"'
MAX_LINE = 1 << 20  # no real row is near this: a kernel name of kilobytes, a rule's paragraph
CHUNK = 1 << 20
MAX_LAUNCHES = 1_000_000  # a 100 MB export holds about 15,000
MAX_PROBLEMS = 100
CONVERT_TIMEOUT_S = 300
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
}

# Unit (without its "/block"-style denominator) -> factor to the base unit the metric keys use.
UNIT_FACTORS = {
    "": 1, "byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9,
    "ns": 1, "nsecond": 1, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "s": 1e9, "second": 1e9,
    "%": 1, "block": 1, "warp": 1, "register": 1, "SM": 1, "thread": 1, "cluster": 1,
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


def read_ncu(path: str | Path) -> NcuReadResult:
    """Every launch in a `ncu --csv` export, or in a .ncu-rep converted through ncu."""
    with open(path, "rb") as handle:
        return read_ncu_opened(handle, str(path))


def read_ncu_opened(handle, name: str) -> NcuReadResult:
    """read_ncu on a binary stream opened at its start (a buffered reader: its head is peeked,
    not consumed), for a caller that opened the file once to tell what it is."""
    if is_ncu_report(handle.peek(len(NCU_REP_MAGIC))):
        return read_lines(_converted_lines(Path(name)), name)
    text = io.TextIOWrapper(handle, encoding="utf-8", errors="replace", newline="")
    try:
        return read_lines(_bounded_lines(text), name)
    finally:
        text.detach()  # the caller's handle stays the caller's to close


def _converted_lines(path: Path) -> Iterator[str]:
    ncu = shutil.which("ncu")
    if ncu is None:
        raise NcuMissing(EXPORT_HINT.format(name=path.name))
    try:
        done = subprocess.run([ncu, "--import", str(path), "--csv"], capture_output=True, text=True,
                              errors="replace", timeout=CONVERT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NcuConversionError(f"ncu --import {path.name} --csv failed: {exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1][:200]
        raise NcuConversionError(f"ncu --import {path.name} --csv failed (exit {done.returncode}): {last}")
    return iter(done.stdout.splitlines(keepends=True))


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
        self.bad_launch = False

    def problem(self, line: int | None, message: str) -> None:
        if len(self.result.problems) < MAX_PROBLEMS:
            self.result.problems.append(InputProblem(self.name, line, message))

    def row(self, row: list[str], number: int) -> None:
        if row[self.launch] != self.key[1] or row[self.process] != self.key[0]:
            self.finish()
            self.key = (row[self.process], row[self.launch])
            self.current = self._start(row, number)
        metric = METRICS.get(row[self.metric])
        if metric is None or self.current is None:
            return
        text, unit = row[self.value], row[self.unit]
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
        cc = row[c["CC"]] if "CC" in c else ""
        return ProfiledLaunch(file=self.name, line=number, process_id=row[c["Process ID"]][:20],
                              process_name=row[c["Process Name"]][:200], launch_id=int(launch_id),
                              kernel=row[c["Kernel Name"]][:4096], block=block, grid=grid,
                              compute_capability=cc[:8])

    def finish(self) -> None:
        if self.current is not None:
            self.result.launches.append(self.current)
        self.current = None


def read_lines(lines: Iterable[str], name: str) -> NcuReadResult:
    """Launches from the lines of an export (a file's, or ncu's output). Lines that are not rows
    of the export (ncu's ==PROF== lines, the program's output) parse as rows that name no
    launch and are skipped."""
    result = NcuReadResult()
    reader = csv.reader(lines)
    assembler: _Assembler | None = None
    width = 0
    for row in _rows(reader, name, result):
        if assembler is None or (row and row[0] == "ID"):
            assembler, width = _header(row, name, result, reader.line_num) or (assembler, width)
            continue
        if len(row) < width:
            if len(row) > 1 and row[0].isdigit():  # a launch's row, cut short
                assembler.problem(reader.line_num, f"expected {width} columns as the header names, "
                                                   f"got {len(row)}")
            continue
        assembler.row(row, reader.line_num)
    if assembler is None:
        result.problems.append(InputProblem(name, None, "expected the CSV that `ncu --csv` prints "
                                                   "(a header row starting \"ID\",\"Process ID\")"))
    else:
        assembler.finish()
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
