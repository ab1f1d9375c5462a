"""`tuneadvise lint`, `tuneadvise diff` and `tuneadvise schema`: thin commands
over advisor.lint (advisor.lint.run, advisor.lint.baseline, advisor.lint.config)."""

from __future__ import annotations

import json
import sys

import click

from ..advisor.launch import MAX_SM_COUNT
from ..advisor.text import json_line
from .common import (
    EXIT_BAD_INPUT,
    EXIT_FINDINGS,
    EXIT_OK,
    BadInput,
    arch_list,
    block_dims,
    choose_format,
    cycle_collection_paused,
    rule_selection,
    stdout_is_terminal,
)
from .compile_options import build_options, build_settings, compiling
from .options import ignore_option, select_option

LINT_FORMATS = ("table", "json", "sarif", "github", "junit", "csv", "markdown")


def _load_config(explicit: str | None, paths: list[str]):
    """The config: --config, a config file among the inputs, or the project's (tuneadvise.toml, pyproject.toml)."""
    from ..advisor.lint.settings import NO_CONFIG, find_project_config, is_config_path

    named = [p for p in paths if p != "-" and is_config_path(p)]
    if explicit and named or len(named) > 1:
        raise BadInput(f"FILES: at most one config file; got {', '.join(([explicit] if explicit else []) + named)}")
    path = explicit or (named[0] if named else None) or find_project_config()
    if path is None:
        return NO_CONFIG, "", [p for p in paths if p not in named]
    from ..advisor.lint.config import ConfigError, load_config  # pydantic: only for a config file

    try:
        return load_config(path), str(path), [p for p in paths if p not in named]
    except ConfigError as exc:
        raise BadInput(str(exc)) from None


def _options(config, config_path, arch, block_size, select, ignore, fail_on, min_occupancy, sm_count=None):
    from ..advisor.lint.run import LintOptions
    from ..advisor.lint.settings import product_sm_counts

    archs = arch_list(arch)
    try:
        products = product_sm_counts(arch)
    except ValueError as exc:
        raise BadInput(f"--arch: {exc}") from None
    dims = block_dims(block_size) if block_size is not None else None
    selection = rule_selection(select if select is not None else ",".join(config.select),
                               ignore if ignore is not None else ",".join(config.ignore))
    return LintOptions(config=config, archs=archs, block_size=dims, selection=selection,
                       fail_on=fail_on or config.fail_on, min_occupancy=min_occupancy, config_path=config_path,
                       sm_count=sm_count, product_sm_counts=products)


def _write(text, output: str | None, option: str = "--output") -> None:
    """Write `text`: a str, or an iterable of str chunks as a serializer yields them (a lint
    report can be tens of megabytes), as UTF-8, to stdout or `output` (given by `option`)."""
    chunks = (chunk.encode("utf-8", "surrogatepass") for chunk in ([text] if isinstance(text, str) else text))
    if output is None:
        binary = getattr(sys.stdout, "buffer", None)  # None where a caller swapped in a text-only stream
        if binary is None:
            sys.stdout.writelines(chunk.decode("utf-8") for chunk in chunks)
            return
        sys.stdout.flush()  # anything already written as text goes first
        for chunk in chunks:  # write(), not writelines(): a wrapper that tees output may override write alone
            binary.write(chunk)
        binary.flush()
        return
    from .fileio import output_error, write_atomically

    try:
        write_atomically(output, chunks)
    except OSError as exc:
        raise output_error(exc, option, output) from None


LINT_HELP = """Lint kernels from build output: ptxas -v logs, cuobjdump listings,
cubins and fatbins (.o, .so, executables), with launch settings and
budgets from a config, and CUDA sources for locations and suppressions.
A directory is walked: Triton/TorchInductor and CuPy kernel caches are
linted as those frameworks launch their kernels (docs/python.md).

CUDA sources given with no build output are compiled for each --arch
with NVIDIA's compiler (pip install 'tuneadvise[nvcc]', CUDA_HOME or
PATH) and linted from ptxas's own report; so are the .cu entries of
--compile-commands, each with its own flags.

\b
Examples:
  nvcc -Xptxas -v -c k.cu 2> build.log && tuneadvise lint build.log k.cu
  tuneadvise lint k.cu --arch sm_80 --arch sm_90 -I include -D TILE=32
  tuneadvise lint --compile-commands build/compile_commands.json --arch sm_90
  tuneadvise lint build/libkernels.so --config tuneadvise.toml --format sarif -o lint.sarif
  tuneadvise lint ~/.triton/cache
\b
Exit codes: 0 clean; 1 findings at or above --fail-on (new or worse ones,
with --baseline); 2 bad input (a malformed line, or a source the
compiler rejects, is reported, the rest is still linted) or usage; 3 a
source to compile and no CUDA compiler, or --sass and no nvdisasm.
"""


