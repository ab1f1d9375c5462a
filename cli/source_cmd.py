"""`tuneadvise check-source`: scan .cu/.cuh files for code the tuning guides warn about."""

from __future__ import annotations

import click

from .common import EXIT_FINDINGS, EXIT_OK, BadInput, choose_format, emit, rule_selection
from .options import format_option, ignore_option, select_option
from .params import FilePath, TargetList

FORMATS = ("table", "json", "sarif", "github")


@click.command("check-source")
@click.argument("paths", nargs=-1, required=True, type=FilePath(exists=True, dir_okay=False))
@click.option("--target", "-t", "targets", required=True, multiple=True, type=TargetList(),
              help="An architecture the code is built for (sm_70, 7.0, volta...); repeat for each, "
                   "or list them with commas: what breaks on any of them is flagged.")
@select_option()
@ignore_option()
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default="error", show_default=True)
@format_option(FORMATS, help="table (compiler-style lines), json, sarif (with suggested fixes) or github (annotations).")
@click.pass_context
def check_source(ctx, paths, targets, select, ignore, fail_on, fmt):
    """Legacy warp intrinsics, implicit warp-synchronous code (7.0+) and __mul24 (2.0+), by file:line:column.

    Exit codes: 0 clean; 1 findings at or above --fail-on; 2 bad input.
    """
    archs = [arch for each in targets for arch in each]
    if not archs:
        raise BadInput("--target: name the architectures the code is built for (sm_70, 9.0, hopper...)")
    doc = _document(paths, archs, rule_selection(select, ignore), fail_on)
    emit(choose_format(fmt, FORMATS), doc, lambda: _render(doc), _serializers())
    ctx.exit(EXIT_OK if doc.summary["passed"] else EXIT_FINDINGS)


def _document(paths, archs, selection, fail_on):
    from ..advisor.queries.check_source import check_source_query
    from .version import __version__

    return check_source_query(paths, archs, selection, fail_on, __version__)


def _serializers() -> dict:
    """check-source's machine formats, each written from the query's document: its own JSON shape
    (`whole()`), and lint's SARIF and GitHub writers, which it is shaped for."""
    from ..advisor.lint.formats import SERIALIZERS
    from ..advisor.text import json_line

    return {"json": lambda doc: [json_line(doc.whole()) + "\n"], "sarif": SERIALIZERS["sarif"],
            "github": SERIALIZERS["github"]}


def _render(doc) -> None:
    from ..advisor.text import plural, terminal_text

    # Compiler-style lines, one per finding, never wrapped (editors jump to file:line:column),
    # written as they are: a line needs no layout, and a scan may report a hundred thousand;
    # control characters of a path escaped as in every human output.
    lines = [terminal_text(f"{f['message']} [{f['code']} {f['severity']}]") for f in doc.tail["source_findings"]]
    lines.append(f"{plural(len(doc.tail['source_findings']), 'finding')} in {plural(doc.summary['files'], 'file')} "
                 f"for {', '.join(doc.head['targets'])}")
    click.echo("\n".join(lines), color=False)
