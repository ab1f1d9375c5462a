"""`tuneadvise specs`: list architectures, show one with its sources, validate a spec file."""

from __future__ import annotations

import re

import click

from .common import choose_format, console, emit, resolved_arch
from .options import complete_release, format_option
from .params import FilePath


def _releases_text(names: list[str]) -> str:
    """['12.8', '12.6', ..., '12.0'] -> '12.0 to 12.8' where they follow one another among the
    releases known, else '13.0, 12.9' as given."""
    from ..specs.releases import releases

    known = list(releases())
    places = sorted(known.index(name) for name in names)
    if len(names) > 2 and places == list(range(places[0], places[-1] + 1)):
        return f"{known[places[-1]]} to {known[places[0]]}"
    return ", ".join(names)


def _readable(ref: str, citation: str) -> str:
    """A citation for the terminal: a section anchor (technical-specifications-per-compute-capability)
    as words, so that it wraps between them; --format json keeps the anchor as written."""
    section = ref.partition("#")[2]
    if section and re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)+", section) and citation.endswith(section):
        return citation[: -len(section)] + section.replace("-", " ")
    return citation


@click.group(invoke_without_command=True)
@format_option()
@click.pass_context
def specs(ctx, fmt):
    """List architectures and products; `specs show ARCH` prints one with sources."""
    if ctx.invoked_subcommand is not None:
        return
    from ..advisor.queries.specs import catalog_query

    answer = catalog_query()
    emit(choose_format(fmt), answer.to_json(), lambda: _render_catalog(answer))


def _render_catalog(answer) -> None:
    from rich.table import Table

    from ..advisor.text import markup_text

    table = Table(title="Architectures")
    # Names users type never wrap or get cut; headers wrap between words; numbers right-aligned.
    for column in ("CC", "Target", "Family"):
        table.add_column(column, no_wrap=True)
    for column in ("Max warps /SM", "Max blocks /SM", "Regs /SM", "Shared /SM", "Opt-in /block"):
        table.add_column(column, justify="right")
    for a in answer.archs:
        table.add_row(a.cc, a.sm, markup_text(a.family), str(a.max_warps_per_sm), str(a.max_blocks_per_sm),
                      f"{a.registers_per_sm:,}", f"{a.shared_mem_per_sm:,}", f"{a.shared_mem_per_block_optin:,}")
    out = console()
    out.print(table)
    products = Table(title="Products")
    products.add_column("Name", no_wrap=True)
    products.add_column("Product")
    products.add_column("CC", no_wrap=True)
    for column in ("SMs", "Boost MHz", "DRAM GB/s", "FP32 TFLOP/s"):
        products.add_column(column, justify="right")
    for p in answer.products:
        products.add_row(markup_text(p.name), markup_text(p.title), p.cc, str(p.get("sm_count")), str(p.get("boost_clock_mhz")),
                         str(p.get("memory_bandwidth_gbs")), str(p.get("fp32_tflops")))
    out.print(products)


@specs.command("show")
@click.argument("arch")
@click.option("--spec-file", type=FilePath(dir_okay=False), help="Show an architecture from your own spec file.")
@click.option("--cuda", metavar="RELEASE", shell_complete=complete_release,
              help="Show the values as this cuda_occupancy.h release computes with them.")
@format_option()
def show(arch, spec_file, cuda, fmt):
    """One architecture: every value with its source (unconfirmed ones marked), where sources
    disagree, the cuda_occupancy.h release the engine is exact to and how other releases differ."""
    from ..advisor.queries.specs import spec_query

    document = spec_query(resolved_arch(arch, spec_file, cuda), resolved_arch(arch, spec_file))
    emit(choose_format(fmt), document, lambda: _render_spec(document))


