"""Human text of a lint document: by kernel, the worst first, with the numbers
and the change each finding suggests, then a summary.

Plain text that reads at 80 columns (or the terminal's width): lines wrap
between words, a kernel name is never cut, figures are right-aligned; colour
only on a terminal and never under NO_COLOR, in rich's styles (cli/common.py).
Streamed like every format.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

from ..advisor.text import plural
from .common import colour_allowed, output_width, stdout_is_terminal, styled, text_width
from .layout import wrap

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan", "bold": "bold", "dim": "dim",
          "passed": "bold green", "failed": "bold red"}


def render_lint(doc, terminal: bool | None = None, verbose: bool = False) -> Iterator[str]:
    """The report as text chunks. `terminal`: style for a terminal (default: whether stdout is one);
    `verbose`: each kernel's instruction summary too, where its machine code was read. The
    kernels listed are the document's (`listed`: under --select, those with a finding)."""
    from ..advisor.text import terminal_text

    if terminal is None:
        terminal = stdout_is_terminal() and sys.stdout is sys.__stdout__
    colour = colour_allowed(terminal)
    width = text_width(terminal)

    def style(text: str, name: str) -> str:
        return styled(text, _STYLE[name]) if colour else text

    wrapped: dict = {}  # (severity, code, message) -> its lines: kernels share findings, so wrap each once

    def finding_lines(finding: dict) -> str:
        key = (finding["severity"], finding["code"], finding["message"], finding.get("baseline"))
        text = wrapped.get(key)
        if text is None:
            head = f"  {finding['severity']:<7} {finding['code']} "
            status = f" ({finding['baseline']})" if finding.get("baseline") else ""
            # whole words: a source finding starts with its file:line, which editors jump to
            lines = wrap(terminal_text(finding["message"]) + status, width, head, " " * len(head), whole_words=True)
            lines[0] = "  " + style(f"{finding['severity']:<7}", finding["severity"]) + lines[0][9:]
            text = wrapped[key] = "\n".join(lines) + "\n"
        return text

    for kernel in doc.listed():
        out = [style(line, "bold") for line in _heading(kernel, width)] + _kernel_lines(kernel, width)
        if verbose and kernel.get("sass"):
            out += wrap(instruction_summary(kernel["sass"]["instructions"]), width, "  ", "    ")
        yield "\n".join(out) + "\n" + "".join(finding_lines(f) for f in kernel["findings"]) + "\n"
    for finding in doc.tail["source_findings"]:
        yield finding_lines(finding)
    yield from _summary(doc.summary, width, style)


def _measured_line(measured: dict, launch: dict) -> str:
    """A profiled launch's report figures, beside the engine's line above."""
    def share(value):
        return "-" if value is None else f"{value:.1%}"

    grid = "x".join(map(str, measured["grid_dims"]))
    waves = "-" if measured["waves_per_sm"] is None else f"{measured['waves_per_sm']:g}"
    return (f"measured: achieved {share(measured['achieved_occupancy'])} of theoretical "
            f"{share(measured['theoretical_occupancy'])}, grid {grid}, {waves} waves/SM, the driver's shared "
            f"memory configuration {measured['shared_mem_config_size']:,} B; {measured['process']}, "
            f"launch {measured['launch_index']}{_throughput(measured.get('throughput'))}")


def _throughput(throughput: dict | None) -> str:
    """The Speed Of Light figures, where the export has them."""
    if not throughput or throughput["compute_pct"] is None or throughput["memory_pct"] is None:
        return ""
    return f"; compute {throughput['compute_pct']:g}% and memory {throughput['memory_pct']:g}% of peak"
_CLASS_WORDS = (("fp32", "FP32"), ("fp16", "FP16"), ("fp64", "FP64"), ("tensor", "tensor-core"),
                 ("integer", "integer"))
_OTHER_WORDS = (("barriers", "barriers"), ("shuffles", "warp shuffles"), ("atomics", "atomics"),
                ("async_copies", "async copies"))


def instruction_summary(instructions: dict) -> str:
    """A kernel's instruction counts in one sentence: math by class, loads and stores by space
    with their widths (count x bytes per thread), then barriers, shuffles, atomics and async copies."""
    math = ", ".join(f"{instructions.get(key, 0)} {words}" for key, words in _CLASS_WORDS)
    parts = [f"instructions: math {math}"]
    for direction in ("loads", "stores"):
        spaces = instructions.get(direction) or {}
        listed = "; ".join(f"{space} " + " + ".join(f"{count} x {width} B" for width, count in
                                                    sorted(widths.items(), key=lambda item: int(item[0])))
                           for space, widths in spaces.items())
        parts.append(f"{direction} {listed or 'none'}")
    parts.append(", ".join(f"{instructions.get(key, 0)} {words}" for key, words in _OTHER_WORDS))
    return "; ".join(parts)