@click.command(help=LINT_HELP)
@click.argument("files", nargs=-1, type=click.Path(allow_dash=True))
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="Config file (TOML, YAML or JSON). Default: tuneadvise.toml or [tool.tuneadvise] in pyproject.toml.")
@click.option("--arch", "-a", multiple=True, help="Lint only these architectures (repeatable): sm_90, hopper, 9.0...")
@click.option("--block-size", "-b", help="Block size for kernels no [[kernels]] entry configures (default 256).")
@select_option()
@ignore_option()
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), help="Exit 1 at or above this severity (default error).")
@click.option("--min-occupancy", type=click.FloatRange(0, 1), help="Every kernel's theoretical occupancy at least (0-1).")
@click.option("--sm-count", type=click.IntRange(1, MAX_SM_COUNT),
              help="SMs on the device, for the grid rules with a kernel's grid_size (default: the product's).")
@click.option("--format", "fmt", type=click.Choice(LINT_FORMATS),
              help="Default: table (human text), or TUNEADVISE_FORMAT; json with --output.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, readable=False),
              help="Write the report here (atomically) instead of stdout.")
@click.option("--statistics", is_flag=True, help="Count findings per code instead of listing them.")
@click.option("--baseline", type=click.Path(dir_okay=False, readable=False),
              help="Accept the findings recorded in this file; fail on new or worse ones.")
@click.option("--update-baseline", is_flag=True, help="Write today's findings to --baseline and exit 0.")
@click.option("--allow-regressions", is_flag=True,
              help="With --baseline: a kernel below the baseline's occupancy fails only through --fail-on.")
@click.option("--sass/--no-sass", "sass", default=None,
              help="Read each cubin's machine code with nvdisasm: spill bytes and sites, register peaks "
                   "(default: where nvdisasm is installed; --sass requires it).")
@click.option("--verbose", is_flag=True,
              help="Text: each kernel's instruction summary too (math, loads and stores by width, barriers).")
@build_options
@click.pass_context
def lint(ctx, files, config_file, arch, block_size, select, ignore, fail_on, min_occupancy, sm_count, fmt, output,
         statistics, baseline, update_baseline, allow_regressions, sass, verbose, include_dirs, defines, nvcc_flags,
         compile_commands, jobs, no_cache, compile_timeout, compile_memory):
    config, config_path, inputs = _load_config(config_file, list(files))
    build = build_settings(include_dirs, defines, nvcc_flags, compile_commands, jobs, no_cache,
                           compile_timeout, compile_memory)
    inputs = _inputs(config, config_path, inputs, compile_commands)
    if update_baseline and not baseline:
        raise BadInput("--update-baseline: needs --baseline FILE")
    options = _options(config, config_path, arch, block_size, select, ignore, fail_on, min_occupancy, sm_count)
    options.allow_regressions = allow_regressions
    options.machine_code = sass
    with cycle_collection_paused():
        _lint(ctx, options, inputs, build, output, (fmt, verbose), statistics, baseline, update_baseline)


def _inputs(config, config_path, inputs: list[str], compile_commands) -> list[str]:
    """The files named on the command line, else the config's inputs (relative to the config's folder)."""
    if inputs or compile_commands:
        return inputs
    if not config.inputs:
        raise BadInput("FILES: nothing to lint; name build output (ptxas logs, cuobjdump listings, "
                       "cubins, .o/.so files) or set inputs in the config")
    from pathlib import Path

    base = Path(config_path).parent if config_path else Path(".")
    return [str(base / p) for p in config.inputs]



def _terminal_text(text: str) -> str:
    from ..advisor.text import terminal_text

    return terminal_text(text)


