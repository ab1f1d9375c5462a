"""The launches a source's host code makes (readers/host_launches.py), joined to its kernels.

A kernel launched with a compile-time block is checked at each such launch: one record per site
(its `variant` the site, where there are several), carrying that launch's block, grid, dynamic
shared memory and cluster as LaunchConfig keys. A block that `cudaOccupancyMaxPotentialBlockSize`
chooses is the engine's answer to the same question (what `suggest` answers for the kernel). A
kernel whose every launch sets its block at run time keeps one record naming those sites, and
falls back to the config, its `__launch_bounds__` or the assumed block (TA906 says which).

Where the block comes from, as the lint document says it (`launch.from`):
"""

from __future__ import annotations

from dataclasses import replace

from ..readers.compiler_output import KernelUsage
from ..readers.demangle import base_name, demangle, demangle_many
from ..readers.host_launches import OCCUPANCY_API, HostLaunch
from ..rules.families.ta9_lint import run_time_text
from ..rules.lint_facts import Disagreement, Reading

HOST_CODE, CONFIG, LAUNCH_BOUNDS, ASSUMED = "host code", "config", "launch bounds", "assumed"
LAUNCH_ORIGINS = (HOST_CODE, CONFIG, LAUNCH_BOUNDS, ASSUMED)


def site_text(launch: HostLaunch) -> str:
    return f"{launch.file}:{launch.line}:{launch.column}"


def site_document(launch: HostLaunch | None) -> dict | None:
    """A launch's site in the lint document."""
    if launch is None:
        return None
    return {"file": launch.file, "line": launch.line, "column": launch.column, "api": launch.api,
            "run_time": list(launch.run_time), "block_from": launch.block_from,
            "attributes": list(launch.attributes)}


def with_host_launches(records: list[KernelUsage], launches) -> tuple[list[KernelUsage], list[str]]:
    """(each record as its host code launches it, a sentence per run-time launch of a kernel that is
    checked at its other launches)."""
    by_kernel: dict[str | None, list[HostLaunch]] = {}
    by_template: dict[str, list[HostLaunch]] = {}
    for launch in launches:
        if launch.kernel is None and launch.kernel_template is not None:
            by_template.setdefault(launch.kernel_template, []).append(launch)
        else:
            by_kernel.setdefault(launch.kernel, []).append(launch)
    out = []
    notes = [f"launch at {site_text(launch)} ({launch.api}): which kernel it launches is not known from the source "
             "(a function pointer, or a template parameter of the launching function)"
             for launch in by_kernel.pop(None, [])]
    demangled = demangle_many([r.name for r in records]) if by_template else {}
    for record in records:
        sites = by_kernel.get(record.name, [])
        if by_template:  # every instantiation of a template launched where its arguments are the caller's
            sites = sites + by_template.get(base_name(demangled.get(record.name, record.name)), [])
        read = [(launch, site_launch_values(launch, record)) for launch in sites]
        checked = [(launch, values) for launch, values in read if values is not None]
        if not checked:
            out.append(replace(record, host_launches=tuple(sites)) if sites else record)
            continue
        several = len(checked) > 1
        for launch, values in checked:
            out.append(replace(record, host_launches=(launch,), launch=tuple(values.items()),
                               variant=site_text(launch) if several else record.variant))
        notes += [f"{demangle(record.name)} [{record.arch}]: {run_time_text(launch.run_time, site_text(launch))}; "
                  "checked at its other launches" for launch, values in read if values is None]
    return out, notes


def site_launch_values(launch: HostLaunch, record: KernelUsage) -> dict | None:
    """The LaunchConfig keys of a launch whose block is known when the source compiles (or chosen by
    the occupancy API), else None."""
    block = launch.block
    if block is None and launch.block_from == OCCUPANCY_API and launch.dynamic_shared_mem is not None:
        block = _suggested_block(record, launch.dynamic_shared_mem)
    if block is None:
        return None
    values: dict = {"block_size": tuple(block[:_rank(block)])}
    if launch.dynamic_shared_mem:
        values["dynamic_shared_mem"] = launch.dynamic_shared_mem
    if launch.grid is not None:
        values["grid_size"] = launch.grid[0] * launch.grid[1] * launch.grid[2]
    if launch.cluster is not None and launch.cluster != (1, 1, 1):
        values["cluster_size"] = launch.cluster[0] * launch.cluster[1] * launch.cluster[2]
    return values


def _rank(dims) -> int:
    """How many dimensions a block has as written (16x16, not 16x16x1)."""
    return 3 if dims[2] != 1 else 2 if dims[1] != 1 else 1