def _heading(kernel: dict, width: int) -> list[str]:
    from ..advisor.text import terminal_text

    return wrap(terminal_text(kernel["demangled"]) + f" [{kernel['arch']}]", width, "", "    ")


def _kernel_lines(kernel: dict, width: int) -> list[str]:
    """Where a kernel is (its variant, its file:line) and its figures, under its name."""
    from ..advisor.text import terminal_text

    occ, where, launch = kernel["occupancy"], kernel["location"], kernel["launch"]
    place = f"{where['file']}:{where['line']}" if where["line"] else where["file"] or ""
    out = []
    site = launch.get("site")
    if site and launch["from"] == "host code":  # the launch checked (a variant of several names it too)
        chosen = f"; block from {site['block_from']}, as `suggest` answers it" if site["block_from"] else ""
        out += wrap(terminal_text(f"{site['file']}:{site['line']}:{site['column']} ({site['api']}){chosen}"), width,
                    "  launched at ", "    ", whole_words=True)
    elif kernel.get("variant"):  # a cache entry's configuration: the variants of one kernel differ here
        out += wrap(terminal_text(kernel["variant"]), width, "  config ", "    ")
    if place:
        out += wrap(terminal_text(place), width, "  at ", "    ", whole_words=True)
    block = "x".join(map(str, launch["block_dims"]))
    if launch["dynamic_shared_mem"]:
        block += f", {launch['dynamic_shared_mem']} B dynamic shared memory" + (" (opted in)" if launch["opt_in"] else "")
    if launch["cluster_size"]:
        block += f", clusters of {launch['cluster_size']}"
    figures = (f"{kernel['registers']} registers, {kernel['shared_mem']} B static shared memory, "
               + ", ".join(f"{'-' if kernel[k] is None else kernel[k]} B {words}"
                           for k, words in (("spill_stores", "spill stores"), ("spill_loads", "spill loads"),
                                            ("stack_frame", "stack frame")))
               + f"; block {block}: {plural(occ['active_blocks_per_sm'], 'block')}/SM, occupancy {occ['occupancy']:.1%}"
               + (f" ({' + '.join(occ['limiters'])})" if occ["limiters"] else "")
               + ("" if occ["launchable"] else " cannot launch"))
    out += wrap(figures, width, "  ", "    ")
    if "measured" in kernel:
        out += wrap(terminal_text(_measured_line(kernel["measured"], launch)), width, "  ", "    ")
    return out


def _summary(summary: dict, width: int, style) -> Iterator[str]:
    rows = [("kernels x architectures", summary["kernels"])]
    rows += [(f"{severity} findings", summary["by_severity"][severity]) for severity in summary["by_severity"]]
    rows.append((f"failing (at or above {summary['fail_on']})", summary["failing_findings"]))
    if "baseline" in summary:
        base = summary["baseline"]
        rows += [("new since the baseline", base["new"]), ("worse than the baseline", base["worse"]),
                 ("accepted by the baseline", base["baselined"])]
    label_width = max(len(label) for label, _ in rows)
    number_width = max(len(str(n)) for _, n in rows)
    text = "".join(f"{label:<{label_width}}  {n:>{number_width}}\n" for label, n in rows)
    notes = []
    if summary["config"]:
        notes.append(("config", summary["config"]))
    notes += [("warning", w) for w in summary["warnings"]]
    notes += [("skipped", s) for s in summary["skipped"]]
    notes += [("PTX only", s) for s in summary["ptx_only_archs"]]
    if "baseline" in summary:
        notes += [("lost occupancy", s) for s in summary["baseline"]["lost_occupancy"]]
        notes += [("improved", s) for s in summary["baseline"]["improved"]]
    for label, sentence in notes:
        text += "\n".join(wrap(sentence, width, f"{label}: ", "    ", whole_words=True)) + "\n"  # paths whole
    verdict = "passed" if summary["passed"] else "failed"
    yield text + style(verdict, verdict) + "\n"


def render_statistics(document: dict) -> str:
    """`lint --statistics` as text: one line per code, the count right-aligned, the rule's name
    wrapped under itself."""
    rows = document["statistics"]
    width = max((len(str(row["count"])) for row in rows), default=1)
    head = [f"{row['count']:>{width}}  {row['code']}  {row['severity']:<7}  " for row in rows]
    return "".join("\n".join(wrap(row["name"], output_width(), first, " " * (width + 2))) + "\n"
                   for first, row in zip(head, rows))


def render_diff(doc) -> str:
    """The changed kernels, one row each in lines that wrap between words at the output's width,
    then the counts."""
    from ..advisor.text import terminal_text

    width = output_width()
    out = []
    for r in doc.listed():
        out += wrap(f"{terminal_text(r['demangled'])} [{r['arch']}]: {'; '.join(r['changes']) or '-'}", width,
                    f"{r['status']:<10} ", " " * 11)
    return "\n".join(out + wrap(doc.summary_text(), width)) + "\n"
