"""`tuneadvise specs`: list architectures, show one with its sources, validate a spec file."""

from __future__ import annotations

import re

import click

from ..advisor.report import SCHEMA_VERSION
from ..advisor.text import write_json_line
from .common import BadInput, choose_format, console, resolve_arch
from .options import complete_release


def _arch_document(arch, differences: list) -> dict:
    """`differences`: how the releases' headers differ for this architecture (releases.differences_of
    of the default release's Arch, whichever release `arch` follows)."""
    from ..specs.catalog import (
        ARCH_BEHAVIOUR_FIELDS,
        ARCH_INT_FIELDS,
        ARCH_OPTIONAL_FLAG_FIELDS,
        ARCH_OPTIONAL_INT_FIELDS,
        describe_source,
    )
    from ..specs.releases import release

    values = {}
    for key in ARCH_INT_FIELDS + ARCH_OPTIONAL_INT_FIELDS + ("shared_mem_configs",) + ARCH_OPTIONAL_FLAG_FIELDS \
            + ARCH_BEHAVIOUR_FIELDS:
        value = getattr(arch, key)
        if value is None or (key == "shared_mem_configs" and not value):
            continue
        ref = arch.source_of(key)
        values[key] = {"value": list(value) if isinstance(value, tuple) else value, "source": ref,
                       "citation": describe_source(ref), "provenance": arch.provenance(key),
                       "unconfirmed": ref.partition("#")[0] == "unconfirmed"}
    header = release(arch.cuda_release)
    return {
        "schema_version": SCHEMA_VERSION,
        "arch": arch.sm,
        "compute_capability": arch.cc,
        "family": arch.family,
        "names": list(arch.names),
        "formerly": list(arch.formerly),
        "cuda_release": arch.cuda_release,
        "exact_to": f"cuda_occupancy.h of CUDA {header.cuda} ({header.wheel}, {header.member})",
        "release_differences": differences,
        "shared_mem_model": arch.shared_mem_model,
        "values": values,
        "disagreements": [
            {"field": d.field, "values": [{"value": v, "source": s, "citation": describe_source(s)} for v, s in d.values],
             "used": d.used, "why": d.why}
            for d in arch.disagreements
        ],
        "origin": arch.origin,
    }


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
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), help="Default: table on a terminal, json otherwise.")
@click.pass_context
def specs(ctx, fmt):
    """List architectures and products; `specs show ARCH` prints one with sources."""
    if ctx.invoked_subcommand is not None:
        return
    from ..specs.catalog import shipped_catalog

    catalog = shipped_catalog()
    archs = catalog.sorted_archs()
    if choose_format(fmt) == "json":
        from ..specs.releases import DEFAULT_RELEASE

        write_json_line({
            "schema_version": SCHEMA_VERSION,
            "cuda_release": DEFAULT_RELEASE,
            "architectures": [{"arch": a.sm, "compute_capability": a.cc, "family": a.family, "names": list(a.names),
                               "cuda_occupancy_h": catalog.family_covered_by_header[a.family]} for a in archs],
            "families": {f: cc for f, (cc, _) in catalog.family_default.items()},
            "products": [{"name": p.name, "title": p.title, "compute_capability": p.cc, "names": list(p.names)}
                         for p in catalog.products.values()],
        })
        return
    from rich.table import Table

    table = Table(title="Architectures")
    # Names users type never wrap or get cut; headers wrap between words; numbers right-aligned.
    for column in ("CC", "Target", "Family"):
        table.add_column(column, no_wrap=True)
    for column in ("Max warps /SM", "Max blocks /SM", "Regs /SM", "Shared /SM", "Opt-in /block"):
        table.add_column(column, justify="right")
    for a in archs:
        table.add_row(a.cc, a.sm, a.family, str(a.max_warps_per_sm), str(a.max_blocks_per_sm), f"{a.registers_per_sm:,}",
                      f"{a.shared_mem_per_sm:,}", f"{a.shared_mem_per_block_optin:,}")
    out = console()
    out.print(table)
    products = Table(title="Products")
    products.add_column("Name", no_wrap=True)
    products.add_column("Product")
    products.add_column("CC", no_wrap=True)
    for column in ("SMs", "Boost MHz", "DRAM GB/s", "FP32 TFLOP/s"):
        products.add_column(column, justify="right")
    for p in catalog.products.values():
        products.add_row(p.name, p.title, p.cc, str(p.get("sm_count")), str(p.get("boost_clock_mhz")),
                         str(p.get("memory_bandwidth_gbs")), str(p.get("fp32_tflops")))
    out.print(products)


