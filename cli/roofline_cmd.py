"""`roofline`: memory- or compute-bound, the attainable ceiling, the headroom,
and the shared-memory pyramid, from a product spec or measured probe results."""

from __future__ import annotations

import click

from .common import choose_format, console, emit, resolved_arch
from .options import format_option
from .params import FilePath, Quantity


@click.command()
@click.option("--arch", "arch", help="A product (v100-pcie, h100-sxm) or, with --spec-file, its name.")
@click.option("--spec-file", type=FilePath(exists=True, dir_okay=False), help="A spec file with a product (e.g. from probe --save).")
@click.option("--probe", "probe_path", type=FilePath(exists=True, dir_okay=False),
              help="Measured ceilings from `probe --format json` output.")
@click.option("--precision", type=click.Choice(sorted(["fp64", "fp32", "fp16"])), default="fp64", show_default=True)
@click.option("--flops", type=Quantity(), help="FLOPs the kernel performs (e.g. 2.1T).")
@click.option("--bytes", "bytes_", type=Quantity(), help="Bytes it moves to and from device memory (e.g. 800G).")
@click.option("--intensity", type=Quantity(), help="FLOP per byte of device-memory traffic, instead of --flops/--bytes.")
@click.option("--shared-bytes-per-flop", type=Quantity(),
              help="Bytes of shared-memory/L1 traffic per FLOP: places the kernel in the pyramid.")
@click.option("--achieved", type=Quantity(), help="FLOP/s the kernel reaches, for the headroom (e.g. 1.2T).")
@click.option("--kernels", "kernels_path", type=FilePath(exists=True, dir_okay=False),
              help="Several kernels: a lint config (TOML, YAML or JSON) whose [[kernels]] have a roofline table.")
@format_option()
@click.option("--plot", type=FilePath(dir_okay=False, readable=False),
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
    if plot:  # a bad path fails before any work; without --plot the plotting module is never imported
        from .plots import plot_format
        plot_format(plot)
    from ..advisor.queries.roofline import roofline_answer

    resolved = resolved_arch(arch, spec_file)
    answer = roofline_answer(resolved, arch, precision, probe_path, kernels_path, intensity=intensity, flops=flops,
                             bytes_=bytes_, shared_bytes_per_flop=shared_bytes_per_flop, achieved=achieved)
    emit(choose_format(fmt), answer.to_json(), lambda: _render(answer))
    if plot:
        _save_plot(answer, f"Roofline: {resolved.product.title}, {precision}", plot)


def _save_plot(answer, title: str, plot: str) -> None:
    from .plots import roofline_figure, save

    save(roofline_figure(answer.machine, list(answer.kernels), title), plot)


def _render(answer) -> None:
    from .roofline_render import render_roofline

    render_roofline(console(), answer)