def _suggested_block(record: KernelUsage, dynamic_shared_mem: int) -> tuple[int, int, int] | None:
    """The block cudaOccupancyMaxPotentialBlockSize returns for this kernel: the engine's mirror of
    it (engine/optimizer.py, `suggest`), from the kernel's compiled figures."""
    from ...specs.names import UnknownArchError
    from ...specs.resolve import resolve
    from ..engine.optimizer import LinearSharedMem, max_potential_block_size
    from ..inputs import InputError
    from ..launch import LaunchConfig

    try:
        arch = resolve(record.arch).arch
        kernel = LaunchConfig.from_mapping({"registers": record.registers, "shared_mem": record.shared_mem,
                                            "block_size": 32, "max_threads_per_block": record.max_threads})
        choice = max_potential_block_size(arch, kernel, LinearSharedMem(dynamic_shared_mem, 0), 1)
    except (UnknownArchError, InputError):
        return None
    return (choice.block_size, 1, 1) if choice.block_size else None


def block_origin(entry_block: bool, usage: KernelUsage, fallback: str) -> tuple[str, HostLaunch | None]:
    """(where the checked block comes from, the host launch it comes from): a [[kernels]] entry's
    block, else the host code's compile-time one, else the fallback ("option", "launch_bounds",
    "default" as TA906 names them)."""
    site = usage.host_launches[0] if usage.host_launches else None
    if entry_block:
        return CONFIG, site
    if usage.launch and site is not None and dict(usage.launch).get("block_size") is not None:
        return HOST_CODE, site
    if usage.launch:  # a kernel cache's framework records the launch it makes
        return HOST_CODE, None
    return {"option": CONFIG, "launch_bounds": LAUNCH_BOUNDS}.get(fallback, ASSUMED), site


def disagreement(entry_values: dict, usage: KernelUsage) -> Disagreement | None:
    """Where a [[kernels]] entry's block differs from the host code's launch (the entry's is used)."""
    site = usage.host_launches[0] if usage.host_launches and usage.launch else None
    if site is None or "block_size" not in entry_values:
        return None
    from ..inputs import parse_block

    host = dict(usage.launch).get("block_size")
    try:
        config = list(parse_block(entry_values["block_size"]))
    except ValueError:
        return None
    if host is None or _padded(config) == _padded(host):
        return None
    return Disagreement("block", (Reading("config", "x".join(map(str, config))),
                                  Reading("host code", "x".join(map(str, host)), site_text(site))))


def _padded(dims) -> list[int]:
    return list(dims) + [1] * (3 - len(dims))


class HostCode:
    """Lint's compile with the host code read: one host build per source beside its first build,
    and each source's kernel records joined to its launches once every build is done."""

    def __init__(self, shown_path, enabled: bool = True):
        self.shown_path = shown_path  # how lint names a file (relative to the working directory, under it)
        self.missing = _host_parser_missing() if enabled else None
        self.enabled = enabled and self.missing is None
        self.records: dict[str, list] = {}  # source as shown -> its kernels' records
        self.launches: dict[str, tuple] = {}
        self.problems: dict[str, str] = {}  # source as shown -> why its launches were not read
        self.rejected: set[str] = set()  # sources the compiler rejected (said by their device builds)
        self.asked = False

    def builds(self, builds) -> list:
        """The host builds to run beside `builds`: each source's, with its first build's flags."""
        self.asked = bool(builds)
        if not self.enabled:
            return []
        firsts = {b.source: b for b in reversed(builds) if not b.is_ptx}
        return [b._replace(host=True) for b in firsts.values()]

    def took(self, result, where: str) -> bool:
        """Whether `result` is a host build's (its launches kept, sites named as the user names files)."""
        if not result.build.host:
            return False
        self.launches[where] = tuple(replace(site, file=self.shown_path(site.file)) for site in result.launches or ())
        if result.host_problem:
            self.problems[where] = f"{where}: {result.host_problem}"
        return True

    def add(self, where: str, records) -> None:
        self.records.setdefault(where, []).extend(records)

    def joined(self) -> tuple[list[KernelUsage], list[str]]:
        """(every record joined to its source's launches, the run's sentences about host code)."""
        notes = [self.missing] if self.missing and self.asked else []
        notes += [note for where, note in self.problems.items() if where not in self.rejected]
        out = []
        for where, records in self.records.items():
            joined, run_time = with_host_launches(records, self.launches.get(where, ()))
            out += joined
            notes += run_time
        return out, notes


def _host_parser_missing() -> str | None:
    """The sentence naming the [host] extra where libclang is not installed; else None."""
    from ..readers.host_expressions import HostParserMissing, clang

    try:
        clang()
    except HostParserMissing as exc:
        return str(exc)
    return None
