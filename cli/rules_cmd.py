"""`tuneadvise rules` and `tuneadvise explain CODE`."""

from __future__ import annotations

import click

from .common import choose_format, console, emit, rule_selection
from .options import complete_rule, select_option


@click.command()
@click.option("--severity", type=click.Choice(["error", "warning", "info"]), help="Only rules of this severity.")
@select_option(help="Codes or prefixes to list (comma-separated).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]))
def rules(severity, select, fmt):
    """List the rules: code, name, severity, summary and source."""
    from ..advisor.queries.rules import rules_query

    answer = rules_query(rule_selection(select, None), severity)
    emit(choose_format(fmt), answer.to_json(), lambda: _render_rules(answer.rules))


def _render_rules(chosen) -> None:
    from rich.table import Table

    from ..advisor.text import markup_text

    table = Table(title="Rules")
    # Codes, names and severities are what a reader types back (--select, explain): never cut or
    # wrapped; the summary takes the rest of the width and wraps between words.
    for column, values in (("Code", [r.code for r in chosen]), ("Name", [r.name for r in chosen]),
                           ("Severity", [r.severity for r in chosen])):
        table.add_column(column, no_wrap=True, min_width=max(map(len, values), default=0))
    table.add_column("Summary", overflow="fold")
    for r in chosen:
        table.add_row(r.code, markup_text(r.name), r.severity, markup_text(r.summary))
    console().print(table)


def _paragraph(text: str, width: int) -> str:
    """`text` wrapped between words (never inside one, nor at a hyphen)."""
    from .layout import wrap

    return "\n".join(wrap(text, width, whole_words=True))


def _command(line: str, width: int) -> str:
    """A shell command wrapped between words, each continued line ending in ` \\`, so it still
    runs when pasted."""
    from .layout import wrap

    return " \\\n".join(wrap(line, width - 2, "  ", "      ", whole_words=True))


def _example(example: dict, width: int) -> str:
    from ..advisor.rules.markdown import example_command
    from ..advisor.text import clip

    lines = []
    for line in example_command(example).splitlines():
        if line.startswith("tuneadvise "):
            lines.append(_command(line, width))
        else:  # a file's lines (a log, a config) as written: clipped where longer than the width
            lines.append("  " + (line if len(line) <= width - 2 else clip(line, width - 2)))
    return "\n".join(lines)


@click.command()
@click.argument("code", shell_complete=complete_rule)
def explain(code):
    """The full explanation of one rule, by code (TA106) or name, with an example that triggers it
    and one that does not."""
    from ..advisor.queries.rules import explain_query

    _render_explanation(explain_query(code))  # text only: `rules --format json` holds the rules' documents


def _render_explanation(rule) -> None:
    from ..specs.catalog import describe_source
    from .common import output_width

    width = output_width()
    click.echo("\n\n".join([
        f"{rule.code} {rule.name} ({rule.severity})",
        _paragraph(f"{rule.summary}.", width),
        _paragraph(rule.explanation, width),
        _paragraph(f"Source: {describe_source(rule.source)}", width),
        "Triggers:\n" + _example(rule.trigger, width),
        "Does not trigger:\n" + _example(rule.clean, width),
    ]))
