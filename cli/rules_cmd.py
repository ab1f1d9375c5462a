"""`tuneadvise rules` and `tuneadvise explain CODE`."""

from __future__ import annotations

import click

from tuneadvise.advisor.report import SCHEMA_VERSION
from tuneadvise.cli.common import BadInput, choose_format, console, emit_json


@click.command()
@click.option("--severity", type=click.Choice(["error", "warning", "info"]), help="Only rules of this severity.")
@click.option("--select", help="Codes or prefixes to list (comma-separated).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]))
def rules(severity, select, fmt):
    """List the rules: code, name, severity, summary and source."""
    from tuneadvise.advisor.rules import RuleSelection, registry

    try:
        selection = RuleSelection.parse(select, None)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    chosen = [r for r in registry().values() if selection.allows(r.code) and (not severity or r.severity == severity)]
    if choose_format(fmt) == "json":
        emit_json({"schema_version": SCHEMA_VERSION, "rules": [r.to_dict() for r in chosen]})
        return
    from rich.table import Table

    table = Table(title="Rules")
    for column in ("Code", "Name", "Severity", "Summary"):
        table.add_column(column)
    for r in chosen:
        table.add_row(r.code, r.name, r.severity, r.summary)
    console().print(table)


@click.command()
@click.argument("code")
def explain(code):
    """The full explanation of one rule, by code (TA106) or name."""
    from tuneadvise.advisor.rules import lookup
    from tuneadvise.specs.catalog import describe_source

    rule = lookup(code)
    if rule is None:
        raise BadInput(f"CODE: no rule '{code}' (see 'tuneadvise rules')")
    click.echo(f"{rule.code} {rule.name} ({rule.severity})\n\n{rule.summary}.\n\n{rule.explanation}\n\n"
               f"Source: {describe_source(rule.source)}")
