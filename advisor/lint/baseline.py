"""A two-way ratchet for adopting lint on an existing code base.

The baseline records, per kernel and architecture, the resource figures and the
finding codes accepted today. Against it a finding is:

- `baselined`: accepted, and the kernel is no worse than recorded;
- `worse`: accepted, but the kernel now uses more registers, shared memory,
  spill stores or loads or stack frame, or reaches lower occupancy than recorded, so it counts again;
- `new`: not in the baseline; counts.

A kernel that reaches less theoretical occupancy than recorded (it lost a
resident block: more registers or shared memory) is a regression, which fails
the run whatever its findings' severities, unless regressions are allowed
(`lint --allow-regressions`).

Findings and kernels that improved on the baseline are reported so the
baseline can be tightened (`--update-baseline` rewrites it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ...specs.errors import InputError
from ...specs.files import loads_json, read_bounded
from ..text import clip, quoted

SCHEMA_VERSION = 1  # the baseline file's own layout, versioned apart from every command's output

# figure -> True when a larger value is worse
FIGURES = {"registers": True, "shared_mem": True, "spill_stores": True, "spill_loads": True, "stack_frame": True,
           "occupancy": False}


LOST_BLOCK = "TA908"  # registers-lost-a-block


class BaselineError(InputError):
    pass


def kernel_key(name: str, arch: str, variant: str | None = None) -> str:
    """A kernel's key in a baseline: a cache entry's variant keeps autotune variants of one kernel apart."""
    return f"{name}@{arch}" if variant is None else f"{name}@{arch} [{variant}]"


def figures_of(kernel) -> dict:
    """kernel: a LintedKernel."""
    launch = kernel.launch
    return {"registers": launch.registers, "shared_mem": launch.static_shared_mem + launch.dynamic_shared_mem,
            "spill_stores": launch.spill_stores, "spill_loads": launch.spill_loads, "stack_frame": launch.stack_frame,
            "occupancy": round(kernel.result.occupancy, 6)}


def file_text(baseline: dict) -> str:
    """A baseline as its file holds it: indented, keys sorted, so that a baseline under version
    control changes line by line."""
    return json.dumps(baseline, indent=1, sort_keys=True) + "\n"


def build(report) -> dict:
    kernels = {}
    for kernel in report.kernels:
        kernels[kernel_key(kernel.name, kernel.arch, kernel.usage.variant)] = dict(
            figures_of(kernel), findings=sorted({f.code for f in kernel.findings}))
    return {"schema_version": SCHEMA_VERSION, "kind": "tuneadvise-lint-baseline", "kernels": kernels}


def load(path) -> dict:
    try:
        data = loads_json(read_bounded(path))
    except OSError as exc:
        raise BaselineError(f"--baseline: cannot read {path}: {exc.strerror}") from None
    except (ValueError, RecursionError) as exc:  # JSON and UTF-8 errors, 4,300-digit integers, deep nesting
        raise BaselineError(f"--baseline: {path} is not JSON: {clip(exc, 200)}") from None
    if not isinstance(data, dict) or data.get("kind") != "tuneadvise-lint-baseline" \
            or not isinstance(data.get("kernels"), dict):
        raise BaselineError(f"--baseline: {path} is not a tuneadvise baseline (write one with --update-baseline)")
    for key, entry in data["kernels"].items():
        problem = _entry_problem(entry)
        if problem:
            raise BaselineError(f"--baseline: {path}: kernel {quoted(key, 80)}: {problem}")
    return data


def _entry_problem(entry) -> str | None:
    """What is wrong with a baseline's kernel entry (a hand edit), or None: it must be an object
    whose figures are non-negative integers (occupancy a fraction from 0 to 1) or null, and whose
    findings are rule codes, for the comparison to read."""
    if not isinstance(entry, dict):
        return f"expected an object of figures and findings, got {type(entry).__name__}"
    for figure in FIGURES:
        value = entry.get(figure)
        if value is None:
            continue
        if figure == "occupancy":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                return f"occupancy: expected a fraction from 0 to 1 or null, got {quoted(value, 40)}"
        elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f"{figure}: expected a whole number of 0 or more, or null, got {quoted(value, 40)}"
    findings = entry.get("findings", [])
    if not isinstance(findings, list) or not all(isinstance(code, str) for code in findings):
        return f"findings: expected a list of rule codes, got {quoted(findings, 40)}"
    return None


def recorded_registers(baseline: dict) -> dict[tuple[str, str], int]:
    """(name, arch) -> the registers per thread the baseline recorded: the earlier build TA908 compares with."""
    out = {}
    for key, recorded in baseline["kernels"].items():
        name, _, arch = key.rpartition("@")
        registers = recorded.get("registers") if isinstance(recorded, dict) else None
        if name and isinstance(registers, int) and not isinstance(registers, bool) and 0 <= registers <= 1024:
            out[(name, arch)] = registers
    return out


def changed_figures(recorded: dict, current: dict) -> list[tuple[str, object, object, bool]]:
    """(figure, recorded value, current value, whether it got worse) of each figure that changed; a
    figure unknown on either side is not compared."""
    changed = []
    for figure, larger_is_worse in FIGURES.items():
        old, new = recorded.get(figure), current.get(figure)
        if old is not None and new is not None and old != new:
            changed.append((figure, old, new, (new > old) == larger_is_worse))
    return changed


def change_text(figure: str, old, new) -> str:
    return f"{figure} {old} -> {new}"


def changes(changed: list) -> tuple[list[str], list[str]]:
    """("registers 32 -> 40", ...) sentences of changed_figures' answer: (worse, better)."""
    worse, better = [], []
    for figure, old, new, got_worse in changed:
        (worse if got_worse else better).append(change_text(figure, old, new))
    return worse, better


