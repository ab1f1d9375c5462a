"""The rule registry: every rule is one `Rule` object beside its check, in the
family module of its code (`families/ta1_launch.py` holds TA1xx, ... ,
`families/ta9_lint.py` TA9xx). The registry imports every module of
`families/` and collects the Rule objects it finds: nothing lists them by hand.

    >>> from tuneadvise.advisor.rules import registry
    >>> registry()["TA106"].name
    'dynamic-shared-mem-needs-opt-in'
    >>> registry()["TA106"].kind, registry()["TA905"].kind, registry()["TA801"].kind
    ('config', 'lint', 'source')

A rule's kind, and what its check may read, follow from the type of the
check's first parameter (`Rule.context`), so they cannot drift from the code:

- `Occupancy`: the occupancy result alone (its LaunchConfig, `result.kernel`,
  holds the resources and the launch context: grid, cluster, spills...).
- `LaunchContext`: the result and the SM count (from the launch, else from the
  product named by --arch). Both are kind "config".
- `LintContext`: a linted kernel's result with its budget, the minimum
  occupancy that applies, the disagreements between its build sources and
  whether its launch settings were given. Kind "lint".
- `SourceLine`: one line of CUDA source (comments and literals blanked) and
  every target it is built for. Kind "source".
- `MeasuredContext`: one profiled launch of an Nsight Compute export (the
  engine's figures beside the report's, the grid's layout over the SMs) and
  the lint config's min_achieved_occupancy. Kind "measured".

A check is `check(context, params) -> iterable of (message, details)` or
`(message, details, severity)` where it lowers its rule's severity for one
finding. Every kind runs through the same `RuleSelection` (--select/--ignore).

Entry points:

- `check_occupancy(resolved, result, selection)`: config rules, sorted
  (occupancy, batch, report); `config_findings(...)` the same unsorted.
- `lint_findings(LintContext(...), selection)`: lint's own rules (TA9xx),
  unsorted. Lint builds the context per kernel:
  `LintContext(result=occupancy_result, budget=BudgetLimits.of(config_budget) or
  None, minimum=the min_occupancy that applies or None,
  disagreements=tuple of lint_facts.Disagreement, launch_given=bool, register_cap=
  RegisterCap or None, previous_registers=int or None, assumed_blocks=
  ((key, blocks), ...))`.
- `source_rules(selection)` and `SourceLine`: what `source_scan.scan_source`
  runs per line.
"""

# Annotations here are evaluated, not text (no `from __future__ import annotations`): typing.NamedTuple
# compiles every annotation written as text when its class is made, on every command's start-up.
import os
from collections.abc import Callable
from functools import lru_cache
from operator import attrgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple, get_type_hints

if TYPE_CHECKING:
    from ..engine.occupancy import Occupancy

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {name: rank for rank, name in enumerate(reversed(SEVERITIES))}  # info 0 < warning 1 < error 2


def fails(severity: str, fail_on: str, baseline: str | None = None) -> bool:
    """Whether a finding fails the run: at or above `fail_on`, and not accepted by the baseline
    (`baseline`: its status against one, "new", "worse" or "baselined"; None without one)."""
    return SEVERITY_RANK[severity] >= SEVERITY_RANK[fail_on] and baseline != "baselined"


