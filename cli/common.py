"""What every command shares: exit codes, error reporting, output decisions.

Output: human text unless a machine format is asked for (`--format json`, or
the TUNEADVISE_FORMAT environment default); rich tables with colour on a
terminal, plain columns without colour or box-drawing otherwise, and never
colour under NO_COLOR. Errors: one line, `tuneadvise: error: WHAT: what is
wrong`, with echoed input clipped (advisor/text.py's `clip`).
"""

from __future__ import annotations

import errno
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

    A lint of tens of thousands of kernels allocates millions of small objects,
    none of them in reference cycles, and the collector would walk the growing
    heap again and again for nothing. Reference counting still frees
    everything; collection resumes afterwards.
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


def report_inputs(problems=(), warnings=()) -> None:
    """On stderr, one line each: every input a command could not read (`tuneadvise: bad input:
    ...`, the rest still reported), then every note (`tuneadvise: warning: ...`); control
    characters escaped, as a file's name or a compiler's message may hold them."""
    from ..advisor.text import terminal_text

    for problem in problems:
        click.echo(f"tuneadvise: bad input: {terminal_text(str(problem))}", err=True)
    for warning in warnings:
        click.echo(f"tuneadvise: warning: {terminal_text(str(warning))}", err=True)


class BadInput(click.UsageError):
    """One-line bad-input error; click prints it and exits with EXIT_BAD_INPUT."""

    exit_code = EXIT_BAD_INPUT

    def show(self, file=None):
        click.echo(error_line(self.format_message()), err=True)


def require(command: str, **given) -> None:
    """BadInput naming every required option left out, as `--arch, --registers: required`;
    `given` maps option names (arch, block_size) to their values, None where not given."""
    missing = [f"--{name.replace('_', '-')}" for name, value in given.items() if value is None]
    if missing:
        raise BadInput(f"{', '.join(missing)}: required (see 'tuneadvise {command} --help')")


def rule_selection(select: str | None, ignore: str | None):
    """--select/--ignore (checked by their ParamType, cli/params.py) as a RuleSelection."""
    from ..advisor.rules import RuleSelection

    return RuleSelection.parse(select, ignore)


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


def resolved_arch(arch: str, spec_file: str | None = None, cuda: str | None = None, clusters: bool = False):
    """--arch (and --spec-file, --cuda) -> Resolved (specs/resolve.py); its InputError names the
    option (cli/main.py). `clusters`: the caller models clusters, so `--arch native` measures the
    device's GPC layout."""
    from ..specs.resolve import resolve

    return resolve(arch, spec_file, cuda, native=lambda: _native(clusters))


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


def colour_allowed(terminal: bool) -> bool:
    """Colour only on a terminal, and never under NO_COLOR: every human output's one rule."""
    return terminal and not os.environ.get("NO_COLOR")


def styled(text: str, style: str) -> str:
    """`text` in a rich style ('bold red') as rich writes it to a terminal: for text laid out
    line by line (lint's report), which a console would lay out again at many times the cost."""
    from rich.color import ColorSystem
    from rich.style import Style

    return Style.parse(style).render(text, color_system=ColorSystem.STANDARD)


DEFAULT_WIDTH = 80
MIN_WIDTH = 40  # narrower, a table's columns hold a word or less each


def text_width(terminal: bool) -> int:
    """The width of text for a terminal (its own) or for a file or pipe (COLUMNS, 80 by default,
    40 at least): every renderer, rich's console included, lays out to this one width."""
    if terminal:
        import shutil

        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    try:
        return max(MIN_WIDTH, int(os.environ.get("COLUMNS", DEFAULT_WIDTH)))
    except ValueError:
        return DEFAULT_WIDTH


def output_width() -> int:
    """The width text for stdout fits: the terminal's, else COLUMNS (80 by default)."""
    return text_width(stdout_is_terminal())


