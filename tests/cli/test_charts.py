"""The occupancy graphs and the roofline chart: the curves against the engine,
the terminal drawings cell by cell, and the image files (PNG, SVG, PDF)
written whole and well-formed."""

import json
import struct
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.advisor import analyze, occupancy
from tuneadvise.advisor.engine.curves import curves_document, occupancy_curves
from tuneadvise.advisor.engine.whatif import with_total_shared_mem
from tuneadvise.cli.charts import ASCII, UNICODE
from tuneadvise.cli.main import cli
from tuneadvise.specs.catalog import shipped_catalog

from ..helpers import ROOT, assert_one_line_error

ARCHS = sorted({arch.sm for arch in shipped_catalog().archs.values()})


def run(*args):
    return CliRunner().invoke(cli, list(args))


# --------------------------------------------------------------------------
# The curves are the engine's answers, point by point
# --------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(arch=st.sampled_from(ARCHS), registers=st.integers(1, 128), warps=st.integers(1, 32),
       shared=st.integers(0, 48 * 1024), opt_in=st.booleans(), carveout=st.sampled_from(["default", 0, 50, 100]))
def test_every_point_of_every_curve_is_the_engines_answer(arch, registers, warps, shared, opt_in, carveout):
    result = analyze(arch, registers=registers, block_size=warps * 32, shared_mem=0, dynamic_shared_mem=shared,
                     opt_in=opt_in, carveout=carveout)
    block, regs, smem = occupancy_curves(result)
    variants = {
        id(block): lambda v: result.kernel._replace(block_size=v, max_threads_per_block=None),
        id(regs): lambda v: result.kernel._replace(registers=v),
        id(smem): lambda v: with_total_shared_mem(result.kernel, v),
    }
    for curve in (block, regs, smem):
        vary = variants[id(curve)]
        for point in curve.points[:: max(1, len(curve.points) // 40)]:
            expected = occupancy(result.arch, vary(point.value))
            assert (point.blocks_per_sm, point.occupancy) == (expected.active_blocks_per_sm, expected.occupancy), \
                (curve.resource, point.value)
        assert curve.current.blocks_per_sm == result.active_blocks_per_sm
        assert curve.current.occupancy == result.occupancy
    assert [p.value for p in block.points] == list(range(32, result.arch.max_threads_per_block + 1, 32))
    assert regs.points[-1].value == result.arch.max_registers_per_thread
    unit = result.arch.shared_mem_allocation_unit
    assert smem.points[1].value - smem.points[0].value == unit


def test_the_runs_in_json_rebuild_every_point():
    result = analyze("sm_90", registers=40, block_size=256, shared_mem="20K", opt_in=True)
    curves = occupancy_curves(result)
    document = curves_document(curves)
    for curve in curves:
        runs = document[curve.resource]["runs"]
        rebuilt = {}
        values = [p.value for p in curve.points]
        for run_ in runs:
            for value in values[values.index(run_["start"]): values.index(run_["end"]) + 1]:
                rebuilt[value] = (run_["blocks_per_sm"], run_["occupancy"])
        assert rebuilt == {p.value: (p.blocks_per_sm, p.occupancy) for p in curve.points}
        if curve.resource != "block_size":  # occupancy changes with every block size; the staircases merge
            assert len(runs) < len(curve.points) / 10
    # The register staircase of the H100 at 256 threads: 32 regs -> 8 blocks, 40 -> 6, 48 -> 5, 64 -> 4.
    steps = [(r["end"], r["blocks_per_sm"]) for r in document["registers"]["runs"][:4]]
    assert steps == [(32, 8), (40, 6), (48, 5), (64, 4)]


def test_json_has_curves_only_when_asked():
    plain = json.loads(run("occupancy", "--arch", "volta", "-r", "64", "-b", "256", "--format", "json").output)
    assert "curves" not in plain
    result = run("occupancy", "--arch", "volta", "-r", "64", "-b", "256", "--format", "json", "--graphs")
    doc = json.loads(result.output)
    assert set(doc["curves"]) == {"block_size", "registers", "shared_memory"}
    assert doc["curves"]["registers"]["current"] == {"value": 64, "blocks_per_sm": 4, "occupancy": 0.5}


# --------------------------------------------------------------------------
# Terminal drawings
# --------------------------------------------------------------------------

def _chart_blocks(output: str) -> list[list[str]]:
    """Each drawn graph's lines, from its title line to its axis title."""
    lines, charts, current = output.splitlines(), [], None
    for line in lines:
        if line.startswith("Impact of varying"):
            current = [line]
            charts.append(current)
        elif current is not None:
            current.append(line)
    return charts


def _column_heights(chart: list[str], height: int = 10, glyphs=ASCII) -> tuple[list[int], int]:
    """Filled eighths per column, and the column of the current configuration's mark."""
    rows = [line for line in chart if glyphs.tick in line or glyphs.axis in line][:height]
    start = rows[0].index(glyphs.tick) + 1
    rows = [row.replace(glyphs.refused, " ") for row in rows]  # a column that cannot launch has no bar
    axis = next(i for i, line in enumerate(chart) if f"{glyphs.origin}{glyphs.rule}" in line)
    width = chart[axis].count(glyphs.rule)
    heights = [sum(glyphs.eighths.index(row[start + c]) if start + c < len(row) else 0 for row in rows)
               for c in range(width)]
    mark_line = chart[axis + 1]
    return heights, mark_line.index(glyphs.current) - start


@pytest.mark.parametrize("arch, registers, block, shared", [("volta", 64, 256, "12K"), ("sm_90", 40, 256, "20K"),
                                                            ("sm_80", 72, 128, "40K"), ("sm_52", 32, 512, "0")])
def test_terminal_graphs_draw_the_occupancy_and_mark_the_current_configuration(arch, registers, block, shared):
    result = run("occupancy", "--arch", arch, "-r", str(registers), "-b", str(block), "-s", shared,
                 "--graphs", "--format", "table")
    assert result.exit_code == 0, result.output
    charts = _chart_blocks(result.output)
    assert [c[0].split(":")[0] for c in charts] == ["Impact of varying block size",
                                                    "Impact of varying register count per thread",
                                                    "Impact of varying shared memory usage per block"]
    expected = analyze(arch, registers=registers, block_size=block, shared_mem=shared)
    for chart in charts:
        heights, mark = _column_heights(chart)
        # The marked column is drawn at the configuration's occupancy, to the eighth of a cell.
        assert heights[mark] == round(expected.occupancy * 10 * 8), chart[0]
        assert f"{expected.occupancy * 100:.1f}%" in chart[0] or f"{expected.occupancy * 100:.1f}%" in chart[1]
        assert any("100%" in line for line in chart) and any("0% +" in line for line in chart)


def test_register_graph_columns_follow_the_staircase():
    result = run("occupancy", "--arch", "volta", "-r", "64", "-b", "256", "--graphs", "--format", "table")
    chart = _chart_blocks(result.output)[1]
    heights, _ = _column_heights(chart)
    curve = occupancy_curves(analyze("volta", registers=64, block_size=256))[1]
    # Occupancy never rises with registers: the drawing never does either, from 100% down to 12.5%.
    assert all(a >= b for a, b in zip(heights, heights[1:]))
    assert heights[0] == round(curve.points[0].occupancy * 80) and heights[-1] == round(curve.points[-1].occupancy * 80)


def test_graphs_honour_no_color(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    result = CliRunner().invoke(cli, ["occupancy", "--arch", "volta", "-r", "64", "-b", "256", "--graphs",
                                      "--format", "table"], color=True)
    assert "\x1b[" not in result.output and "^" in result.output


def test_batch_refuses_graphs():
    result = CliRunner().invoke(cli, ["occupancy", "--batch", "-", "--graphs"], input="{}\n")
    assert result.exit_code == 2 and "--graphs/--plot" in result.output


# --------------------------------------------------------------------------
# Image files
# --------------------------------------------------------------------------

def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _svg_texts(path: Path) -> str:
    root = ElementTree.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return " ".join(t for t in root.itertext())


@pytest.fixture
def plotting():
    return pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_occupancy_plot_is_written_whole(plotting, tmp_path, suffix):
    path = tmp_path / f"occupancy{suffix}"
    result = run("occupancy", "--arch", "h100-sxm", "-r", "40", "-b", "256", "-s", "20K", "--opt-in",
                 "--format", "json", "--plot", str(path))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["occupancy"] == 0.75  # the JSON on stdout is untouched by the plot
    data = path.read_bytes()
    if suffix == ".png":
        width, height = _png_size(data)
        assert width > 1000 and height > 300
    elif suffix == ".svg":
        text = _svg_texts(path)
        for title in ("Impact of varying block size", "Impact of varying register count per thread",
                      "Impact of varying shared memory usage per block", "threads per block",
                      "registers per thread", "shared memory per block (KiB)", "occupancy (% of max warps per SM)",
                      "H100 SXM5 80 GB", "current: 256", "6 blocks/SM, 75.0%"):
            assert title in text, title
    else:
        assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left beside it


def test_roofline_plot_marks_the_ridge_and_every_kernel(plotting, tmp_path):
    path = tmp_path / "roofline.svg"
    result = run("roofline", "--arch", "v100-pcie", "--kernels", str(ROOFLINE_KERNELS), "--plot", str(path),
                 "--format", "json")
    assert result.exit_code == 0, result.output
    text = _svg_texts(path)
    for label in ("Roofline: Tesla V100 PCIe 16 GB, fp64", "ridge point", "8.86 FLOP/byte",
                  "arithmetic intensity (FLOP/byte of device-memory traffic)", "attainable performance (fp64 FLOP/s)",
                  "stream_triad: memory-bound", "dgemm_tile: compute-bound", "stencil7: shared-memory/L1-bound",
                  "6 B/FLOP shared+L1"):
        assert label in text, label
    png = tmp_path / "roofline.png"
    assert run("roofline", "--arch", "v100-pcie", "--intensity", "2", "--plot", str(png), "--format", "json").exit_code == 0
    assert _png_size(png.read_bytes())[0] > 500


@pytest.mark.parametrize("path, message", [("graph.jpg", "must end in .png, .svg, .pdf"),
                                           ("missing/graph.png", "does not exist")])
def test_bad_plot_paths_fail_before_any_work(tmp_path, path, message):
    target = tmp_path / path
    result = run("occupancy", "--arch", "volta", "-r", "64", "-b", "256", "--plot", str(target), "--format", "json")
    assert result.exit_code == 2 and message in result.output and result.stdout.count("\n") <= 1
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_plot_without_matplotlib_exits_3_with_one_sentence(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import fails as if not installed
    path = tmp_path / "graph.png"
    result = run("occupancy", "--arch", "volta", "-r", "64", "-b", "256", "--plot", str(path), "--format", "json")
    assert result.exit_code == 3
    assert "--plot needs matplotlib; install it with: pip install 'tuneadvise[plot]'" in result.stderr
    assert not path.exists()


# --------------------------------------------------------------------------
# Roofline: several kernels in one table and one chart
# --------------------------------------------------------------------------

ROOFLINE_KERNELS = ROOT / "docs" / "examples" / "roofline-kernels.toml"


def test_roofline_kernels_file_gives_one_entry_per_kernel():
    doc = json.loads(run("roofline", "--arch", "v100-pcie", "--kernels", str(ROOFLINE_KERNELS), "--format", "json").output)
    assert [k["name"] for k in doc["kernels"]] == ["stream_triad", "dgemm_tile", "stencil7"]
    triad, dgemm, stencil = doc["kernels"]
    assert triad["bound"] == "memory" and triad["intensity_flop_per_byte"] == pytest.approx(2 / 24)
    assert triad["ceiling_flop_per_s"] == pytest.approx(790e9 * 2 / 24)
    assert dgemm["bound"] == "compute" and dgemm["headroom_ratio"] == pytest.approx(7e12 / 5.2e12)
    assert stencil["bound"] == "shared-memory/L1" and stencil["pyramid_cap_flop_per_s"] == pytest.approx(12.7488e12 / 6)
    assert doc["kernel"] is None


def test_roofline_kernels_from_json_and_yaml(tmp_path):
    entries = {"kernels": [{"name": "a", "roofline": {"intensity": 0.5}}, {"name": "b", "roofline": {"flops": "1T", "bytes": "10G"}}]}
    (tmp_path / "k.json").write_text(json.dumps(entries))
    (tmp_path / "k.yaml").write_text("kernels:\n  - name: a\n    roofline: {intensity: 0.5}\n"
                                     "  - name: b\n    roofline: {flops: 1T, bytes: 10G}\n")
    for name in ("k.json", "k.yaml"):
        doc = json.loads(run("roofline", "--arch", "h100-sxm", "--kernels", str(tmp_path / name), "--format", "json").output)
        assert [(k["name"], k["intensity_flop_per_byte"]) for k in doc["kernels"]] == [("a", 0.5), ("b", 100.0)]


def _roofline_grid(output: str, height: int = 14, glyphs=ASCII) -> list[str]:
    """The chart's rows, without the y labels, from the last drawn chart."""
    lines = output.splitlines()
    axis = max(i for i, line in enumerate(lines) if f"{glyphs.corner}{glyphs.rule * 8}" in line)
    pad = lines[axis].index(glyphs.corner) + 1
    return [line[pad:] for line in lines[axis - height:axis]]


def test_roofline_terminal_chart_places_each_kernel():
    result = run("roofline", "--arch", "v100-pcie", "--kernels", str(ROOFLINE_KERNELS), "--format", "table")
    assert result.exit_code == 0, result.output
    grid = _roofline_grid(result.output)
    where = {mark: next((r, row.index(mark)) for r, row in enumerate(grid) if mark in row) for mark in "123|"}
    # Higher achieved FLOP/s is drawn higher: dgemm (5.2T) above stencil (1.4T) above triad (150G);
    # larger intensity further right: triad (0.083) < stencil (4.06) < ridge (8.86) < dgemm (30).
    assert where["2"][0] < where["3"][0] < where["1"][0]
    assert where["1"][1] < where["3"][1] < where["|"][1] < where["2"][1]
    # The ridge sits on the compute roof: '-' to its right on the same row, '/' below-left.
    assert set(grid[where["|"][0]][where["|"][1] + 1:].strip()) == {"-"}
    assert "Kernels" in result.output and "stencil7" in result.output


@pytest.mark.parametrize("content, message", [
    ('[[kernels]]\nname = "k"\nroofline = { flops = "1T" }\n', "give intensity, or both flops and bytes"),
    ('[[kernels]]\nname = "k"\nroofline = { intensity = -1 }\n', "positive"),
    ('[[kernels]]\nname = "k"\nroofline = { intensty = 2 }\n', "intensity"),
    ('[[kernels]]\nname = "k"\nblock_size = 128\n', "has no [[kernels]] entry with a roofline table"),
])
def test_bad_roofline_kernels_files(tmp_path, content, message):
    path = tmp_path / "kernels.toml"
    path.write_text(content)
    result = run("roofline", "--arch", "v100-pcie", "--kernels", str(path), "--format", "json")
    assert_one_line_error(result, message)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=16))
def test_any_intensity_text_is_answered_or_refused_in_one_line(text):
    result = run("roofline", "--arch", "v100-pcie", "--intensity", text, "--format", "json")
    assert result.exit_code in (0, 2) and "Traceback" not in result.output
    if result.exit_code == 0:
        assert json.loads(result.stdout)["kernel"]["intensity_flop_per_byte"] > 0
    else:
        assert len(result.output.strip().splitlines()) == 1


@settings(max_examples=100, deadline=None)
@given(value=st.one_of(st.text(max_size=12), st.floats(allow_nan=True, allow_infinity=True), st.integers(),
                       st.booleans(), st.none(), st.lists(st.integers(), max_size=2)))
def test_any_roofline_value_in_a_kernels_file_is_answered_or_refused(tmp_path_factory, value):
    path = tmp_path_factory.mktemp("kernels") / "kernels.json"
    path.write_text(json.dumps({"kernels": [{"name": "k", "roofline": {"flops": value, "bytes": "1G"}}]}))
    result = run("roofline", "--arch", "h100-sxm", "--kernels", str(path), "--format", "json")
    assert result.exit_code in (0, 2) and "Traceback" not in result.output
    if result.exit_code == 2:
        assert "--kernels:" in result.output and len(result.output.strip().splitlines()) == 1


# --------------------------------------------------------------------------
# What the pictures show: every point whole, labels clear of the lines,
# cannot-launch apart from low occupancy, names whole at 80 columns
# --------------------------------------------------------------------------

LOW_AND_HIGH = [("far_below_the_memory_roof", 0.1, 2e9), ("dgemm_tile", 30, 5.2e12), ("over_the_roof", 3, 9e13)]


def _v100_placements():
    from tuneadvise.advisor.roofline import machine_from_product, place

    machine = machine_from_product(shipped_catalog().products["v100-pcie"], 32, "fp64")
    return machine, [(name, place(machine, intensity, 1, achieved)) for name, intensity, achieved in LOW_AND_HIGH]


def test_roofline_range_holds_every_achieved_point_with_margin():
    from tuneadvise.advisor.roofline import CHART_MARGIN, chart_range

    machine, kernels = _v100_placements()
    window = chart_range(machine, [p for _, p in kernels])
    for _, p in kernels:
        assert window.y_low * CHART_MARGIN <= p.achieved <= window.y_high / CHART_MARGIN
        assert window.x_low * CHART_MARGIN <= p.intensity <= window.x_high / CHART_MARGIN


def test_roofline_terminal_chart_draws_low_and_high_kernels_inside_the_frame(tmp_path):
    path = tmp_path / "k.toml"
    path.write_text("".join(f'[[kernels]]\nname = "{n}"\nroofline = {{ intensity = {i}, achieved = {a} }}\n'
                            for n, i, a in LOW_AND_HIGH))
    result = run("roofline", "--arch", "v100-pcie", "--kernels", str(path), "--format", "table")
    grid = _roofline_grid(result.output)
    rows = {mark: next(r for r, row in enumerate(grid) if mark in row) for mark in "123"}
    # Not clamped to the top or bottom row: each mark is inside the frame, in order of FLOP/s.
    assert 0 < rows["3"] < rows["2"] < rows["1"] < len(grid) - 1


def test_roofline_plot_keeps_every_point_and_labels_off_the_roofs(plotting):
    from tuneadvise.cli.plots import _renderer, crosses, roofline_figure

    machine, kernels = _v100_placements()
    figure = roofline_figure(machine, kernels, "test")
    axes = figure.axes[0]
    low, high = axes.get_ylim()
    assert all(low < p.achieved < high for _, p in kernels)
    renderer = _renderer(figure)
    labels = [t for t in axes.texts if t.get_gid() == "pyramid-label"]
    roofs = [line for line in axes.lines if line.get_gid() == "roof"]
    bands = [line for line in axes.lines if line.get_gid() is None and line.get_linestyle() == ":"]
    assert labels and roofs and len(bands) >= len(labels)
    inside = axes.get_window_extent(renderer)
    boxes = [t.get_window_extent(renderer) for t in labels]
    for text, box in zip(labels, boxes):
        assert not any(crosses(box, line) for line in roofs + bands), text.get_text()
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def test_crossing_is_detected(plotting):
    """The check the label tests rest on can fail: a label put on its line crosses it."""
    from tuneadvise.cli.plots import _renderer, crosses, roofline_figure

    machine, kernels = _v100_placements()
    figure = roofline_figure(machine, kernels, "test")
    axes = figure.axes[0]
    roof = next(line for line in axes.lines if line.get_gid() == "roof")
    text = axes.annotate("on the roof", (machine.ridge * 4, machine.peak.value), ha="center", va="center")
    assert crosses(text.get_window_extent(_renderer(figure)), roof)


@pytest.mark.parametrize("arch, registers, block, shared", [("h100-sxm", 40, 256, 20480), ("volta", 64, 1024, 0),
                                                            ("sm_80", 72, 128, 40960), ("volta", 255, 1024, 0)])
def test_current_label_is_clear_of_the_curve(plotting, arch, registers, block, shared):
    from tuneadvise.cli.plots import _renderer, crosses, occupancy_figure

    result = analyze(arch, registers=registers, block_size=block, shared_mem=shared)
    figure = occupancy_figure(occupancy_curves(result), "test")
    renderer = _renderer(figure)
    for axes in figure.axes:
        label = next(t for t in axes.texts if t.get_gid() == "current-label")
        curve = next(line for line in axes.lines if line.get_gid() == "curve")
        box = label.get_window_extent(renderer)
        assert not crosses(box, curve), (axes.get_title(), label.get_text())
        assert axes.get_window_extent(renderer).contains(box.x0, box.y0) and axes.get_window_extent(renderer).contains(box.x1, box.y1)


def test_cannot_launch_points_are_marked_apart_in_the_plot(plotting):
    from tuneadvise.cli.plots import occupancy_figure

    result = analyze("volta", registers=64, block_size=1024)
    curves = occupancy_curves(result)
    figure = occupancy_figure(curves, "test")
    registers = figure.axes[1]
    refused = [p.value for p in curves[1].points if not p.blocks_per_sm]
    assert refused  # 65+ registers x 1024 threads exceed volta's register file
    marks = next(line for line in registers.lines if line.get_gid() == "cannot-launch")
    assert list(marks.get_xdata()) == refused and set(marks.get_ydata()) == {0}
    assert marks.get_marker() == "x" and marks.get_color() != next(
        line for line in registers.lines if line.get_gid() == "curve").get_color()
    assert "cannot launch" in [t.get_text() for t in registers.get_legend().get_texts()]
    # The curve itself has a gap there, not a line at 0 %.
    curve = next(line for line in registers.lines if line.get_gid() == "curve")
    drawn = [x for x, y in zip(curve.get_xdata(), curve.get_ydata()) if y == y and y == 0]
    assert drawn == []
    assert registers.get_ylim()[0] < 0  # the marks on the axis are drawn whole


def test_cannot_launch_columns_are_marked_apart_in_the_terminal():
    result = run("occupancy", "--arch", "volta", "-r", "64", "-b", "1024", "--graphs", "--format", "table")
    chart = _chart_blocks(result.output)[1]
    rows = [line for line in chart if "+" in line or "|" in line][:10]
    start = rows[0].index("+") + 1
    bottom = rows[-1][start:]
    curve = occupancy_curves(analyze("volta", registers=64, block_size=1024))[1]
    assert "x" in bottom and "x cannot launch" in "\n".join(chart)
    # Left of the first x, every column has a bar; from it on, none does.
    first = bottom.index("x")
    assert all(c != " " for c in bottom[:first]) and set(bottom[first:].rstrip()) == {"x"}
    assert all(p.blocks_per_sm for p in curve.points if p.value <= 64)


def test_roofline_kernel_names_stay_whole_at_80_columns(tmp_path):
    names = ["slow_gather_kernel_with_a_long_name", "dgemm_tile", "stencil7"]
    path = tmp_path / "k.toml"
    path.write_text("".join(f'[[kernels]]\nname = "{n}"\nroofline = {{ intensity = {i}, achieved = "{a}" }}\n'
                            for n, i, a in zip(names, (0.1, 30, 4), ("2G", "5.2T", "1.4T"))))
    for kernels in (path, ROOFLINE_KERNELS):
        result = CliRunner().invoke(cli, ["roofline", "--arch", "v100-pcie", "--kernels", str(kernels), "--format", "table"],
                                    env={"COLUMNS": "80"})
        assert result.exit_code == 0, result.output
        lines = result.output.splitlines()
        assert all(len(line) <= 80 for line in lines), max(lines, key=len)
        expected = names if kernels == path else ["stream_triad", "dgemm_tile", "stencil7"]
        for name in expected:
            # Whole, on one line, before the verdicts (which name it too).
            assert any(name in line and not line.startswith(name) for line in lines), name
        # Right-aligned figures: every headroom ends in the same column.
        ends = {line.rstrip().rindex("x") for line in lines if line.rstrip().endswith("x") and "headroom" not in line
                and line.lstrip()[:1].isdigit()}
        assert len(ends) == 1, ends


def test_graphs_on_a_terminal_use_box_drawing_and_the_same_heights():
    """The terminal's drawing (Unicode eighths) and the piped one (ASCII) are the same bars."""
    from tuneadvise.cli.curves_render import curve_lines

    curve = occupancy_curves(analyze("volta", registers=64, block_size=256))[1]
    drawn = {glyphs: [line.plain for line in curve_lines(curve, 60, glyphs=glyphs)] for glyphs in (UNICODE, ASCII)}
    assert _column_heights(drawn[UNICODE], glyphs=UNICODE) == _column_heights(drawn[ASCII], glyphs=ASCII)
    assert all(line.isascii() for line in drawn[ASCII])


@pytest.mark.parametrize("args", [["occupancy", "--arch", "sm_70", "-r", "32", "-b", "256", "--graphs"],
                                  ["roofline", "--arch", "v100-pcie", "--intensity", "2"]])
@pytest.mark.parametrize("encoding", ["ascii", "utf-8"])
def test_piped_charts_are_ascii_and_an_ascii_stream_does_not_fail(args, encoding):
    import os
    import subprocess

    env = {**os.environ, "PYTHONIOENCODING": encoding, "COLUMNS": "80"}
    done = subprocess.run([sys.executable, "-m", "tuneadvise.cli", *args], capture_output=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.isascii() and not done.stderr


def test_ridge_label_never_covers_a_kernel(plotting):
    """A kernel just right of and below the ridge sat under the ridge point's label."""
    from tuneadvise.advisor.roofline import machine_from_product, place
    from tuneadvise.cli.plots import _marker_boxes, _renderer, roofline_figure

    machine = machine_from_product(shipped_catalog().products["v100-pcie"], 32, "fp64")
    for factor in (1.05, 1.4, 2.0):
        for share in (0.6, 0.8, 0.9):
            kernels = [("kernel", place(machine, machine.ridge * factor, None, machine.peak.value * share))]
            figure = roofline_figure(machine, kernels, "t")
            axes, renderer = figure.axes[0], _renderer(figure)
            label = next(text for text in axes.texts if text.get_gid() == "ridge-label")
            box = label.get_window_extent(renderer)
            assert not any(box.overlaps(marker) for marker in _marker_boxes(axes, kernels, renderer)), (factor, share)


def test_plot_labels_agree_in_number(plotting, tmp_path):
    path = tmp_path / "one.svg"
    result = run("occupancy", "--arch", "sm_90", "-r", "64", "-b", "1024", "--plot", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    text = _svg_texts(path)
    assert "1 block/SM" in text and "1 blocks/SM" not in text