def _stdin_text():
    """Standard input as text decoded like an input file (UTF-8, an undecodable byte replaced),
    whatever the locale: a log piped from a build may hold any bytes."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:
        return sys.stdin
    return (line.decode("utf-8", "replace") for line in buffer)  # a wrapper would close stdin when collected


def _lint_or_compile(inputs, options, build):
    from ..advisor.lint.run import lint_paths

    return compiling(lint_paths, inputs, options, stdin=_stdin_text(), build=build)


def _lint(ctx, options, inputs, build, output, text_format, statistics, baseline, update_baseline):
    from ..advisor.lint import baseline as ratchet
    from ..advisor.lint.document import lint_document
    from .fileio import check_writable

    fmt, verbose = text_format  # the format asked for, and whether text shows instruction summaries
    check_writable(output, "--output")
    check_writable(baseline if update_baseline else None, "--baseline")
    recorded = None
    if baseline and not update_baseline:
        try:
            recorded = ratchet.load(baseline)
        except ratchet.BaselineError as exc:
            raise BadInput(str(exc)) from None
        options.previous_registers = ratchet.recorded_registers(recorded)
    report = _lint_or_compile(inputs, options, build)
    if update_baseline:
        _write(json.dumps(ratchet.build(report), indent=1, sort_keys=True) + "\n", baseline, "--baseline")
        click.echo(f"tuneadvise: wrote {len(report.kernels)} kernel(s) to {baseline}", err=True)
        ctx.exit(EXIT_BAD_INPUT if report.problems else EXIT_OK)
    comparison = ratchet.compare(report, recorded) if recorded is not None else None
    doc = lint_document(report, options.fail_on, comparison, _version(), options.allow_regressions)
    fmt = choose_format(fmt, LINT_FORMATS) if output is None else (fmt or "json")
    for problem in report.problems:
        click.echo(f"tuneadvise: bad input: {_terminal_text(str(problem))}", err=True)
    for warning in report.warnings:
        click.echo(f"tuneadvise: warning: {warning}", err=True)
    if statistics:
        _write(_statistics(doc, fmt), output)
    elif fmt == "table":
        from .lint_render import render_lint

        _write(render_lint(doc, terminal=False if output else None, verbose=verbose,
                           only_with_findings=bool(options.selection.select)), output)
    else:
        from ..advisor.lint.formats import SERIALIZERS

        _write(SERIALIZERS[fmt](doc), output)
    if report.problems:
        ctx.exit(EXIT_BAD_INPUT)
    ctx.exit(EXIT_OK if doc.summary["passed"] else EXIT_FINDINGS)


def _statistics(doc, fmt: str) -> str:
    from ..advisor.queries.lint_statistics import statistics_query

    document = statistics_query(doc)
    if fmt == "json":
        return json_line(document) + "\n"
    from .lint_render import output_width, wrap

    rows = document["statistics"]
    width = max((len(str(row["count"])) for row in rows), default=1)
    head = [f"{row['count']:>{width}}  {row['code']}  {row['severity']:<7}  " for row in rows]
    return "".join("\n".join(wrap(row["name"], output_width(), first, " " * (width + 2))) + "\n"
                   for first, row in zip(head, rows))


def _version() -> str:
    from .version import __version__

    return __version__


@click.command()
@click.argument("old", type=click.Path(dir_okay=False))
@click.argument("new", type=click.Path(dir_okay=False))
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Launch settings for the occupancy figures.")
@click.option("--arch", "-a", multiple=True, help="Compare only these architectures.")
@click.option("--block-size", "-b", help="Block size for kernels no [[kernels]] entry configures (default 256).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]))
@click.pass_context
def diff(ctx, old, new, config_file, arch, block_size, fmt):
    """Compare two builds' resource usage kernel by kernel (ptxas logs,
    cuobjdump listings or binaries) and flag regressions: more registers,
    shared memory or spills, or lower occupancy.

    Exit codes: 0 no regression; 1 regressions; 2 bad input.
    """
    from ..advisor.lint.diff import diff_paths
    from ..advisor.lint.formats import diff_json_chunks

    if old == new == "-":
        raise BadInput("OLD and NEW: at most one of them may be '-' (standard input is read once)")
    config, config_path, _ = _load_config(config_file, [])
    options = _options(config, config_path, arch, block_size, None, None, None, None)
    doc = compiling(diff_paths, old, new, options, stdin=_stdin_text())
    for problem in doc.problems:
        click.echo(f"tuneadvise: bad input: {_terminal_text(str(problem))}", err=True)
    if doc.problems:  # no report: a side missing kernels would show them as added or removed
        ctx.exit(EXIT_BAD_INPUT)
    fmt = choose_format(fmt)
    _write(diff_json_chunks(doc) if fmt == "json" else _diff_text(doc, markdown=fmt == "markdown"), None)
    ctx.exit(EXIT_FINDINGS if doc.summary["regressed"] else EXIT_OK)


def _diff_text(doc, markdown: bool) -> str:
    """The changed kernels, one row each (a Markdown table, or lines that wrap between words at
    the output's width), then the counts."""
    from ..advisor.text import markdown_text, terminal_text
    from .lint_render import output_width, wrap

    rows = [r for r in doc.kernels() if r["status"] != "unchanged"]
    s = doc.summary
    summary = (f"{s['regressed']} regressed, {s['improved']} improved, {s['added']} added, {s['removed']} removed, "
               f"{s['unchanged']} unchanged")
    if markdown:
        out = ["| kernel | arch | status | changes |", "| --- | --- | --- | --- |"]
        out += [f"| {markdown_text(r['demangled'])} | {r['arch']} | {r['status']} | "
                f"{markdown_text('; '.join(r['changes']) or '-')} |" for r in rows]
        return "\n".join(out + [summary]) + "\n"
    width = output_width()
    out = []
    for r in rows:
        out += wrap(f"{terminal_text(r['demangled'])} [{r['arch']}]: {'; '.join(r['changes']) or '-'}", width,
                    f"{r['status']:<10} ", " " * 11)
    return "\n".join(out + wrap(summary, width)) + "\n"


@click.command()
@click.argument("what", type=click.Choice(["config", "lint"]), default="config")
def schema(what):
    """Print a JSON Schema: of the lint config file (default), or of `lint --format json`."""
    if what == "config":
        from ..advisor.lint.config import json_schema

        document = json_schema()
    else:
        from ..advisor.lint.schema import LINT_OUTPUT_SCHEMA as document
    sys.stdout.write(json.dumps(document, indent=2 if stdout_is_terminal() else None) + "\n")
