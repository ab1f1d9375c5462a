"""What every command shares: exit codes, error reporting, output decisions."""

from __future__ import annotations

import gc
import json
import os
import sys
from contextlib import contextmanager

import click

EXIT_OK = 0
EXIT_FINDINGS = 1  # cannot launch, or findings at or above --fail-on
EXIT_BAD_INPUT = 2  # malformed or impossible input, unknown names, usage errors
EXIT_UNAVAILABLE = 3  # a needed optional part is missing: CuPy or a GPU, matplotlib for --plot


@contextmanager
def cycle_collection_paused():
    """Pause CPython's cycle collector while a command builds large structures.

    A lint of 30,000 kernels allocates millions of small objects, none of them
    in reference cycles, and the collector would walk the growing heap again
    and again: about a tenth of the run (benchmarks/lint.py). Reference
    counting still frees everything; collection resumes afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class BadInput(click.UsageError):
    """One-line bad-input error; click prints it and exits with EXIT_BAD_INPUT."""

    exit_code = EXIT_BAD_INPUT

    def show(self, file=None):
        click.echo(f"tuneadvise: error: {self.format_message()}", err=True)


def resolve_arch(arch: str, spec_file: str | None = None):
    """--arch (and --spec-file) -> Resolved, or BadInput."""
    from tuneadvise.specs.catalog import UnknownArchError, load_user_spec, shipped_catalog

    if spec_file:
        from tuneadvise.specs.models import SpecFileError

        try:
            catalog, added = load_user_spec(spec_file)
        except SpecFileError as exc:
            raise BadInput(str(exc)) from None
        if arch is None and len(added) == 1:
            arch = added[0].cc
    elif arch is not None and arch.strip().lower() == "native":
        return native_arch()
    else:
        catalog = shipped_catalog()
    if arch is None:
        raise BadInput("--arch: missing; give a family (volta), sm_XX, X.Y or a product (h100-sxm)")
    try:
        return catalog.resolve(arch)
    except UnknownArchError as exc:
        raise BadInput(str(exc)) from None


def native_arch():
    """--arch native: the limits the local GPU's driver reports (exit 3 without one)."""
    from tuneadvise.probes.gpu import GpuUnavailable, device_info, load_cupy
    from tuneadvise.probes.native import native_catalog

    try:
        cupy = load_cupy("--arch native")
    except GpuUnavailable as exc:
        fail_unavailable(str(exc))
    return native_catalog(device_info(cupy, cupy.cuda.runtime.getDevice()).as_dict()).resolve("native")


def fail_unavailable(sentence: str):
    """One sentence on stderr, exit EXIT_UNAVAILABLE: the command needs something not installed here."""
    click.echo(f"tuneadvise: {sentence}", err=True)
    sys.exit(EXIT_UNAVAILABLE)


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def console():
    """A rich console that colours only a terminal and honours NO_COLOR."""
    from rich.console import Console

    return Console(no_color=bool(os.environ.get("NO_COLOR")), highlight=False)


def emit_json(document: dict) -> None:
    sys.stdout.write(json.dumps(document, separators=(",", ":")) + "\n")


def choose_format(requested: str | None) -> str:
    """'table' on a terminal, 'json' when piped, unless asked."""
    if requested:
        return requested
    return "table" if stdout_is_terminal() else "json"
