"""`roofline`: memory- or compute-bound, the attainable ceiling, the headroom,
and the shared-memory pyramid, from a product spec or measured probe results."""

from __future__ import annotations

import json

import click

from ..advisor.text import write_json_line
from .common import BadInput, choose_format, console, resolve_arch


def _number(value, option: str) -> float | None:
    """'1.5e12', '1.5T', '900G' -> float; BadInput naming the option otherwise."""
    if value is None:
        return None
    from ..advisor.inputs import InputError, parse_quantity

    try:
        return parse_quantity(value, option.removeprefix("--"))
    except InputError as exc:
        raise BadInput(exc.as_option()) from None


def _load_kernels(path: str | None) -> list:
    """[[kernels]] entries with a roofline table, from a lint config (TOML, YAML or JSON)."""
    if path is None:
        return []
    from ..advisor.lint.config import ConfigError, load_config

    try:
        config = load_config(path)
    except ConfigError as exc:
        raise BadInput(f"--kernels: {exc}") from None
    entries = [entry for entry in config.kernels if entry.roofline is not None]
    if not entries:
        raise BadInput(f"--kernels: {path} has no [[kernels]] entry with a roofline table "
                       "(name = ..., roofline = {{flops = ..., bytes = ...}})")
    return entries


def _load_probe(path: str | None) -> dict | None:
    if path is None:
        return None
    from ..specs.files import read_bounded

    try:
        doc = json.loads(read_bounded(path))
    except OSError as exc:
        raise BadInput(f"--probe: cannot read {path}: {exc.strerror}") from None
    except (ValueError, RecursionError) as exc:
        raise BadInput(f"--probe: {path} is not a probe JSON document ({exc})") from None
    if not (isinstance(doc, dict) and "results" in doc and "device" in doc):
        raise BadInput(f"--probe: {path} is not a probe JSON document (expected 'results' and 'device')")
    return doc  # its fields are checked where they are read (roofline.probe_ceilings)


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
@click.option("--kernels", "kernels_path", type=click.Path(exists=True, dir_okay=False),
              help="Several kernels: a lint config (TOML, YAML or JSON) whose [[kernels]] have a roofline table.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), help="Default: table on a terminal, else json.")
@click.option("--plot", type=click.Path(dir_okay=False),
              help="Write the log-log roofline to FILE.png, .svg or .pdf (needs the 'plot' extra).")
def roofline(arch, spec_file, probe_path, precision, flops, bytes_, intensity, shared_bytes_per_flop, achieved,
             kernels_path, fmt, plot):
    """Roofline verdict and ceilings for a kernel on a machine.

    \b
    Example:
      tuneadvise roofline --arch v100-pcie --intensity 2 --shared-bytes-per-flop 6
    \b
    Exit codes: 0 success; 2 bad input (a machine with no product figures, a
    missing or malformed number, a figure outside 1e-100 to 1e100, a malformed
    probe document); 3 --plot without matplotlib.
    """
    from ..advisor.report import SCHEMA_VERSION
    from ..advisor.roofline import RooflineError, document, machine_from_product, place
    from ..advisor.text import quoted

    if plot:
        from .plots import plot_format

        plot_format(plot)  # a bad path fails before any work
    resolved = resolve_arch(arch, spec_file)
    if resolved.product is None:
        raise BadInput(f"--arch: '{arch}' is an architecture, not a product; the roofline needs a product "
                       "(v100-pcie, h100-sxm, ...; see 'tuneadvise specs')")
    probe = _load_probe(probe_path)
    entries = _load_kernels(kernels_path)
    value_intensity = _number(intensity, "--intensity")
    value_flops, value_bytes = _number(flops, "--flops"), _number(bytes_, "--bytes")
    if value_intensity is None and (value_flops is None) != (value_bytes is None):
        raise BadInput("--flops and --bytes: give both, or --intensity")
    if value_intensity is None and value_flops is not None:
        value_intensity = value_flops / value_bytes  # checked by place(), which names these options
        intensity_name = "--flops / --bytes"
    else:
        intensity_name = "--intensity"
    try:
        machine = machine_from_product(resolved.product, resolved.arch.warp_size, precision, probe,
                                       shared_l1_unified=resolved.arch.shared_l1_unified is not False)
        placement = None
        if value_intensity is not None:
            placement = place(machine, value_intensity, _number(shared_bytes_per_flop, "--shared-bytes-per-flop"),
                              _number(achieved, "--achieved"), intensity_name=intensity_name)
        kernels = [(entry.name, place(machine, entry.roofline.flop_per_byte(), entry.roofline.shared_bytes_per_flop,
                                      entry.roofline.achieved, f"--kernels: {quoted(entry.name)}: ", "intensity"))
                   for entry in entries]
    except RooflineError as exc:
        raise BadInput(str(exc)) from None
    doc = document(machine, placement, SCHEMA_VERSION, kernels)
    charted = ([("kernel", placement)] if placement is not None else []) + kernels
    if choose_format(fmt) == "json":
        write_json_line(doc)
    else:
        from .roofline_render import render_roofline

        render_roofline(console(), machine, charted, doc)
    if plot:
        from .plots import roofline_figure, save

        title = f"Roofline: {resolved.product.title}, {precision}"
        save(roofline_figure(machine, charted, title), plot)
