"""`probe` and `verify`: the commands that need a GPU. Without CuPy or a
device they print one sentence and exit with EXIT_UNAVAILABLE (3)."""

from __future__ import annotations

import sys

import click

from .common import EXIT_FINDINGS, BadInput, choose_format, console, emit, fail_unavailable
from .options import format_option
from .params import FilePath


def _cupy_or_exit(what: str):
    from ..probes.gpu import GpuUnavailable, load_cupy

    try:
        return load_cupy(what)
    except GpuUnavailable as exc:
        fail_unavailable(str(exc))


def _parse_only(only: str | None) -> list[str]:
    from ..probes.suite import PROBES

    if not only:
        return list(PROBES)
    names = [n.strip() for n in only.split(",") if n.strip()]
    unknown = [n for n in names if n not in PROBES]
    if unknown:
        raise BadInput(f"--only: unknown probe '{unknown[0]}' (choose from {', '.join(PROBES)})")
    return [n for n in PROBES if n in names]


def _devices(device: str):
    """CuPy and the GPUs --device names (no CuPy or no GPU exits 3)."""
    cupy = _cupy_or_exit("probe")
    from ..probes.gpu import device_count

    return cupy, _parse_devices(device, device_count(cupy))


def _parse_devices(device: str, count: int) -> list[int]:
    """'all', one index, or a comma-separated list of indices (a device may be
    listed twice, which runs the multi-device path on a one-GPU machine)."""
    if device == "all":
        return list(range(count))
    parts = [p.strip() for p in device.split(",")]
    for part in parts:
        if not (part.isascii() and part.isdigit()) or int(part) >= count:
            raise BadInput(f"--device: {part!r} is not a device index below {count}, a comma-separated list of them, "
                           "or 'all'")
    return [int(p) for p in parts]


@click.command()
@click.option("--only", metavar="NAMES",
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
    from ..advisor.queries.probe import probe_document
    from .fileio import check_writable

    names = _parse_only(only)
    check_writable(save, "--save")
    fmt = choose_format(fmt)
    cupy, devices = _devices(device)
    documents = [_probe_one(cupy, index, names, quick, fmt, tiny) for index in devices]
    if save:
        _save_spec(save, documents[0])
    document = probe_document(documents)
    emit(fmt, document, lambda: _print_differences(document.get("differs_most", [])))
    sys.exit(EXIT_FINDINGS if any(doc["failed"] for doc in documents) else 0)


def _print_differences(rows: list[dict]) -> None:
    from ..advisor.text import markup_text

    if not rows:  # one device: its tables were drawn as it was measured
        return
    out = console()
    out.print("Across devices, the one that differs most from its siblings on each figure:")
    for row in rows:
        out.print(markup_text(f"  {row['name']}: device {row['device']} ({row['position']}) at {row['value']:.4g} "
                         f"{row['unit']}, {row['difference']:+.1%} against the others' median {row['others_median']:.4g}"))


def _probe_one(cupy, index: int, names: list[str], quick: bool, fmt: str, tiny: bool = False) -> dict:
    from ..probes.suite import measure_device

    doc, product = measure_device(cupy, index, names, quick, tiny, lambda ctx, chosen: _run_with_progress(ctx, chosen, fmt))
    if fmt == "table":
        from .probe_render import render_probe

        render_probe(console(), doc, product)
    return doc


def _run_with_progress(ctx, names: list[str], fmt: str):
    from ..probes.suite import run_probes

    if fmt != "table" or not sys.stderr.isatty():
        return run_probes(ctx, names)
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(f"probing {ctx.device.name}", total=len(names))
        return run_probes(ctx, names, progress=lambda name: bar.advance(task))


def _save_spec(path: str, doc: dict) -> None:
    from ..probes.native import saved_spec, to_toml
    from ..specs.catalog import shipped_catalog
    from .fileio import output_error, write_atomically

    try:
        write_atomically(path, to_toml(saved_spec(doc, shipped_catalog())).encode())
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