def _render_spec(document: dict) -> None:
    from ..advisor.text import markup_text

    out = console()
    if document.get("arch_note"):
        out.print(f"[dim]{markup_text(document['arch_note'])}[/]")
    names = f"; also {', '.join(document['names'])}" if document["names"] else ""
    title = (f"{document['arch']} (compute capability {document['compute_capability']}, "
             f"{document['family']}{names})")
    _values_table(out, title, document["values"], unconfirmed=True)
    if any(item["unconfirmed"] for item in document["values"].values()):
        out.print("* unconfirmed: no primary source gives this value (see its source column for where it comes from)")
    for old in document["formerly"]:
        out.print(f"Formerly compute capability {old}: CUDA 13 renamed it to {document['compute_capability']}; "
                  f"sm_{old.replace('.', '')} is accepted as a name.")
    out.print(markup_text(f"Exact to {document['exact_to']}."))
    for line in _release_lines(document["release_differences"]):
        out.print(markup_text(line))
    if "product" in document:
        _values_table(out, document["product"]["title"], document["product"]["values"])
    for d in document["disagreements"] + document.get("product", {}).get("disagreements", []):
        listed = "; ".join(f"{v['value']:g} ({v['source']})" for v in d["values"])
        out.print(f"[yellow]Sources disagree on {markup_text(d['field'])}:[/] "
                  + markup_text(f"{listed}. Used: {d['used']:g}. {d['why']}"))


def _release_lines(differences: list) -> list[str]:
    from ..specs.releases import DEFAULT_RELEASE

    lines = []
    for d in differences:
        which = _releases_text(d["releases"])
        if d["field"] is None:
            lines.append(f"CUDA {which}: {d['why']}")
        else:
            lines.append(f"CUDA {which} {'differs' if len(d['releases']) == 1 else 'differ'}: {d['field']} = "
                         f"{d['value']} there, {d['value_here']} in CUDA {DEFAULT_RELEASE} ({d['function']}). {d['why']}")
    return lines


def _values_table(out, title: str, values: dict, unconfirmed: bool = False) -> None:
    """Field, value and source per row. Field names are typed (--format json keys, spec files) and
    citations name identifiers: neither is ever cut. Where the three do not fit side by side,
    each source goes on the lines under its field instead."""
    from rich.table import Table

    from ..advisor.text import markup_text

    rows = [((f"* {key}" if unconfirmed and item["unconfirmed"] else key), _value_text(item["value"]),
             _readable(item["source"], item["citation"])) for key, item in values.items()]
    field_width = max((len(field) for field, _, _ in rows), default=0)
    value_width = min(16, max((len(value) for _, value, _ in rows), default=0))
    word_width = max((len(word) for _, _, source in rows for word in source.split()), default=0)
    if field_width + value_width + word_width + 4 > out.width:
        _stacked(out, title, rows)
        return
    table = Table(title=markup_text(title))
    table.add_column("Field", no_wrap=True, min_width=field_width)
    table.add_column("Value", justify="right", max_width=16)
    table.add_column("Source", min_width=word_width)
    for field, value, source in rows:
        table.add_row(markup_text(field), markup_text(value), markup_text(source))
    out.print(table)


def _stacked(out, title: str, rows: list) -> None:
    """A values table too wide for the width: `field  value`, then its source indented below."""
    from .layout import wrap

    lines = wrap(title, out.width, "", "  ")
    for field, value, source in rows:
        lines += wrap(f"{field}  {value}", out.width, "", "      ")
        lines += wrap(source, out.width, "    ", "    ")
    for line in lines:
        out.print(line, markup=False, highlight=False)


def _value_text(value) -> str:
    """A spec value as the table shows it: numbers with thousands separators, a list (a GPC layout) item by item."""
    if isinstance(value, (list, tuple)):
        return ", ".join(_value_text(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, (int, float)):
        return str(value)
    return f"{value:,}"


@specs.command("validate")
@click.argument("path", type=FilePath(dir_okay=False))
def validate(path):
    """Validate a spec file (TOML or JSON); exit 2 with the first problem if it is invalid."""
    from pathlib import Path

    from ..specs.models import validate_family_document

    doc = validate_family_document(Path(path), field="")  # the file is the subject: no option to name
    click.echo(f"{path}: valid ({len(doc.get('arch', []))} architecture(s), {len(doc.get('product', []))} product(s))")
