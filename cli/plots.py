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

from ..advisor.text import plural
from .common import BadInput, fail_unavailable

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
    from .fileio import check_writable

    check_writable(path, "--plot")
    return fmt


def _figure_class():
    try:
        from matplotlib.figure import Figure
    except ImportError:
        fail_unavailable("--plot needs matplotlib; install it with: pip install 'tuneadvise[plot]'")
    return Figure


def save(figure, path: str) -> None:
    from matplotlib import rc_context

    from .fileio import output_error, write_atomically

    buffer = io.BytesIO()
    # SVG text stays text (searchable, selectable) instead of glyph outlines.
    with rc_context({"svg.fonttype": "none"}):
        figure.savefig(buffer, format=FORMATS[Path(path).suffix.lower()], bbox_inches="tight",
                       metadata={"Creator": "tuneadvise"})
    try:
        write_atomically(path, buffer.getvalue())
    except OSError as exc:
        raise output_error(exc, "--plot", path) from None
    click.echo(f"wrote {path}", err=True)


_CANNOT_LAUNCH = "#d62728"
_PYRAMID = "tab:green"


# -- keeping labels off the lines -------------------------------------------------------

def _renderer(figure):
    """The renderer the figure will be drawn with, after laying it out as it will be saved
    (constrained layout moves the axes), so that text extents are final."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(figure.canvas, FigureCanvasAgg):
        FigureCanvasAgg(figure)
    figure.draw_without_rendering()
    return figure.canvas.get_renderer()


def crosses(bbox, line) -> bool:
    """Whether a line (a Line2D, in its own coordinates) passes through a box in display coordinates."""
    import numpy as np
    from matplotlib.path import Path as MplPath

    xy = line.get_transform().transform(np.column_stack(line.get_data()).astype(float))
    # NaN vertices break a line into runs (a curve with gaps where it cannot launch).
    runs, run = [], []
    for point in xy:
        if np.isnan(point).any():
            runs.append(run)
            run = []
        else:
            run.append(point)
    runs.append(run)
    for run in runs:
        if len(run) == 1 and bbox.contains(*run[0]):
            return True
        if len(run) > 1 and MplPath(np.array(run)).intersects_bbox(bbox, filled=False):
            return True
    return False


def _place(text, renderer, candidates, lines=(), boxes=(), inside=None) -> bool:
    """Move an annotation to the first candidate (offset in points, ha, va) where its box
    stays inside `inside`, crosses none of `lines` and overlaps none of `boxes`; False if none."""
    for dx, dy, ha, va in candidates:
        text.xyann = (dx, dy)
        text.set_ha(ha)
        text.set_va(va)
        box = text.get_window_extent(renderer)
        if inside is not None and not (inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0
                                       and box.y1 <= inside.y1):
            continue
        if any(crosses(box, line) for line in lines) or any(box.overlaps(other) for other in boxes):
            continue
        return True
    return False


# -- the occupancy graphs ------------------------------------------------------------------

def _curve_vertices(curve, scale: float, steps: bool) -> tuple[list, list]:
    """The drawn curve: launchable points only (a gap where the configuration cannot launch,
    so 0 blocks never reads as low occupancy); a staircase holds each value up to the next
    sampled point."""
    nan = float("nan")
    xs, ys = [], []
    points = curve.points
    for index, point in enumerate(points):
        if not point.blocks_per_sm:
            xs.append(nan)
            ys.append(nan)
            continue
        x, y = point.value / scale, point.occupancy * 100
        xs.append(x)
        ys.append(y)
        if steps and index + 1 < len(points):
            xs.append(points[index + 1].value / scale)
            ys.append(y)
    return xs, ys


# Where the current configuration's label may go, in order: beside the point, then further up
# or down, then at the corners of the panel (offsets in points from the point).
_LABEL_OFFSETS = [(dx, dy, "left" if dx > 0 else "right", "bottom" if dy > 0 else "top")
                  for dy in (8, -8, 28, -28, 56, -56) for dx in (8, -8)]


def occupancy_figure(curves, title: str):
    """Three panels, as NVIDIA's calculator draws them: occupancy against block
    size, registers per thread and shared memory per block, the current
    configuration marked on each, and the values that cannot launch marked
    apart (a red x on the axis, in the legend) rather than drawn as 0 %."""
    figure = _figure_class()(figsize=(15, 4.6), layout="constrained")
    figure.suptitle(title)
    labels = []
    for axes, curve in zip(figure.subplots(1, len(curves)), curves):
        values = [point.value for point in curve.points]
        scale, unit_label = (1024, curve.x_label.replace("(bytes)", "(KiB)")) if curve.resource == "shared_memory" \
            else (1, curve.x_label)
        steps = curve.resource != "block_size"  # only warp multiples of the block are sampled: points, not a staircase
        xs, ys = _curve_vertices(curve, scale, steps)
        # Unclipped: every point lies within the limits, and a marker at either end stays whole.
        (line,) = axes.plot(xs, ys, marker="" if steps else ".", color=_CURVE, label="occupancy", clip_on=False)
        line.set_gid("curve")
        refused = [point.value / scale for point in curve.points if not point.blocks_per_sm]
        if refused:
            # On the axis, unclipped so the marks are whole; y starts below 0 to leave them room.
            (marks,) = axes.plot(refused, [0] * len(refused), linestyle="none", marker="x", markersize=5,
                                 color=_CANNOT_LAUNCH, clip_on=False, label="cannot launch")
            marks.set_gid("cannot-launch")
        current = curve.current
        cx, cy = current.value / scale, current.occupancy * 100
        axes.plot([cx], [cy], "o", color=_CURRENT if current.blocks_per_sm else _CANNOT_LAUNCH, markersize=8, zorder=3,
                  clip_on=False)
        axes.axvline(cx, color=_CURRENT, linestyle=":", linewidth=1)
        outcome = f"{plural(current.blocks_per_sm, 'block')}/SM, {cy:.1f}%" if current.blocks_per_sm else "cannot launch"
        label = axes.annotate(f"current: {curve.format(current.value)}\n{outcome}", (cx, cy), textcoords="offset points",
                              xytext=(8, 8), color=_CURRENT, fontsize=9)
        label.set_gid("current-label")
        label.set_in_layout(False)
        labels.append((axes, label, [line]))
        axes.set_title(curve.title)
        axes.set_xlabel(unit_label)
        axes.set_ylabel("occupancy (% of max warps per SM)")
        axes.set_ylim(-6, 106)
        axes.set_xlim(xs[0] if xs[0] == xs[0] else values[0] / scale, values[-1] / scale)
        axes.grid(True, alpha=0.3)
        if refused:
            axes.legend(fontsize=8, loc="upper right")
    renderer = _renderer(figure)
    for axes, label, lines in labels:
        legend = axes.get_legend()
        boxes = [legend.get_window_extent(renderer)] if legend is not None else []
        if not _place(label, renderer, _LABEL_OFFSETS, lines, boxes, axes.get_window_extent(renderer)):
            # Nowhere clear beside the point: on a white box, so the curve does not run through the words.
            label.xyann = (8, 8)
            label.set_ha("left")
            label.set_va("bottom")
            label.set_bbox({"facecolor": "white", "edgecolor": _CURRENT, "alpha": 0.9})
    return figure


# -- the roofline --------------------------------------------------------------------------

# Where the ridge point's label may go (offsets in points): below and right of the point first.
_RIDGE_OFFSETS = [(6, -28, "left", "baseline"), (-6, -28, "right", "baseline"), (6, 10, "left", "bottom"),
                  (-6, 10, "right", "bottom"), (6, -56, "left", "baseline"), (-6, -56, "right", "baseline")]


def _marker_boxes(axes, kernels, renderer) -> list:
    """The display boxes of the kernels' markers (8 points across), which no label may cover."""
    from matplotlib.transforms import Bbox

    half = renderer.points_to_pixels(6)
    boxes = []
    for _, placement in kernels:
        x, y = axes.transData.transform((placement.intensity, placement.achieved or placement.ceiling))
        boxes.append(Bbox.from_extents(x - half, y - half, x + half, y + half))
    return boxes


