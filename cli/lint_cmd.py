"""`tuneadvise lint`, `tuneadvise diff` and `tuneadvise schema`: options, a call of the
query (advisor/queries/lint.py) and the renderer or serializer of its document."""

from __future__ import annotations

import json
import sys

import click

from ..advisor.launch import MAX_SM_COUNT
from .common import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK, choose_format, cycle_collection_paused, emit, report_inputs, stdout_is_terminal
from .compile_options import build_options, build_settings, compiling
from .fileio import stdin_text, write_text
from .options import arch_names_option, block_shape_option, ignore_option, select_option
from .params import Count, FilePath, Number

LINT_FORMATS = ("table", "json", "sarif", "github", "junit", "csv", "markdown")
BLOCK_HELP = "Block size for kernels no [[kernels]] entry configures (default 256)."


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
  nvcc -Xptxas -v -c k.cu 2> build.log
  tuneadvise lint build.log k.cu
  tuneadvise lint k.cu --arch sm_80 --arch sm_90 -I include -D TILE=32
  tuneadvise lint --compile-commands build/compile_commands.json --arch sm_90
  tuneadvise lint build/libkernels.so --format sarif -o lint.sarif
  tuneadvise lint ~/.triton/cache
\b
Exit codes: 0 clean; 1 findings at or above --fail-on (new or worse ones,
with --baseline); 2 bad input (a malformed line, or a source the
compiler rejects, is reported, the rest is still linted) or usage; 3 a
source to compile and no CUDA compiler, or --sass and no nvdisasm.
"""


@click.command(help=LINT_HELP)
@click.argument("files", nargs=-1, type=FilePath(allow_dash=True))
@click.option("--config", "config_file", type=FilePath(dir_okay=False),
              help="Config file (TOML, YAML or JSON). Default: tuneadvise.toml or [tool.tuneadvise] in pyproject.toml.")
@arch_names_option("Lint only these architectures (repeatable): sm_90, hopper, 9.0...")
@block_shape_option(BLOCK_HELP)
@select_option()
@ignore_option()
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), help="Exit 1 at or above this severity (default error).")
@click.option("--min-occupancy", type=Number(0, 1), help="Every kernel's theoretical occupancy at least (0-1).")
@click.option("--sm-count", type=Count(1, MAX_SM_COUNT),
              help="SMs on the device, for the grid rules with a kernel's grid_size (default: the product's).")
@click.option("--format", "fmt", type=click.Choice(LINT_FORMATS),
              help="Default: table (human text), or TUNEADVISE_FORMAT; json with --output.")
@click.option("--output", "-o", type=FilePath(dir_okay=False, readable=False),
              help="Write the report here (atomically) instead of stdout.")
@click.option("--statistics", is_flag=True, help="Count findings per code instead of listing them.")
@click.option("--baseline", type=FilePath(dir_okay=False, readable=False),
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
    from ..advisor.queries.lint import choose_config, lint_inputs, lint_options

    choice = choose_config(config_file, files)
    build = build_settings(include_dirs, defines, nvcc_flags, compile_commands, jobs, no_cache,
                           compile_timeout, compile_memory)
    inputs = lint_inputs(choice, compile_commands)
    options = lint_options(choice, arch, block_size, select, ignore, fail_on, min_occupancy, sm_count,
                           allow_regressions=allow_regressions, machine_code=sass)
    with cycle_collection_paused():
        _lint(ctx, options, inputs, build, (output, fmt, verbose, statistics), baseline, update_baseline)


def _lint(ctx, options, inputs, build, shown, baseline, update_baseline):
    """The run through the query; its baseline written, or its report in the format asked for."""
    from ..advisor.queries.lint import lint_query
    from .fileio import check_writable

    output, fmt, verbose, statistics = shown
    check_writable(output, "--output")
    check_writable(baseline if update_baseline else None, "--baseline")
    answer = compiling(lint_query, inputs, options, build, stdin_text(), baseline, update_baseline, _version())
    if answer.baseline is not None:
        write_text(answer.baseline, baseline, "--baseline")
        click.echo(f"tuneadvise: wrote {answer.kernels} kernel(s) to {baseline}", err=True)
        ctx.exit(EXIT_BAD_INPUT if answer.bad_input else EXIT_OK)
    report_inputs(answer.problems, answer.warnings)
    fmt = choose_format(fmt, LINT_FORMATS) if output is None else (fmt or "json")
    _report(answer.document, fmt, output, statistics, verbose)
    ctx.exit(EXIT_BAD_INPUT if answer.bad_input else EXIT_OK if answer.passed else EXIT_FINDINGS)


def _report(doc, fmt: str, output: str | None, statistics: bool, verbose: bool) -> None:
    """The statistics (text, or their JSON document), or the report as text or in a machine format."""
    if statistics:
        from ..advisor.queries.lint import statistics_query
        from .lint_render import render_statistics

        counted = statistics_query(doc)
        emit("json" if fmt == "json" else "table", counted, lambda: write_text(render_statistics(counted), output),
             output=output)
        return
    from ..advisor.lint.formats import SERIALIZERS
    from .lint_render import render_lint

    emit(fmt, doc, lambda: write_text(render_lint(doc, terminal=False if output else None, verbose=verbose), output),
         SERIALIZERS, output)


def _version() -> str:
    from .version import __version__

    return __version__


@click.command()
@click.argument("old", type=FilePath(dir_okay=False))
@click.argument("new", type=FilePath(dir_okay=False))
@click.option("--config", "config_file", type=FilePath(dir_okay=False), help="Launch settings for the occupancy figures.")
@arch_names_option("Compare only these architectures.")
@block_shape_option(BLOCK_HELP)
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]))
@click.pass_context
def diff(ctx, old, new, config_file, arch, block_size, fmt):
    """Compare two builds' resource usage kernel by kernel (ptxas logs,
    cuobjdump listings or binaries) and flag regressions: more registers,
    shared memory or spills, or lower occupancy.

    Exit codes: 0 no regression; 1 regressions; 2 bad input.
    """
    from ..advisor.lint.formats import DIFF_SERIALIZERS
    from ..advisor.queries.lint import choose_config, diff_query, lint_options

    options = lint_options(choose_config(config_file, ()), arch, block_size)
    doc = compiling(diff_query, old, new, options, stdin=stdin_text())
    report_inputs(doc.problems)
    if doc.problems:  # no report: a side missing kernels would show them as added or removed
        ctx.exit(EXIT_BAD_INPUT)
    from .lint_render import render_diff

    fmt = choose_format(fmt)
    emit(fmt, doc, lambda: write_text(render_diff(doc), None), DIFF_SERIALIZERS)
    ctx.exit(EXIT_FINDINGS if doc.summary["regressed"] else EXIT_OK)


@click.command()
@click.argument("what", type=click.Choice(["config", "lint"]), default="config")
def schema(what):
    """Print a JSON Schema: of the lint config file (default), or of `lint --format json`."""
    if what == "config":
        from ..advisor.lint.config import json_schema

        document = json_schema()
    else:
        from ..advisor.lint.schema import LINT_OUTPUT_SCHEMA as document
    # A schema is JSON, its one form: indented for a reader on a terminal, one line for a program.
    sys.stdout.write(json.dumps(document, indent=2 if stdout_is_terminal() else None) + "\n")
