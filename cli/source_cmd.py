"""`tuneadvise check-source`: scan .cu/.cuh files for code the tuning guides warn about."""

from __future__ import annotations

import click

from ..advisor.report import SCHEMA_VERSION
from ..advisor.text import write_json_line
from .common import EXIT_FINDINGS, EXIT_OK, BadInput, choose_format


@click.command("check-source")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--target", "-t", required=True, help="The oldest architecture the code is built for: sm_70, 7.0, volta...")
@click.option("--select", help="Only these codes or prefixes.")
@click.option("--ignore", help="Drop these codes or prefixes.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default="error", show_default=True)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]))
@click.pass_context
def check_source(ctx, paths, target, select, ignore, fail_on, fmt):
    """Legacy warp intrinsics, implicit warp-synchronous code (7.0+) and __mul24 (2.0+), by file:line.

    Exit codes: 0 clean; 1 findings at or above --fail-on; 2 bad input.
    """
    from ..advisor.rules import SEVERITY_RANK, RuleSelection
    from ..advisor.rules.source_scan import scan_source
    from ..specs.files import MAX_SOURCE_BYTES, read_bounded
    from .common import resolve_arch

    arch = resolve_arch(target).arch
    try:
        selection = RuleSelection.parse(select, ignore)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    findings = []
    for path in paths:
        try:
            text = read_bounded(path, MAX_SOURCE_BYTES).decode("utf-8", errors="replace")
        except OSError as exc:
            raise BadInput(f"PATHS: cannot read {path}: {exc.strerror}") from None
        findings += scan_source(text, path, arch.major, selection)
    if choose_format(fmt) == "json":
        write_json_line({"schema_version": SCHEMA_VERSION, "target": arch.sm, "findings": [f.to_dict() for f in findings]})
    else:
        from ..advisor.text import plural, terminal_text

        # Compiler-style lines, one per finding, never wrapped (editors jump to file:line), written
        # as they are (laid out by rich, 125,000 of them took 2.2 s and 322 MB), control characters
        # of a path escaped as in every human output.
        lines = [terminal_text(f"{f.message} [{f.code} {f.severity}]") for f in findings]
        lines.append(f"{plural(len(findings), 'finding')} in {plural(len(paths), 'file')} for {arch.sm}")
        click.echo("\n".join(lines), color=False)
    worst = max((SEVERITY_RANK[f.severity] for f in findings), default=-1)
    ctx.exit(EXIT_FINDINGS if worst >= SEVERITY_RANK[fail_on] else EXIT_OK)