def _roofs(axes, machine, xs) -> list:
    """The roofline, and the theoretical memory roof where measured bandwidth replaces it."""
    roofs = axes.loglog(xs, [min(machine.peak.value, x * machine.memory.value) for x in xs], color="black",
                        label=f"roofline ({machine.memory.value / 1e9:.4g} GB/s, {machine.peak.value / 1e12:.4g} TFLOP/s)")
    if machine.memory_theoretical and machine.memory_theoretical.value != machine.memory.value:
        roofs += axes.loglog(xs, [min(machine.peak.value, x * machine.memory_theoretical.value) for x in xs], color="grey",
                             linestyle="--", linewidth=1,
                             label=f"theoretical memory bandwidth ({machine.memory_theoretical.value / 1e9:.4g} GB/s)")
    for roof in roofs:
        roof.set_gid("roof")
    return roofs


def _pyramid_bands(axes, machine, high: float) -> list:
    """(line, label) per shared-memory pyramid band below the compute roof."""
    from ..advisor.roofline import pyramid

    bands = []
    for bytes_per_flop, cap in pyramid(machine):
        if cap < machine.peak.value:
            band = axes.axhline(cap, color=_PYRAMID, linestyle=":", linewidth=0.8)
            label = "shared+L1" if machine.shared_l1_unified else "shared"
            text = axes.annotate(f"{bytes_per_flop:g} B/FLOP {label}", (high, cap), textcoords="offset points",
                                 xytext=(-4, -2), ha="right", va="top", fontsize=7, color=_PYRAMID)
            text.set_gid("pyramid-label")
            text.set_in_layout(False)
            bands.append((band, text))
    return bands


