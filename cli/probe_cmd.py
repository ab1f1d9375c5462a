"""`probe` and `verify`: the commands that need a GPU. Without CuPy or a
device they print one sentence and exit with EXIT_UNAVAILABLE (3)."""

from __future__ import annotations

import sys

import click

from .common import EXIT_FINDINGS, choose_format, console, emit, fail_unavailable
from .options import format_option
from .params import FilePath, ProbeNames


def _cupy_or_exit(what: str):
    from ..probes.gpu import GpuUnavailable, load_cupy

    try:
        return load_cupy(what)
    except GpuUnavailable as exc:
        fail_unavailable(str(exc))


@click.command()
@click.option("--only", type=ProbeNames(), metavar="NAMES",
              help="Comma-separated probes: compute, dram, curve, l2, shared, latency, launch, occupancy, cluster.")
@click.option("--quick", is_flag=True,
              help="Fewer repeats at the same sizes (figures within a few % of the full run; ones whose repeats "
                   "disagree by more than 10% are flagged unstable, not reported).")
@click.option("--device", default="0", show_default=True, metavar="N|N,M,...|all",
              help="Which GPU, several in turn, or every GPU in turn.")
@format_option()
@click.option("--save", "save", type=FilePath(dir_okay=False, readable=False, writable=True),
              help="Write the device as a spec file (driver limits + measured peaks) for --spec-file.")
@click.option("--tiny", is_flag=True, hidden=True, help="Smallest sizes, for compute-sanitizer runs.")
def probe(only, quick, device, fmt, save, tiny):
    """Measure this GPU's real limits with CUDA probe kernels (needs CuPy).

    \b
    Exit codes: 0 all probes ran; 1 a probe failed (the others still report);
    2 bad input; 3 no CuPy or no GPU.
    """
    from ..advisor.queries.probe import probe_query
    from .fileio import check_writable

    check_writable(save, "--save")
    fmt = choose_format(fmt)
    answer = probe_query(_cupy_or_exit("probe"), only, device, quick, tiny, save=bool(save),
                         run=lambda ctx, names: _run_with_progress(ctx, names, fmt),
                         measured=_render_device if fmt == "table" else None)
    if save:
        _write_spec(save, answer.saved)
    emit(fmt, answer.to_json(), lambda: _print_differences(answer.document.get("differs_most", [])))
    sys.exit(EXIT_FINDINGS if answer.failed else 0)


def _print_differences(rows: list[dict]) -> None:
    from ..advisor.text import markup_text

    if not rows:  # one device: its tables were drawn as it was measured
        return
    out = console()
    out.print("Across devices, the one that differs most from its siblings on each figure:")
    for row in rows:
        out.print(markup_text(f"  {row['name']}: device {row['device']} ({row['position']}) at {row['value']:.4g} "
                         f"{row['unit']}, {row['difference']:+.1%} against the others' median {row['others_median']:.4g}"))


def _render_device(doc: dict, product) -> None:
    from .probe_render import render_probe

    render_probe(console(), doc, product)


def _run_with_progress(ctx, names: list[str], fmt: str):
    from ..probes.suite import run_probes

    if fmt != "table" or not sys.stderr.isatty():
        return run_probes(ctx, names)
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(f"probing {ctx.device.name}", total=len(names))
        return run_probes(ctx, names, progress=lambda name: bar.advance(task))


def _write_spec(path: str, text: str) -> None:
    from .fileio import output_error, write_atomically

    try:
        write_atomically(path, text.encode())
    except OSError as exc:
        raise output_error(exc, "--save", path) from None


@click.command()
@click.argument("path", type=FilePath(exists=True, dir_okay=False))
@click.option("--device", default=0, show_default=True, help="GPU index.")
@format_option()
def verify(path, device, fmt):
    """Load a .cubin or .ptx through CuPy and compare the driver's occupancy
    answers with the engine's over a sweep of block sizes, dynamic shared memory
    and carveouts, kernel by kernel.

    \b
    Exit codes: 0 every answer equal; 1 a disagreement; 2 bad input; 3 no GPU.
    """
    from ..advisor.queries.probe import verify_query

    doc = verify_query(_cupy_or_exit("verify"), path, device)
    emit(choose_format(fmt), doc, lambda: _render_verify(doc))
    sys.exit(EXIT_FINDINGS if any(k["disagreements"] for k in doc["kernels"]) else 0)


def _render_verify(doc: dict) -> None:
    from ..advisor.text import markup_text

    out = console()
    for k in doc["kernels"]:
        status = "[green]equal[/]" if not k["disagreements"] else f"[red]{len(k['disagreements'])} disagreements[/]"
        clusters = f" and {k['clusters_checked']} cluster answers" if k["clusters_checked"] else ""
        out.print(f"{markup_text(k['name'])}: {k['checked']} driver answers{clusters}, {status} "
                  f"({k['attributes']['registers']} registers, {k['attributes']['static_shared_mem']} B static shared)")