# NamedTuple rather than dataclass: a dataclass is made by generating and compiling its methods
# at import, and this module is on every command's start-up path (benchmarks/startup.py).
class Rule(NamedTuple):
    code: str
    name: str
    kind: str  # "config", "lint" or "source": from the check's context type
    severity: str
    summary: str
    explanation: str
    source: str  # a key of specs/data/sources.toml
    params: MappingProxyType  # thresholds the check reads, read-only
    trigger: dict  # an example the tests run: the rule must fire on it...
    clean: dict  # ...and must not on this one
    check: Callable
    context: type  # what the check takes: Occupancy, LaunchContext, LintContext or SourceLine
    # Whether the rule applies to a profiled launch's result (lint of an Nsight Compute export),
    # whose launch settings are what the driver chose, not what the program asked for.
    on_measured_launch: bool = True
    # What the kernel's machine code adds to a finding of this rule (readers/sass.py's KernelSass in,
    # (words after the message, details) out, or None): the source lines behind the figures.
    # Each kernel's own lines, where the finding itself is shared by kernels with equal figures.
    machine_code: Callable | None = None
    # What a finding of this rule adds where lint built the register change it suggests
    # (toolchain/cap_check.py's figures at the cap in, (words after the message, details) out).
    cap_built: Callable | None = None
    # A rule said once for the whole run rather than on each kernel (TA906): its kernel findings'
    # details, each with the number of kernels that had them, in; (message, details) out.
    per_run: Callable | None = None
    # The details key of a finding that lists source lines ({file, line}), and what each line is to the
    # finding ("spills here"): SARIF's related locations.
    related: tuple[str, str] | None = None
    # The title of the suggested fix a finding's `replacement` detail applies, {replacement} filled in.
    fix_title: str | None = None
    # What a config check needs to find anything: LaunchConfig fields that must be set (not None, 0 or
    # False) or NEEDS_ERRORS (a launch error the engine names). Without them it is not run: a batch line
    # that sets no grid skips the grid rules (tests/rules/test_needs.py holds each check silent there).
    needs: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"code": self.code, "name": self.name, "severity": self.severity, "summary": self.summary,
                "explanation": self.explanation, "source": self.source}


class Finding(NamedTuple):
    code: str
    severity: str
    message: str
    arch: str
    details: dict  # the numbers behind the message
    source: str = ""

    def to_dict(self) -> dict:
        return {"code": self.code, "severity": self.severity, "message": self.message, "arch": self.arch,
                "details": self.details, "source": self.source}


# -- what checks read ---------------------------------------------------------------

class LaunchContext(NamedTuple):
    """An occupancy result and the SM count its launch runs on."""

    result: "Occupancy"
    sm_count: int | None  # the launch's, else the product's; None when neither says
    # Clusters of the launch's cluster size resident at once on the device (the product's GPC
    # layout, or a profile's Max Active Clusters); None without clusters or a layout.
    active_clusters: int | None = None

    @classmethod
    def of(cls, resolved, result: "Occupancy", active_clusters: int | None = None) -> "LaunchContext":
        return cls(result=result, sm_count=device_sm_count(resolved, result.kernel),
                   active_clusters=active_clusters or device_active_clusters(resolved, result))

    @property
    def wave(self) -> "tuple[int, int | None] | None":
        """(blocks resident at once on the device, cluster size or None): one wave of the grid,
        counted in clusters where the launch has them and their residency is known; None when
        nothing is resident or the SM count is unknown."""
        cluster = self.result.kernel.cluster_size
        if cluster and cluster > 1 and self.active_clusters is not None:
            return (self.active_clusters * cluster, cluster) if self.active_clusters else None
        if not self.sm_count or not self.result.active_blocks_per_sm:
            return None
        return self.result.active_blocks_per_sm * self.sm_count, None


def device_active_clusters(resolved, result: "Occupancy") -> int | None:
    """Clusters of the launch's size resident at once over its product's GPC layout (clusters.py);
    None without a cluster size over one block, a layout, or a resident block."""
    cluster, product = result.kernel.cluster_size, resolved.product
    layout = product.get("gpc_sms") if product is not None else None
    if not cluster or cluster <= 1 or not layout or not result.launchable:
        return None
    from ..engine.clusters import cluster_occupancy

    try:
        return cluster_occupancy(result.arch, list(layout), result.active_blocks_per_sm, cluster).clusters
    except ValueError:  # a size the architecture refuses: the launch error says so
        return None


def device_sm_count(resolved, launch) -> int | None:
    """The SMs a launch runs on: its own --sm-count, else its product's; None when neither says."""
    product = resolved.product
    return launch.sm_count or (product.get("sm_count") if product else None)