@dataclass
class Comparison:
    status: dict = field(default_factory=dict)  # (kernel key, code) -> "new" | "baselined" | "worse"
    worse: dict = field(default_factory=dict)  # kernel key -> ["registers 32 -> 40", ...]
    improved: list = field(default_factory=list)  # sentences
    # Kernel key -> "occupancy 1.0 -> 0.75": a kernel that reaches less occupancy than recorded (a lost
    # block, TA908 among them). A regression fails the run unless the caller allows regressions.
    lost_occupancy: dict = field(default_factory=dict)

    def status_of(self, kernel, code: str) -> str | None:
        """A kernel's finding against the baseline: "new", "worse" or "baselined"; None for a
        source finding (kernel None), which the baseline does not record."""
        if kernel is None:
            return None
        return self.status.get((kernel_key(kernel.name, kernel.arch, kernel.usage.variant), code), "new")


def compare(report, baseline: dict) -> Comparison:
    comparison = Comparison()
    recorded_kernels = baseline["kernels"]
    seen = set()
    for kernel in report.kernels:
        key = kernel_key(kernel.name, kernel.arch, kernel.usage.variant)
        seen.add(key)
        recorded = recorded_kernels.get(key)
        current = figures_of(kernel)
        changed = changed_figures(recorded, current) if recorded else []
        worse, better = changes(changed)
        if worse:
            comparison.worse[key] = worse
            comparison.lost_occupancy.update((key, change_text(figure, old, new)) for figure, old, new, got_worse
                                             in changed if figure == "occupancy" and got_worse)
        accepted = set(recorded.get("findings", [])) if recorded else set()
        codes = {f.code for f in kernel.findings}
        for code in codes:
            comparison.status[(key, code)] = "new" if code not in accepted else ("worse" if worse else "baselined")
        if recorded and not worse:  # a kernel that lost occupancy has not improved, whatever finding it lost
            fixed = sorted(accepted - codes)
            if fixed:
                comparison.improved.append(f"{key}: no longer {', '.join(fixed)}")
            if better:
                comparison.improved.append(f"{key}: {', '.join(better)}")
    for key in sorted(set(recorded_kernels) - seen):
        comparison.improved.append(f"{key}: not in this run (removed, or its build output not given)")
    return comparison
