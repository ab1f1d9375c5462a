"""`tuneadvise rules` and `tuneadvise explain CODE`."""

from __future__ import annotations

import click

from ..advisor.report import SCHEMA_VERSION
from ..advisor.text import write_json_line
from .common import BadInput, choose_format, console


@click.command()
@click.option("--severity", type=click.Choice(["error", "warning", "info"]), help="Only rules of this severity.")
@click.option("--select", help="Codes or prefixes to list (comma-separated).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]))
def rules(severity, select, fmt):
    """List the rules: code, name, severity, summary and source."""
    from ..advisor.rules import RuleSelection, registry

    try:
        selection = RuleSelection.parse(select, None)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    chosen = [r for r in registry().values() if selection.allows(r.code) and (not severity or r.severity == severity)]
    if choose_format(fmt) == "json":
        write_json_line({"schema_version": SCHEMA_VERSION, "rules": [r.to_dict() for r in chosen]})
        return
    from rich.table import Table

    table = Table(title="Rules")
    # Codes, names and severities are what a reader types back (--select, explain): never cut or
    # wrapped; the summary takes the rest of the width and wraps between words.
    for column, values in (("Code", [r.code for r in chosen]), ("Name", [r.name for r in chosen]),
                           ("Severity", [r.severity for r in chosen])):
        table.add_column(column, no_wrap=True, min_width=max(map(len, values), default=0))
    table.add_column("Summary", overflow="fold")
    for r in chosen:
        table.add_row(r.code, r.name, r.severity, r.summary)
    console().print(table)


def _width() -> int:
    """The terminal's width (COLUMNS where set), 80 when there is none; at least 40."""
    import shutil

    return max(40, shutil.get_terminal_size((80, 24)).columns)


def _paragraph(text: str, width: int, indent: str = "") -> str:
    """`text` wrapped between words (never inside one, nor at a hyphen)."""
    import textwrap

    return textwrap.fill(text, width=width, initial_indent=indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False)


def _command(line: str, width: int) -> str:
    """A shell command wrapped between words, each continued line ending in ` \\`, so it still
    runs when pasted."""
    import textwrap

    parts = textwrap.wrap(line, width=width - 2, initial_indent="  ", subsequent_indent="      ",
                          break_long_words=False, break_on_hyphens=False)
    return " \\\n".join(parts)


def _example(example: dict, width: int) -> str:
    from ..advisor.rules.markdown import _example as render

    lines = []
    for line in render(example).splitlines():
        lines.append(_command(line, width) if line.startswith("tuneadvise ") else "  " + line)
    return "\n".join(lines)


@click.command()
@click.argument("code")
def explain(code):
    """The full explanation of one rule, by code (TA106) or name, with an example that triggers it
    and one that does not."""
    from ..advisor.rules import lookup
    from ..specs.catalog import describe_source

    rule = lookup(code)
    if rule is None:
        raise BadInput(f"CODE: no rule '{code}' (see 'tuneadvise rules')")
    width = _width()
    click.echo("\n\n".join([
        f"{rule.code} {rule.name} ({rule.severity})",
        _paragraph(f"{rule.summary}.", width),
        _paragraph(rule.explanation, width),
        _paragraph(f"Source: {describe_source(rule.source)}", width),
        "Triggers:\n" + _example(rule.trigger, width),
        "Does not trigger:\n" + _example(rule.clean, width),
    ]))