class BudgetLimits(NamedTuple):
    """A lint budget's limits (None: no limit), as the TA9xx checks read them."""

    kernel: str  # the budget's kernel glob, named in messages
    max_registers: int | None = None
    max_spill_stores: int | None = None
    max_spill_loads: int | None = None
    max_stack_frame: int | None = None
    max_shared_mem: int | None = None

    @classmethod
    def of(cls, budget) -> "BudgetLimits":
        """From lint's config budget (`kernel`, `max_registers`, `max_shared_mem` and `limit(key)`,
        which applies no_spills and the old max_spill_bytes)."""
        return cls(kernel=budget.kernel, max_registers=budget.max_registers,
                   max_spill_stores=budget.limit("max_spill_stores"), max_spill_loads=budget.limit("max_spill_loads"),
                   max_stack_frame=budget.limit("max_stack_frame"), max_shared_mem=budget.max_shared_mem)


class RegisterCap(NamedTuple):
    """A register cap the build put on a kernel, and what set it."""

    registers: int  # per thread
    origin: str  # as written: "__launch_bounds__(256, 4)", "__maxnreg__(64)", "-maxrregcount=64"


# The [[kernels]] keys that record a host-side launch assumption (resident blocks per SM).
ASSUMPTION_KEYS = ("min_blocks_per_sm", "expected_blocks_per_sm")


class LintContext(NamedTuple):
    """One linted kernel on one architecture: what lint's own rules read."""

    result: "Occupancy"  # its LaunchConfig holds the build figures (registers, spills, ...)
    budget: BudgetLimits | None = None  # the matching [[budgets]] entry
    minimum: float | None = None  # the min_occupancy that applies (budget, entry, option or config)
    disagreements: tuple = ()  # lint_facts.Disagreement: each figure the build sources disagree on (TA905 words them)
    launch_given: bool = True  # a [[kernels]] entry, the config's own kernel or a kernel cache's metadata gave the launch
    register_cap: RegisterCap | None = None  # __maxnreg__, __launch_bounds__ or -maxrregcount, where known
    previous_registers: int | None = None  # registers per thread in an earlier build (baseline, diff)
    assumed_blocks: tuple[tuple[str, int], ...] = ()  # (ASSUMPTION_KEYS key, resident blocks per SM) the host assumes
    block_origin: str = "default"  # with no launch given: "default", "option" (--block-size) or "launch_bounds"
    # lint_facts.RunTimeLaunch: the launches in the source's host code that set the kernel's block at run
    # time, for TA906 to name.
    run_time_launches: tuple = ()
    # (field, value) a reader added to the kernel's record beyond the build figures (KernelUsage.reader_figures):
    # disassembly or measurements, for the rules that read them.
    reader_figures: tuple[tuple[str, object], ...] = ()


class SourceTarget(NamedTuple):
    """An architecture a source is built for, as the source rules read it."""

    sm: str  # "sm_90"
    major: int  # the compute capability's major (orders the targets, oldest first)
    # The per-architecture facts the source rules ask about, from the Arch record (specs/records.py).
    independent_thread_scheduling: bool
    native_32bit_integer_multiply: bool


class MeasuredContext(NamedTuple):
    """One profiled launch (advisor/measured.py): the engine's figures beside the report's."""
    measured: object  # a Measured: the launch, the engine's result, the disagreements
    shape: object  # its LaunchShape, or None when the engine says nothing fits
    minimum: float | None = None  # the lint config's min_achieved_occupancy (a fraction)


class SourceLine(NamedTuple):
    """One line of CUDA source, comments and string/character literals blanked, and every
    architecture the file is built for: a rule flags what breaks or slows on any of them."""

    code: str
    targets: tuple[SourceTarget, ...]
    file_has_syncwarp: bool  # the file calls __syncwarp somewhere
    uniform: tuple[tuple[int, int], ...] = ()  # index ranges of `code` every lane of a warp reaches (warp_uniform.py)

    def targets_with(self, fact: str) -> list[str]:
        """The targets where `fact` (a SourceTarget flag, such as 'independent_thread_scheduling')
        holds: where a rule's concern begins."""
        return [target.sm for target in self.targets if getattr(target, fact)]


def _kind_of(context: type) -> str:
    from ..engine.occupancy import Occupancy

    kinds = {Occupancy: "config", LaunchContext: "config", LintContext: "lint", SourceLine: "source",
             MeasuredContext: "measured"}
    if context not in kinds:
        raise TypeError(f"a check's first parameter must be annotated with one of "
                        f"{', '.join(t.__name__ for t in kinds)}, not {context!r}")
    return kinds[context]