@specs.command("show")
@click.argument("arch")
@click.option("--spec-file", type=click.Path(dir_okay=False), help="Show an architecture from your own spec file.")
@click.option("--cuda", metavar="RELEASE", shell_complete=complete_release,
              help="Show the values as this cuda_occupancy.h release computes with them.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]))
def show(arch, spec_file, cuda, fmt):
    """One architecture: every value with its source (unconfirmed ones marked), where sources
    disagree, the cuda_occupancy.h release the engine is exact to and how other releases differ."""
    from ..specs.releases import differences_of

    resolved = resolve_arch(arch, spec_file, cuda)
    document = _arch_document(resolved.arch, differences_of(resolve_arch(arch, spec_file).arch))
    if resolved.product:
        from ..specs.catalog import describe_source

        p = resolved.product
        document["product"] = {"name": p.name, "title": p.title,
                               "values": {k: {"value": v, "source": p.sources[k], "citation": describe_source(p.sources[k])}
                                          for k, v in p.values.items()},
                               "disagreements": [{"field": d.field, "values": [{"value": v, "source": s} for v, s in d.values],
                                                  "used": d.used, "why": d.why} for d in p.disagreements]}
    if resolved.note:
        document["arch_note"] = resolved.note
    if choose_format(fmt) == "json":
        write_json_line(document)
        return
    from rich.table import Table

    out = console()
    if resolved.note:
        out.print(f"[dim]{resolved.note}[/]")
    names = f"; also {', '.join(document['names'])}" if document["names"] else ""
    table = Table(title=f"{document['arch']} (compute capability {document['compute_capability']}, "
                        f"{document['family']}{names})")
    # Field names are typed (--format json keys, spec files): never cut; values wrap between
    # list items; citations wrap between words.
    table.add_column("Field", no_wrap=True, min_width=max(map(len, document["values"])))
    table.add_column("Value", justify="right", max_width=16)
    table.add_column("Source", overflow="fold")
    for key, item in document["values"].items():
        mark = "* " if item["unconfirmed"] else ""
        table.add_row(f"{mark}{key}", _value_text(item["value"]), _readable(item["source"], item["citation"]))
    out.print(table)
    if any(item["unconfirmed"] for item in document["values"].values()):
        out.print("* unconfirmed: no primary source gives this value (see its source column for where it comes from)")
    for old in document["formerly"]:
        out.print(f"Formerly compute capability {old}: CUDA 13 renamed it to {document['compute_capability']}; "
                  f"sm_{old.replace('.', '')} is accepted as a name.")
    from ..specs.releases import DEFAULT_RELEASE

    out.print(f"Exact to {document['exact_to']}.")
    for d in document["release_differences"]:
        which = _releases_text(d["releases"])
        if d["field"] is None:
            out.print(f"CUDA {which}: {d['why']}")
        else:
            out.print(f"CUDA {which} {'differs' if len(d['releases']) == 1 else 'differ'}: {d['field']} = {d['value']} "
                      f"there, {d['value_here']} in CUDA {DEFAULT_RELEASE} ({d['function']}). {d['why']}")
    if "product" in document:
        ptable = Table(title=document["product"]["title"])
        ptable.add_column("Field", no_wrap=True, min_width=max(map(len, document["product"]["values"]), default=0))
        ptable.add_column("Value", justify="right")
        ptable.add_column("Source", overflow="fold")
        for key, item in document["product"]["values"].items():
            ptable.add_row(key, _value_text(item["value"]), _readable(item["source"], item["citation"]))
        out.print(ptable)
    disagreements = document["disagreements"] + document.get("product", {}).get("disagreements", [])
    for d in disagreements:
        listed = "; ".join(f"{v['value']:g} ({v['source']})" for v in d["values"])
        out.print(f"[yellow]Sources disagree on {d['field']}:[/] {listed}. Used: {d['used']:g}. {d['why']}")


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
@click.argument("path", type=click.Path(dir_okay=False))
def validate(path):
    """Validate a spec file (TOML or JSON); exit 2 with the first problem if it is invalid."""
    from pathlib import Path

    from ..specs.models import SpecFileError, validate_family_document

    try:
        doc = validate_family_document(Path(path))
    except SpecFileError as exc:
        raise BadInput(exc.as_option()) from None
    click.echo(f"{path}: valid ({len(doc.get('arch', []))} architecture(s), {len(doc.get('product', []))} product(s))")
