"""The records of a lint run that its stages share: the options a run is given and the linted
kernel each stage hands on (immutable, a new record where something changes). Kept apart from
run.py so that the modules building kernel records (profiled.py) need not import the pipeline."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from ..engine.occupancy import Occupancy
from ..launch import LaunchConfig
from ..readers.compiler_output import KernelUsage
from ..rules import SEVERITY_RANK, Finding, RuleSelection
from .settings import NO_CONFIG

if TYPE_CHECKING:  # the config model imports pydantic; a lint without a config file never does
    from .config import LintConfig
    from .settings import NoConfig


@dataclass
class LintOptions:
    config: LintConfig | NoConfig = NO_CONFIG
    archs: tuple[str, ...] = ()  # sm_XX; empty: every architecture the inputs hold
    block_size: tuple[int, ...] | None = None  # --block-size; else config's; else 256
    selection: RuleSelection = field(default_factory=RuleSelection)
    fail_on: str = "error"
    min_occupancy: float | None = None  # --min-occupancy; else config's
    config_path: str = ""  # where the config came from: named in the report
    # Registers per thread in an earlier build, by (name as written, arch): a baseline's or diff's old side (TA908).
    previous_registers: Mapping[tuple[str, str], int] = field(default_factory=dict)
    allow_regressions: bool = False  # with a baseline: a kernel below its recorded occupancy does not fail the run
    # Read each cubin's machine code with nvdisasm: None where it is installed, True required, False never.
    machine_code: bool | None = None
    sm_count: int | None = None  # --sm-count; else config's; else the product's that --arch names
    product_sm_counts: Mapping[str, int] | None = None  # sm_XX -> SMs of the products --arch names

    @property
    def target_archs(self) -> tuple[str, ...]:
        """The architectures the run checks: --arch's, else the config's (empty: whatever the inputs hold)."""
        return tuple(self.archs or self.config.arch)

    def sm_count_for(self, arch: str) -> int | None:
        """The SM count the grid rules (TA7xx) use on `arch`; None when nothing says."""
        products = self.product_sm_counts if self.archs else self.config.product_sm_counts()
        return self.sm_count or self.config.sm_count or (products or {}).get(arch)


class LintedKernel(NamedTuple):
    """One kernel on one architecture, linted: immutable, built by keyword."""

    name: str  # as the compiler wrote it
    demangled: str
    arch: str
    usage: KernelUsage  # the figures used (the winning source's, spills from ptxas)
    evidence: tuple[KernelUsage, ...]
    launch: LaunchConfig  # what the engine and the rules analysed: figures and launch
    configured_by: str | None  # the [[kernels]] entry's name, if one matched
    result: Occupancy
    findings: tuple[Finding, ...]  # worst first
    location: tuple[str, int | None]
    measured: dict | None = None  # a profiled launch's report figures (advisor/lint/profiled.py)
    # Where the block checked comes from (lint/host_launches.LAUNCH_ORIGINS) and the host launch site, if any.
    launch_from: str = "assumed"
    launch_site: object | None = None

    @property
    def worst(self) -> int:
        return worst_severity(self.findings)


def worst_severity(findings) -> int:
    """SEVERITY_RANK of the most severe finding; -1 for none."""
    return max((SEVERITY_RANK[f.severity] for f in findings), default=-1)