def _first_parameter_type(check: Callable) -> type | None:
    """The type the check's first parameter is annotated with. A plain name (all the families
    write) is looked up in the check's module, as get_type_hints would evaluate it, without
    compiling the annotation: every command's start-up builds the registry."""
    annotation = check.__annotations__.get(check.__code__.co_varnames[0])
    if isinstance(annotation, str) and annotation.isidentifier() and annotation in check.__globals__:
        return check.__globals__[annotation]
    return get_type_hints(check).get(check.__code__.co_varnames[0])


def rule(*, code: str, name: str, severity: str, summary: str, explanation: str, source: str,
         trigger: dict, clean: dict, params: dict | None = None,
         on_measured_launch: bool = True, machine_code: Callable | None = None,
         cap_built: Callable | None = None, per_run: Callable | None = None,
         related: tuple[str, str] | None = None, fix_title: str | None = None,
         needs: tuple[str, ...] = ()) -> Callable[[Callable], Rule]:
    """Decorate a check: the module attribute becomes the Rule, holding the check."""
    if severity not in SEVERITIES:
        raise ValueError(f"{code}: severity must be one of {', '.join(SEVERITIES)}")

    def make(check: Callable) -> Rule:
        context = _first_parameter_type(check)
        return Rule(code=code, name=name, kind=_kind_of(context), severity=severity, summary=summary,
                    explanation=" ".join(explanation.split()), source=source,
                    params=MappingProxyType(dict(params or {})), trigger=trigger, clean=clean, check=check,
                    context=context, on_measured_launch=on_measured_launch, machine_code=machine_code,
                    cap_built=cap_built, per_run=per_run, related=related, fix_title=fix_title, needs=needs)

    return make


# -- the registry ---------------------------------------------------------------

@lru_cache(maxsize=1)
def registry() -> dict[str, Rule]:
    """Every rule by code, in code order: the Rule objects of the modules in families/."""
    from . import families

    found: dict[str, Rule] = {}
    for name in _family_modules(families.__path__):
        loaded = __import__(f"{families.__name__}.{name}", fromlist=[name])
        for value in vars(loaded).values():
            if isinstance(value, Rule):
                other = found.setdefault(value.code, value)
                if other is not value:
                    raise RuntimeError(f"rule code {value.code} is defined twice ({other.name}, {value.name})")
    return dict(sorted(found.items()))


def _family_modules(paths) -> list[str]:
    """The modules of the families package (its .py files; the folder is a plain package, so this
    is what pkgutil.iter_modules lists, without importing pkgutil on every start-up)."""
    return sorted({name[:-3] for path in paths for name in os.listdir(path)
                   if name.endswith(".py") and name[:-3].isidentifier() and name != "__init__.py"})


def lookup(code_or_name: str) -> Rule | None:
    rules = registry()
    key = code_or_name.strip()
    if key.upper() in rules:
        return rules[key.upper()]
    name = key.lower().replace("_", "-")  # a JSON spelling (virtual_resources) names the rule too
    return next((r for r in rules.values() if r.name == name), None)


