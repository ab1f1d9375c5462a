"""`tuneadvise tune`: the candidates the advice believes in, timed on the GPU through Kernel
Tuner (a .cu kernel) or Triton's do_bench (a .py file of triton.Configs), each verdict beside
its measured time (a thin command over advisor/queries/tune.py)."""

from __future__ import annotations

import sys

import click

from ..advisor.launch import MAX_SM_COUNT
from .common import EXIT_FINDINGS, EXIT_OK, choose_format, emit, error_line, fail_unavailable, output_width
from .compile_options import build_options, build_settings, compiling
from .layout import wrap
from .options import arch_option, block_shape_option, format_option
from .params import ArchName, Count, FilePath


@click.command(help="""Time the changes tuneadvise proposes for one kernel, on this machine's GPU. For FILE.cu:
the register caps at every occupancy cliff (each built first with ptxas and written as
__launch_bounds__(B, N) in a copy of the source) and the block sizes where occupancy changes, pruned
to those that launch, handed to Kernel Tuner (its cuda-python backend where cuda-bindings is installed, else CuPy) to
compile and time with the arguments ARGS.py makes
(Kernel Tuner's convention: `arguments` and `problem_size`). For FILE.py: its `configs`
(triton.Configs) timed with Triton's do_bench through its `bench(config)`. Prints each candidate's
verdict beside its measured time, the fastest, and where prediction and measurement disagreed.

\b
Example:
  tuneadvise tune saxpy.cu --args saxpy_args.py --arch sm_90 --block-size 256
\b
Exit codes: 0 done; 1 the runner failed on this machine (its error in one
line); 2 bad input; 3 no GPU, Kernel Tuner (with cuda-python or CuPy) or
Triton, or no CUDA compiler.""")
@click.argument("file", type=FilePath(dir_okay=False))
@arch_option(help="The GPU's architecture: sm_90, hopper, 9.0...", required=True, type=ArchName())
@click.option("--args", "args_file", type=FilePath(dir_okay=False), help="Python file making the arguments (.cu).")
@block_shape_option("The kernel's block size today: 256 or 16x16.", default="256", show_default=True)
@click.option("--kernel", "-k", "kernel_glob", help="The kernel of FILE to tune, where it holds several.")
@click.option("--sm-count", type=Count(1, MAX_SM_COUNT), help="SMs of the GPU (for the grid's waves).")
@click.option("--iterations", type=Count(1, 1000), default=7, show_default=True, help="Timed runs each.")
@format_option()
@build_options(compile_commands=False)
@click.pass_context
def tune(ctx, file, arch, args_file, block_size, kernel_glob, sm_count, iterations, fmt, include_dirs, defines,
         nvcc_flags, jobs, no_cache, compile_timeout, compile_memory):
    from ..advisor.queries.tune import tune_query

    settings = build_settings(include_dirs, defines, nvcc_flags, None, jobs, no_cache, compile_timeout,
                              compile_memory)
    document = compiling(timing, tune_query, file, arch, args_file, block_size, kernel_glob, None,
                         sm_count, iterations, settings)
    emit(choose_format(fmt), document, lambda: click.echo(tune_text(document, output_width())))
    ctx.exit(EXIT_OK)


def timing(function, *args):
    """Run the tune query: a part missing here is exit 3, a runner that fails on this machine exit 1,
    each one line."""
    from ..advisor.tune import TuneMissing, TuneRunFailed

    try:
        return function(*args)
    except TuneMissing as exc:
        fail_unavailable(str(exc))
    except TuneRunFailed as exc:
        click.echo(error_line(str(exc)), err=True)
        sys.exit(EXIT_FINDINGS)


def tune_text(document: dict, width: int = 80) -> str:
    """One line per candidate: its change, occupancy, verdict, time and what was measured."""
    out = wrap(f"{document['kernel']} [{document['arch']}] on {document['device']}, timed by {document['runner']} "
               f"(noise {document['noise']:.1%})", width, "", "    ")
    for index, row in enumerate(document["candidates"]):
        time = "not timed" if row["time_ms"] is None else f"{row['time_ms']:.4g} ms"
        mark = " (fastest)" if index == document["best"] else ""
        said = {True: "; as predicted", False: "; DISAGREES with the verdict", None: ""}[row["agrees"]]
        out += wrap(f"{row['label']}: {row['blocks_per_sm']} blocks/SM, {row['occupancy']:.1%}; verdict "
                    f"{row['verdict']['outcome'].replace('_', ' ')}; {time}, {row['measured'] or '-'}{mark}{said}",
                    width, "  ", "    ")
    out.append(f"disagreements: {len(document['disagreements'])} of {document['predictions']} predictions")
    return "\n".join(out)
