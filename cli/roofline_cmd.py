"""`roofline`: memory- or compute-bound, the attainable ceiling, the headroom,
and the shared-memory pyramid, from a product spec or measured probe results."""

from __future__ import annotations

import json
import math
import re

import click

from tuneadvise.cli.common import BadInput, choose_format, console, emit_json, resolve_arch

_SI = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15}


def _number(value: str | None, option: str) -> float | None:
    """'1.5e12', '1.5T', '900G' -> float; BadInput naming the option otherwise."""
    if value is None:
        return None
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?\d+)?)\s*([kKmMgGtTpP]?)\s*", value)
    if not match or float(match.group(1)) <= 0:
        raise BadInput(f"{option}: '{value}' is not a positive number (e.g. 2.5e12 or 2.5T)")
    result = float(match.group(1)) * _SI[match.group(2).lower()]
    if not math.isfinite(result):
        raise BadInput(f"{option}: '{value}' is not a finite number")
    return result


def _load_probe(path: str | None) -> dict | None:
    if path is None:
        return None
    try:
        with open(path) as handle:
            doc = json.load(handle)
    except (OSError, ValueError) as exc:
        raise BadInput(f"--probe: {path} is not a probe JSON document ({exc})") from None
    if not (isinstance(doc, dict) and isinstance(doc.get("results"), list) and isinstance(doc.get("device"), dict)
            and "name" in doc["device"]):
        raise BadInput(f"--probe: {path} is not a probe JSON document (expected 'results' and 'device')")
    return doc


@click.command()
@click.option("--arch", "arch", help="A product (v100-pcie, h100-sxm) or, with --spec-file, its name.")
@click.option("--spec-file", type=click.Path(exists=True, dir_okay=False), help="A spec file with a product (e.g. from probe --save).")
@click.option("--probe", "probe_path", type=click.Path(exists=True, dir_okay=False),
              help="Measured ceilings from `probe --format json` output.")
@click.option("--precision", type=click.Choice(sorted(["fp64", "fp32", "fp16"])), default="fp64", show_default=True)
@click.option("--flops", help="FLOPs the kernel performs (e.g. 2.1T).")
@click.option("--bytes", "bytes_", help="Bytes it moves to and from device memory (e.g. 800G).")
@click.option("--intensity", help="FLOP per byte of device-memory traffic, instead of --flops/--bytes.")
@click.option("--shared-bytes-per-flop", help="Bytes of shared-memory/L1 traffic per FLOP: places the kernel in the pyramid.")
@click.option("--achieved", help="FLOP/s the kernel reaches, for the headroom (e.g. 1.2T).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), help="Default: table on a terminal, else json.")
def roofline(arch, spec_file, probe_path, precision, flops, bytes_, intensity, shared_bytes_per_flop, achieved, fmt):
    """Roofline verdict and ceilings for a kernel on a machine.

    \b
    Exit codes: 0 success; 2 bad input (a machine with no product figures, a
    missing or malformed number).
    """
    from tuneadvise.advisor.report import SCHEMA_VERSION
    from tuneadvise.advisor.roofline import RooflineError, document, machine_from_product, place

    resolved = resolve_arch(arch, spec_file)
    if resolved.product is None:
        raise BadInput(f"--arch: '{arch}' is an architecture, not a product; the roofline needs a product "
                       "(v100-pcie, h100-sxm, ...; see 'tuneadvise specs')")
    probe = _load_probe(probe_path)
    value_intensity = _number(intensity, "--intensity")
    value_flops, value_bytes = _number(flops, "--flops"), _number(bytes_, "--bytes")
    if value_intensity is None and (value_flops is None) != (value_bytes is None):
        raise BadInput("--flops and --bytes: give both, or --intensity")
    if value_intensity is None and value_flops is not None:
        value_intensity = value_flops / value_bytes
    try:
        machine = machine_from_product(resolved.product, resolved.arch.warp_size, precision, probe)
        placement = None
        if value_intensity is not None:
            placement = place(machine, value_intensity, _number(shared_bytes_per_flop, "--shared-bytes-per-flop"),
                              _number(achieved, "--achieved"))
    except RooflineError as exc:
        raise BadInput(str(exc)) from None
    doc = document(machine, placement, SCHEMA_VERSION)
    if choose_format(fmt) == "json":
        emit_json(doc)
    else:
        from tuneadvise.cli.roofline_render import render_roofline

        render_roofline(console(), machine, placement, doc)