def roofline_figure(machine, kernels, title: str):
    """Log-log roofline: the memory and compute roofs, the ridge point marked,
    the shared-memory pyramid's bands, and each kernel at its intensity
    (filled at its achieved FLOP/s where given, hollow at its ceiling otherwise).
    The window holds every kernel's point whole; a pyramid band's label goes where
    it crosses no roof, band or other label, and is left out (the table lists every
    band) where there is no such place."""
    from ..advisor.roofline import chart_range

    figure = _figure_class()(figsize=(8.5, 6), layout="constrained")
    axes = figure.subplots()
    ridge = machine.ridge
    window = chart_range(machine, [placement for _, placement in kernels])
    low, high = window.x_low, window.x_high
    xs = [low * (high / low) ** (k / 200) for k in range(201)]
    roofs = _roofs(axes, machine, xs)
    axes.plot([ridge], [machine.peak.value], "D", color="black")
    ridge_label = axes.annotate(f"ridge point\n{ridge:.3g} FLOP/byte", (ridge, machine.peak.value),
                                textcoords="offset points", xytext=(6, -28), fontsize=9)
    ridge_label.set_gid("ridge-label")
    bands = _pyramid_bands(axes, machine, high)
    for index, (name, placement) in enumerate(kernels):
        colour = f"C{index % 10}"
        y = placement.achieved or placement.ceiling
        axes.plot([placement.intensity], [y], "o", markersize=8, color=colour,
                  markerfacecolor=colour if placement.achieved else "none",
                  label=f"{name}: {placement.bound}-bound" + (f", {placement.headroom:.2f}x headroom"
                                                              if placement.headroom else ""))
    axes.set_xlim(low, high)
    axes.set_ylim(window.y_low, window.y_high)
    axes.set_xlabel("arithmetic intensity (FLOP/byte of device-memory traffic)")
    axes.set_ylabel(f"attainable performance ({machine.precision} FLOP/s)")
    axes.set_title(title)
    axes.grid(True, which="both", alpha=0.25)
    legend = axes.legend(fontsize=8, loc="lower right")
    renderer = _renderer(figure)
    if not _place(ridge_label, renderer, _RIDGE_OFFSETS, roofs, _marker_boxes(axes, kernels, renderer)):
        dx, dy, ha, va = _RIDGE_OFFSETS[0]
        ridge_label.xyann = (dx, dy)
        ridge_label.set_ha(ha)
        ridge_label.set_va(va)
    if bands:
        lines = [*roofs, *(band for band, _ in bands)]
        placed = [legend.get_window_extent(renderer)]
        # Below its band first (the roof is above every band), then above it.
        candidates = [(-4, -2, "right", "top"), (-4, 2, "right", "bottom")]
        for _, text in bands:
            if _place(text, renderer, candidates, lines, placed, axes.get_window_extent(renderer)):
                placed.append(text.get_window_extent(renderer))
            else:
                text.remove()
    return figure