class RuleSelection(NamedTuple):
    """ruff-style --select/--ignore: codes or prefixes ("TA1", "TA106"), for every kind of rule."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    @classmethod
    def parse(cls, select: str | None, ignore: str | None) -> "RuleSelection":
        def split(text, option):
            items = tuple(p.strip().upper() for p in (text or "").split(",") if p.strip())
            known = registry()
            for item in items:
                if not any(code.startswith(item) for code in known):
                    raise ValueError(f"{option}: '{item}' matches no rule code (see 'tuneadvise rules')")
            return items

        return cls(split(select, "--select"), split(ignore, "--ignore"))

    def allows(self, code: str) -> bool:
        if self.select and not any(code.startswith(p) for p in self.select):
            return False
        return not any(code.startswith(p) for p in self.ignore)


@lru_cache(maxsize=64)
def selected(selection: RuleSelection, kind: str) -> tuple[Rule, ...]:
    """The rules of `kind` the selection allows, in code order: decided once per selection, not per
    kernel or line."""
    return tuple(r for code, r in registry().items() if r.kind == kind and selection.allows(code))


def source_rules(selection: RuleSelection | None = None) -> tuple[Rule, ...]:
    return selected(selection or RuleSelection(), "source")


# -- running them -----------------------------------------------------------------

def finding_order(finding: Finding) -> tuple:
    """Sort key: the most severe first, then by code."""
    return -SEVERITY_RANK[finding.severity], finding.code


def finding_of(rule: Rule, message: str, arch: str, details: dict, severity: str | None = None) -> Finding:
    """The Finding of `rule` with this message and details on `arch` (at the rule's severity,
    unless the check lowered it)."""
    return Finding(code=rule.code, severity=severity or rule.severity, message=message, arch=arch, details=details,
                   source=rule.source)


def _collect(findings: list, rule: Rule, subject, arch: str) -> None:
    """Run one rule's check on its context, appending its findings. (A plain loop, not a generator
    of Findings: this runs for every rule of every distinct kernel a lint sees.)"""
    for message, details, *severity in rule.check(subject, rule.params):
        findings.append(finding_of(rule, message, arch, details, *severity))


def check_occupancy(resolved, result: "Occupancy", selection: RuleSelection | None = None) -> list[Finding]:
    """Run every selected config rule against one occupancy result and its LaunchConfig (launch
    context included: grid, cluster, spills); the findings in finding_order."""
    findings = config_findings(resolved, result, selection or RuleSelection())
    findings.sort(key=finding_order)
    return findings


def with_machine_code(findings: tuple, sass) -> tuple:
    """A kernel's findings with what its machine code says, each rule's own words (Rule.machine_code),
    and each proposed change's verdict weighed against it (advice/evidence_machine_code.py):
    copies, per kernel, of findings kernels with equal figures share."""
    if sass is None or not findings:
        return findings
    from ..advice.evidence_machine_code import of_finding

    rules, out = registry(), []
    for finding in findings:
        if "verdict" in finding.details:  # the change it proposes, weighed against what the code shows
            finding = with_evidence(finding, of_finding(finding.details, sass))
        addendum = rules[finding.code].machine_code
        added = addendum(sass) if addendum is not None else None
        if added is not None:
            words, details = added
            finding = finding._replace(message=f"{finding.message}; {words}", details={**finding.details, **details})
        out.append(finding)
    return tuple(out)


def with_cap_built(finding: Finding, at_cap: dict) -> Finding:
    """`finding` with what its rule says of the register change it suggests, built (Rule.cap_built)."""
    words, details = registry()[finding.code].cap_built(at_cap)
    return finding._replace(message=f"{finding.message}; {words}", details={**finding.details, **details})


def said_per_run(finding: Finding) -> bool:
    """Whether `finding` is said once for the run (Rule.per_run), not on its kernel."""
    return registry()[finding.code].per_run is not None


def run_findings(tally: dict[tuple[str, tuple], int]) -> list[Finding]:
    """The findings said once for the run: `tally` counts the kernels by (code, details as sorted
    items, lists as tuples) of their findings of a per-run rule (said_per_run)."""
    by_code: dict[str, list[tuple[dict, int]]] = {}
    for (code, items), count in sorted(tally.items()):
        by_code.setdefault(code, []).append((dict(items), count))
    rules, findings = registry(), []
    for code, seen in by_code.items():
        message, details = rules[code].per_run(seen)
        findings.append(finding_of(rules[code], message, "", details))
    return findings


def config_findings(resolved, result: "Occupancy", selection: RuleSelection, measured: bool = False,
                    active_clusters: int | None = None) -> list[Finding]:
    """check_occupancy's findings in no particular order, for a caller that adds its own and sorts once.
    `measured`: the result is a profiled launch's, and only the rules that apply to one run;
    `active_clusters`: resident clusters where a profile measured them. (The checks run inline,
    not through _collect: this runs for every line of a batch.)"""
    findings, launch, arch = [], None, result.arch.sm
    present = (bool(result.errors), *map(bool, _needed_fields()(result.kernel)))
    for rule, takes_launch in _config_plan(selection, measured, present):
        subject = result
        if takes_launch:
            subject = launch = launch or LaunchContext.of(resolved, result, active_clusters)
        for message, details, *severity in rule.check(subject, rule.params):
            findings.append(finding_of(rule, message, arch, details, *severity))
    return findings


NEEDS_ERRORS = "errors"  # Rule.needs: the engine names a launch error


@lru_cache(maxsize=1)
def _needed_field_names() -> tuple[str, ...]:
    """The LaunchConfig fields some config rule needs (Rule.needs)."""
    return tuple(sorted({name for rule in registry().values() if rule.kind == "config"
                         for name in rule.needs if name != NEEDS_ERRORS}))


@lru_cache(maxsize=1)
def _needed_fields() -> Callable:
    """_needed_field_names' values of a LaunchConfig, in one call."""
    names = _needed_field_names()
    return attrgetter(*names, *names[:1])  # one name more: a tuple even where one field is needed


