"""`--plot FILE.png|.svg|.pdf`: the occupancy graphs and the roofline as image
files, drawn with matplotlib (the optional extra `plot`).

Only matplotlib's object-oriented API is used (no pyplot), so no GUI backend
is ever touched, and the file is rendered in memory and renamed into place:
a failed plot leaves no partial file behind.
"""

from __future__ import annotations

import io
from pathlib import Path

import click

from tuneadvise.cli.common import BadInput, fail_unavailable

FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
_CURRENT = "#b5179e"
_CURVE = "#1f77b4"


def plot_format(path: str) -> str:
    """The image format a --plot path asks for, checked before any work is done."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise BadInput(f"--plot: '{path}' must end in {', '.join(FORMATS)}")
    if not Path(path).resolve().parent.is_dir():
        raise BadInput(f"--plot: the folder of '{path}' does not exist")
    return fmt


def _figure_class():
    try:
        from matplotlib.figure import Figure
    except ImportError:
        fail_unavailable("--plot needs matplotlib; install it with: pip install 'tuneadvise[plot]'")
    return Figure


def save(figure, path: str) -> None:
    from matplotlib import rc_context

    from tuneadvise.specs.catalog import write_atomically

    buffer = io.BytesIO()
    # SVG text stays text (searchable, selectable) instead of glyph outlines.
    with rc_context({"svg.fonttype": "none"}):
        figure.savefig(buffer, format=FORMATS[Path(path).suffix.lower()], bbox_inches="tight",
                       metadata={"Creator": "tuneadvise"})
    try:
        write_atomically(path, buffer.getvalue())
    except OSError as exc:
        raise BadInput(f"--plot: cannot write {path}: {exc.strerror}") from None
    click.echo(f"wrote {path}", err=True)


def occupancy_figure(curves, title: str):
    """Three panels, as NVIDIA's calculator draws them: occupancy against block
    size, registers per thread and shared memory per block, the current
    configuration marked on each."""
    figure = _figure_class()(figsize=(15, 4.6), layout="constrained")
    figure.suptitle(title)
    for axes, curve in zip(figure.subplots(1, len(curves)), curves):
        values = [point.value for point in curve.points]
        scale, unit_label = (1024, curve.x_label.replace("(bytes)", "(KiB)")) if curve.resource == "shared_memory" \
            else (1, curve.x_label)
        xs = [value / scale for value in values]
        ys = [point.occupancy * 100 for point in curve.points]
        if curve.resource == "block_size":  # only warp multiples are sampled: points, not a staircase
            axes.plot(xs, ys, marker=".", color=_CURVE)
        else:  # every integer (or allocation unit) is sampled: a staircase
            axes.step(xs, ys, where="post", color=_CURVE)
        current = curve.current
        axes.plot([current.value / scale], [current.occupancy * 100], "o", color=_CURRENT, markersize=8, zorder=3)
        axes.axvline(current.value / scale, color=_CURRENT, linestyle=":", linewidth=1)
        right_half = current.value > (values[0] + values[-1]) / 2  # keep the label inside the axes
        axes.annotate(f"current: {curve.format(current.value)}\n{current.blocks_per_sm} blocks/SM, "
                      f"{current.occupancy * 100:.1f}%", (current.value / scale, current.occupancy * 100),
                      textcoords="offset points", xytext=(-8, 8) if right_half else (8, 8),
                      ha="right" if right_half else "left", color=_CURRENT, fontsize=9)
        axes.set_title(curve.title)
        axes.set_xlabel(unit_label)
        axes.set_ylabel("occupancy (% of max warps per SM)")
        axes.set_ylim(0, 105)
        axes.set_xlim(xs[0], xs[-1])
        axes.grid(True, alpha=0.3)
    return figure


def roofline_figure(machine, kernels, title: str):
    """Log-log roofline: the memory and compute roofs, the ridge point marked,
    the shared-memory pyramid's bands, and each kernel at its intensity
    (filled at its achieved FLOP/s where given, hollow at its ceiling otherwise)."""
    figure = _figure_class()(figsize=(8.5, 6), layout="constrained")
    axes = figure.subplots()
    ridge = machine.ridge
    intensities = [placement.intensity for _, placement in kernels]
    low = min([ridge / 64, *[i / 2 for i in intensities]])
    high = max([ridge * 16, *[i * 2 for i in intensities]])
    xs = [low * (high / low) ** (k / 200) for k in range(201)]
    axes.loglog(xs, [min(machine.peak.value, x * machine.memory.value) for x in xs], color="black",
                label=f"roofline ({machine.memory.value / 1e9:.4g} GB/s, {machine.peak.value / 1e12:.4g} TFLOP/s)")
    if machine.memory_theoretical and machine.memory_theoretical.value != machine.memory.value:
        axes.loglog(xs, [min(machine.peak.value, x * machine.memory_theoretical.value) for x in xs], color="grey",
                    linestyle="--", linewidth=1,
                    label=f"theoretical memory bandwidth ({machine.memory_theoretical.value / 1e9:.4g} GB/s)")
    axes.plot([ridge], [machine.peak.value], "D", color="black")
    axes.annotate(f"ridge point\n{ridge:.3g} FLOP/byte", (ridge, machine.peak.value), textcoords="offset points",
                  xytext=(6, -28), fontsize=9)
    from tuneadvise.advisor.roofline import pyramid

    for bytes_per_flop, cap in pyramid(machine):
        if cap < machine.peak.value:
            axes.axhline(cap, color="tab:green", linestyle=":", linewidth=0.8)
            axes.annotate(f"{bytes_per_flop:g} B/FLOP shared+L1", (high, cap), textcoords="offset points",
                          xytext=(-4, 2), ha="right", fontsize=7, color="tab:green")
    for index, (name, placement) in enumerate(kernels):
        colour = f"C{index % 10}"
        y = placement.achieved or placement.ceiling
        axes.plot([placement.intensity], [y], "o", markersize=8, color=colour,
                  markerfacecolor=colour if placement.achieved else "none",
                  label=f"{name}: {placement.bound}-bound" + (f", {placement.headroom:.2f}x headroom"
                                                              if placement.headroom else ""))
    axes.set_xlim(low, high)
    top = max([machine.peak.value * 2, *[(p.achieved or 0) * 1.5 for _, p in kernels]])
    axes.set_ylim(machine.memory.value * low / 2, top)
    axes.set_xlabel("arithmetic intensity (FLOP/byte of device-memory traffic)")
    axes.set_ylabel(f"attainable performance ({machine.precision} FLOP/s)")
    axes.set_title(title)
    axes.grid(True, which="both", alpha=0.25)
    axes.legend(fontsize=8, loc="lower right")
    return figure