def console():
    """A rich console: tables in colour on a terminal (none under NO_COLOR); elsewhere plain
    text, without colour or box-drawing, at the width COLUMNS gives (80 by default)."""
    from rich.console import Console

    # emoji=False: rich turns ':name:' into an emoji, and 'k.cu:100: ...' into 'k.cu💯 ...'.
    if stdout_is_terminal():
        out = Console(no_color=not colour_allowed(True), highlight=False, emoji=False)
    else:
        lines = _TrimmedLines(sys.stdout)
        # The width given, not rich's own reading of COLUMNS: COLUMNS=0 made it print nothing at all.
        out = Console(file=lines, width=text_width(False), no_color=True, highlight=False, emoji=False)
        lines.width = out.width
        out.push_render_hook(_PlainTables(out))
    # rich ends the process with status 1 when the reader goes away; the command's end decides (141).
    out.on_broken_pipe = _reader_gone
    return out


def _reader_gone():
    raise BrokenPipeError(errno.EPIPE, "the reader of the output went away")


class _TrimmedLines:
    """A text stream that drops the spaces rich pads lines with, for plain-text output, and clips
    a line wider than the output (a single word longer than the width, which nothing can wrap)."""

    def __init__(self, stream, width: int | None = None):
        self.stream = stream
        self.width = width
        self.pending = ""

    def _fitted(self, line: str) -> str:
        line = line.rstrip(" ")
        if self.width is None or len(line) <= self.width:
            return line
        from ..advisor.text import clip

        return clip(line, self.width)

    def write(self, text: str) -> int:
        *lines, self.pending = (self.pending + text).split("\n")
        if lines:
            self.stream.write("".join(self._fitted(line) + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self.pending:
            self.stream.write(self._fitted(self.pending))
            self.pending = ""
        self.stream.flush()

    def isatty(self) -> bool:
        return False


class _PlainTables:
    """A rich render hook that draws tables without borders, for output that is not a terminal:
    the columns stay aligned and the text stays greppable. A table whose columns cannot stand
    side by side in the width (rich would cut its cells to '…') becomes a record per row, each
    cell on a line of its own after its column's header. (rich.console.RenderHook by duck
    typing: importing rich's class here would load rich for JSON output too.)"""

    def __init__(self, out):
        self.out = out

    def process_renderables(self, renderables):
        from rich.table import Table

        shown = []
        for renderable in renderables:
            if isinstance(renderable, Table):
                renderable.box = None
                renderable.title_justify = "left"
                renderable.pad_edge = False
                if renderable.__rich_measure__(self.out, self.out.options).minimum > self.out.width:
                    shown += _records(renderable)
                    continue
            shown.append(renderable)
        return shown


def _records(table) -> list:
    """A table as records: the first cell of a row, then each other cell indented after its header."""
    from rich.text import Text

    def plain(cell) -> str:
        return Text.from_markup(cell).plain if isinstance(cell, str) else getattr(cell, "plain", str(cell))

    lines = [Text(plain(table.title))] if table.title else []
    headers = [plain(column.header) for column in table.columns]
    for row in zip(*(column.cells for column in table.columns)):
        lines.append(Text(plain(row[0])))
        lines += [Text(f"  {header}: {plain(cell)}") for header, cell in zip(headers[1:], row[1:]) if plain(cell)]
    return lines


def choose_format(requested: str | None, offered: tuple[str, ...] = ("table", "json")) -> str:
    """The --format asked for; else TUNEADVISE_FORMAT where this command offers that format;
    else 'table' (human text: tables on a terminal, plain text when piped)."""
    if requested:
        return requested
    default = os.environ.get(FORMAT_VARIABLE, "").strip().lower()
    return default if default in offered else "table"


def emit(fmt: str, document, draw_table, serializers=None, output: str | None = None) -> None:
    """Print one command's answer in the chosen format, every format from the same document:
    'table', the human text `draw_table()` renders; a machine format, `serializers[fmt](document)`
    (text chunks) where the command offers one, else the document as one JSON line. To stdout,
    or to `output` (a machine format; `draw_table` writes its own)."""
    if fmt == "table":
        draw_table()
        return
    serialize = (serializers or {}).get(fmt)
    if serialize is None and output is None:
        from ..advisor.text import write_json_line

        write_json_line(document)
        return
    from ..advisor.text import json_line
    from .fileio import write_text

    write_text(serialize(document) if serialize is not None else json_line(document) + "\n", output)
