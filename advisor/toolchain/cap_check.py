"""The register change TA301/TA304 suggest, built: where lint compiled the source, each
suggested cap is compiled as the advice says (with -maxrregcount for a kernel without
launch bounds, as `frontier` builds its caps; with the kernel's `__launch_bounds__` or
`__maxnreg__` changed in a copy of the source for one that has them, since ptxas ignores
the flag there) and the finding gains what ptxas reported at that cap: registers, spills
and stack frame, in the words of its rule (Rule.cap_built). A cap that spills
is never suggested without saying so.

The copy lives in a temporary directory and is built with the source's own directory
on the include path (-I), so its quoted includes resolve as the original's do.
"""

from __future__ import annotations

import os
import re
import tempfile

from ..advice.evidence_compiler import at_cap
from ..readers.cuda_source import close_paren
from ..rules import same_register_step, with_cap_built, with_evidence
from .compile import Build, Compiler

CHECKED = ("TA301", "TA304", "TA901")
_BOUNDS = re.compile(r"__launch_bounds__\s*\(")
_MAXNREG = re.compile(r"__maxnreg__\s*\(")


def _replaced(line: str, attribute: re.Pattern, written: str) -> str | None:
    """`line` with its first `attribute(...)` (nested parentheses included) replaced by `written`;
    None where the line holds no such attribute, or its parentheses do not close on the line."""
    match = attribute.search(line)
    if match is None:
        return None
    close = close_paren(line, match.end() - 1)
    if close == len(line):
        return None
    return line[:match.start()] + written + line[close + 1:]


def edited_source(text: str, line: int, change: dict) -> str | None:
    """`text` with the kernel whose `__global__` is on `line` (1-based) changed as `change` says;
    None when that line does not hold what is to change (an attribute written on another line)."""
    lines = text.split("\n")
    if not 0 < line <= len(lines):
        return None
    here = lines[line - 1]
    if change.get("via") == "__maxnreg__":
        edited = _replaced(here, _MAXNREG, f"__maxnreg__({change['maxnreg']})")
    else:
        bounds = "__launch_bounds__({}, {})".format(*change["launch_bounds"])
        edited = _replaced(here, _BOUNDS, bounds)
        if edited is None and not _BOUNDS.search(here) and "__global__" in here:
            edited = here.replace("__global__", f"__global__ {bounds}", 1)
    if edited is None:
        return None
    lines[line - 1] = edited
    return "\n".join(lines)


def _wanted(kernel, builds: dict) -> list[tuple[int, dict, Build]]:
    """(finding index, its change, the build that applies it) for each checked finding of `kernel`."""
    source = builds.get((kernel.usage.file, kernel.arch))
    if source is None:
        return []
    wanted = []
    for i, finding in enumerate(kernel.findings):
        change = finding.details.get("register_change") if finding.code in CHECKED else None
        if change is not None and change.get("maxrregcount") is not None:
            wanted.append((i, change, source._replace(max_registers=change["maxrregcount"])))
        elif change is not None and change.get("via") != "triton":
            wanted.append((i, change, None))  # an edited copy: made below, where the definition is known
    return wanted


def _text(path: str) -> str | None:
    from ...specs.files import source_text

    try:
        return source_text(path)
    except OSError:
        return None


def _copy_build(kernel, change: dict, source: Build, scratch: str) -> Build | None:
    text = _text(source.source)
    file, line = kernel.location
    if file != kernel.usage.file:
        return None  # defined in another file (a header) than the one built
    edited = edited_source(text, line, change) if text is not None and line else None
    if edited is None:
        return None
    name = os.path.join(scratch, f"{len(os.listdir(scratch))}_{os.path.basename(source.source)}")
    with open(name, "w", encoding="utf-8") as out:
        out.write(edited)
    include = ("-I", os.path.dirname(source.source) or ".")
    return source._replace(source=name, flags=(*include, *source.flags))


def check_caps(kernels: list, builds: dict, compiler) -> list:
    """`kernels` (LintedKernel) with each TA301/TA304 register change built and its figures in
    the finding, and TA302's verdict on TA301's step weighing the same build. `builds`: {(file as
    reported, arch): the Build that compiled it}."""
    todo = [(k, _wanted(k, builds)) for k in kernels]
    if not any(wanted for _, wanted in todo):
        return kernels
    with tempfile.TemporaryDirectory(prefix="tuneadvise-cap-") as scratch:
        planned = []
        for kernel, wanted in todo:
            source = builds.get((kernel.usage.file, kernel.arch))
            planned.append((kernel, [(i, change, build if build is not None else
                                      _copy_build(kernel, change, source, scratch))
                                     for i, change, build in wanted]))
        wanted_builds = dict.fromkeys(b for _, wanted in planned for _, _, b in wanted if b is not None)
        # A copy lives in a directory made for this run: its report could never be served again,
        # so copies are built without the disk cache; the flag builds share it, as frontier's do.
        copies = [b for b in wanted_builds if b.source.startswith(scratch)]
        results = compiler.run(b for b in wanted_builds if not b.source.startswith(scratch))
        if copies:
            uncached = Compiler(compiler.toolchain, compiler.settings._replace(cache=False))
            results += uncached.run(copies)
        by_build = {r.build: {u.name: u for u in r.usage()} for r in results}
    checked = []
    for kernel, wanted in planned:
        findings = list(kernel.findings)
        for i, _, build in wanted:
            usage = by_build.get(build, {}).get(kernel.name) if build is not None else None
            if usage is not None:
                figures = {"registers": usage.registers, "spill_stores": usage.spill_stores,
                           "spill_loads": usage.spill_loads, "stack_frame": usage.stack_frame}
                before = {"registers": kernel.usage.registers, "spill_stores": kernel.usage.spill_stores,
                          "spill_loads": kernel.usage.spill_loads}
                built = [at_cap(before, figures)]
                findings = [with_evidence(f, built) if same_register_step(f, findings[i]) else f for f in findings]
                findings[i] = with_evidence(with_cap_built(findings[i], figures), built)
        checked.append(kernel._replace(findings=tuple(findings)))
    return checked