@lru_cache(maxsize=1024)
def _config_plan(selection: RuleSelection, measured: bool, present: tuple[bool, ...]) -> tuple[tuple[Rule, bool], ...]:
    """The config rules to run on a result: those the selection allows (on a profiled launch, those that
    apply to one) whose needs are `present` (a launch error, then whether each _needed_field_names
    field is set), each with whether it reads the LaunchContext rather than the occupancy result
    alone. Decided once per selection and set of inputs, not per line."""
    from ..engine.occupancy import Occupancy

    have = {name for name, there in zip((NEEDS_ERRORS, *_needed_field_names()), present) if there}
    return tuple((rule, rule.context is not Occupancy) for rule in selected(selection, "config")
                 if (rule.on_measured_launch or not measured) and have.issuperset(rule.needs))


def measured_findings(context: MeasuredContext, selection: RuleSelection) -> list[Finding]:
    """The findings on one profiled launch (TA0xx), in no particular order."""
    findings, arch = [], context.measured.arch.sm
    for rule in selected(selection, "measured"):
        _collect(findings, rule, context, arch)
    return findings


def lint_findings(context: LintContext, selection: RuleSelection) -> list[Finding]:
    """Lint's own findings (TA9xx) for one kernel, in no particular order."""
    findings, arch = [], context.result.arch.sm
    for rule in selected(selection, "lint"):
        _collect(findings, rule, context, arch)
    return findings


def with_evidence(finding: Finding, more, note: str = "") -> Finding:
    """`finding` (a rule's Finding) with `more` evidence weighed into its verdict: its details'
    verdict recombined and the message's verdict clause rewritten at its end, after `note` (a
    clause beginning with '; '). A finding without a verdict gains only the note, at its end."""
    from ..advice.verdict import combine, verdict_of

    old = verdict_of(finding.details)
    clause = "; " + old.text() if old is not None else ""
    if old is None or clause not in finding.message:
        return finding._replace(message=finding.message + note) if note else finding
    new = combine((*old.evidence, *more))
    message = f"{finding.message.replace(clause, '', 1)}{note}; {new.text()}"  # the verdict closes the message
    return finding._replace(message=message, details=_reweighed(finding.details, new.to_dict()))


def _reweighed(details: dict, verdict: dict) -> dict:
    """`details` with `verdict` for the change it proposes: in `verdict`, and in each step it lists
    (TA302's `next_step`, TA301's `next_steps`) that carried the same verdict, being the same change."""
    old = details["verdict"]

    def step(entry):
        return {**entry, "verdict": verdict} if isinstance(entry, dict) and entry.get("verdict") == old else entry

    out = {**details, "verdict": verdict}
    if "next_step" in out:
        out["next_step"] = step(out["next_step"])
    if isinstance(out.get("next_steps"), list):
        out["next_steps"] = [step(entry) for entry in out["next_steps"]]
    return out


def same_register_step(finding: Finding, proposer: Finding) -> bool:
    """Whether `finding` is TA302 naming, as its next step, the register step whose change the TA301
    finding `proposer` proposes: one change both judge, so evidence about it (a build at the cap)
    weighs into both verdicts."""
    if finding.code != "TA302" or proposer.code != "TA301":
        return False
    step = next((s for s in proposer.details.get("next_steps", ()) if s["resource"] == "registers"), None)
    return step is not None and (finding.details.get("next_step") or {}).get("value") == step["value"]
