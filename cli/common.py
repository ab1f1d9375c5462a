"""What every command shares: exit codes, error reporting, output decisions.

Output: human text unless a machine format is asked for (`--format json`, or
the TUNEADVISE_FORMAT environment default); rich tables with colour on a
terminal, plain columns without colour or box-drawing otherwise, and never
colour under NO_COLOR. Errors: one line, `tuneadvise: error: WHAT: what is
wrong`, with echoed input clipped (advisor/text.py's `clip`).
"""

from __future__ import annotations

import gc
import os
import sys
from contextlib import contextmanager

import click

from ..advisor.text import clip

EXIT_OK = 0
EXIT_FINDINGS = 1  # cannot launch, or findings at or above --fail-on
EXIT_BAD_INPUT = 2  # malformed or impossible input, unknown names, usage errors
EXIT_UNAVAILABLE = 3  # a needed optional part is missing: CuPy or a GPU, matplotlib for --plot
EXIT_INTERNAL = 70  # a defect in tuneadvise (sysexits' EX_SOFTWARE): one line, the traceback under --debug
EXIT_OUTPUT = 74  # the output could not be written: stdout full or closed (sysexits' EX_IOERR)
EXIT_INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as a shell reports it
EXIT_BROKEN_PIPE = 141  # the reader went away (| head -1): 128 + SIGPIPE, as a shell reports it

FORMAT_VARIABLE = "TUNEADVISE_FORMAT"  # the default --format where a command offers that format


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


def error_line(message: str) -> str:
    """The one error style of every command."""
    return f"tuneadvise: error: {clip(message)}"


class BadInput(click.UsageError):
    """One-line bad-input error; click prints it and exits with EXIT_BAD_INPUT."""

    exit_code = EXIT_BAD_INPUT

    def show(self, file=None):
        click.echo(error_line(self.format_message()), err=True)


def usage_error_text(exc: click.UsageError) -> str:
    """click's own usage errors in the one style: `--option: what is wrong`, or `FILE (argument):
    ...` for a positional argument, and where to read more."""
    if isinstance(exc, BadInput):
        return exc.format_message()
    param = getattr(exc, "param", None)
    if isinstance(exc, click.BadParameter) and param is not None:
        if isinstance(param, click.Argument):
            where = f"{param.human_readable_name} (argument)"
        else:
            where = max(param.opts, key=len)
        text = f"{where}: {'missing' if isinstance(exc, click.MissingParameter) else exc.message}"
    else:
        text = exc.format_message()
    command = exc.ctx.command_path if exc.ctx is not None else "tuneadvise"
    return f"{text} (see '{command} --help')"


def resolve_arch(arch: str, spec_file: str | None = None, cuda: str | None = None, clusters: bool = False):
    """--arch (and --spec-file, --cuda) -> Resolved (specs/resolve.py), or BadInput naming the option.
    `clusters`: the caller models clusters, so `--arch native` measures the device's GPC layout."""
    from ..specs.errors import InputError
    from ..specs.resolve import resolve

    try:
        return resolve(arch, spec_file, cuda, native=lambda: _native(clusters))
    except InputError as exc:
        raise BadInput(exc.as_option()) from None


def _native(clusters: bool):
    """--arch native through probes/ (exit 3 without a GPU)."""
    from ..probes.gpu import GpuUnavailable
    from ..probes.native import native_resolved

    try:
        return native_resolved("--arch native", clusters)
    except GpuUnavailable as exc:
        fail_unavailable(str(exc))


def fail_unavailable(sentence: str):
    """One sentence on stderr, exit EXIT_UNAVAILABLE: the command needs something not installed here."""
    click.echo(f"tuneadvise: {sentence}", err=True)
    sys.exit(EXIT_UNAVAILABLE)


def stdout_is_terminal() -> bool:
    stream = sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):  # closed, or replaced by something without a tty
        return False


def console():
    """A rich console: tables in colour on a terminal (none under NO_COLOR); elsewhere plain
    text, without colour or box-drawing, at the width COLUMNS gives (80 by default)."""
    from rich.console import Console

    # emoji=False: rich turns ':name:' into an emoji, and 'k.cu:100: ...' into 'k.cu💯 ...'.
    if stdout_is_terminal():
        return Console(no_color=bool(os.environ.get("NO_COLOR")), highlight=False, emoji=False)
    out = Console(file=_TrimmedLines(sys.stdout), no_color=True, highlight=False, emoji=False)
    out.push_render_hook(_PlainTables())
    return out


class _TrimmedLines:
    """A text stream that drops the spaces rich pads lines with, for plain-text output."""

    def __init__(self, stream):
        self.stream = stream
        self.pending = ""

    def write(self, text: str) -> int:
        *lines, self.pending = (self.pending + text).split("\n")
        if lines:
            self.stream.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self.pending:
            self.stream.write(self.pending.rstrip(" "))
            self.pending = ""
        self.stream.flush()

    def isatty(self) -> bool:
        return False


class _PlainTables:
    """A rich render hook that draws tables without borders, for output that is not a terminal:
    the columns stay aligned and the text stays greppable. (rich.console.RenderHook by duck
    typing: importing rich's class here would load rich for JSON output too.)"""

    def process_renderables(self, renderables):
        from rich.table import Table

        for renderable in renderables:
            if isinstance(renderable, Table):
                renderable.box = None
                renderable.title_justify = "left"
                renderable.pad_edge = False
        return renderables


def choose_format(requested: str | None, offered: tuple[str, ...] = ("table", "json")) -> str:
    """The --format asked for; else TUNEADVISE_FORMAT where this command offers that format;
    else 'table' (human text: tables on a terminal, plain text when piped)."""
    if requested:
        return requested
    default = os.environ.get(FORMAT_VARIABLE, "").strip().lower()
    return default if default in offered else "table"
