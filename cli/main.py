"""Entry point: a click group whose subcommands are imported only when run,
so `tuneadvise occupancy` does not pay for rich, pydantic or CuPy.

The group also owns how every command ends (README, "Exit codes"): errors as
one line in one style, Ctrl-C as 130, a reader that went away (`| head -1`)
as 141 without a word, output that cannot be written (stdout full or closed)
as one line and 74, and a defect of tuneadvise as one line naming it and 70,
with the traceback only under --debug. SIGTERM and SIGHUP end it as they
always would, after stopping the compilers it started (`main`).
"""

from __future__ import annotations

import errno
import re
import sys

import click

from ..specs.records import DEFAULT_RELEASE
from .version import __version__

# command name -> "module:function" under tuneadvise.cli
COMMANDS = {
    "occupancy": "occupancy_cmd:occupancy",
    "suggest": "suggest_cmd:suggest",
    "max-dynamic-smem": "max_dynamic_smem_cmd:max_dynamic_smem",
    "specs": "specs_cmd:specs",
    "rules": "rules_cmd:rules",
    "explain": "rules_cmd:explain",
    "check-source": "source_cmd:check_source",
    "probe": "probe_cmd:probe",
    "verify": "probe_cmd:verify",
    "roofline": "roofline_cmd:roofline",
    "lint": "lint_cmd:lint",
    "diff": "lint_cmd:diff",
    "schema": "lint_cmd:schema",
    "frontier": "frontier_cmd:frontier",
    "tune": "tune_cmd:tune",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        # __import__ rather than importlib.import_module: every command starts here, and importlib is one more module to load.
        return getattr(__import__(f"tuneadvise.cli.{module}", fromlist=[attr]), attr)

    # Here, before click's main would make a closed pipe a plain exit 1: in the command, and in
    # the group's own --help and --version (printed while the arguments are parsed). And here, the
    # one place where the library's bad-input error becomes a usage error (exit 2), naming the
    # option; a ParamType (cli/params.py) does the same for a value it converts.
    def invoke(self, ctx):
        from ..specs.errors import InputError
        from .common import BadInput

        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            _reader_went_away()
        except InputError as exc:
            raise BadInput(exc.as_option()) from None

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent, **extra)
        except BrokenPipeError:
            _reader_went_away()

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        args = sys.argv[1:] if args is None else list(args)

        def parse_and_run():
            _refuse_nul(args)
            return super(LazyGroup, self).main(args, prog_name, complete_var, False, **extra)

        sys.exit(_run(parse_and_run, debug="--debug" in args))


def _refuse_nul(args: list) -> None:
    """No argument of a real command line holds a NUL byte (the OS cannot pass one); one given to
    `cli(...)` in-process would reach os.stat through click's path checks, which raise ValueError."""
    for number, arg in enumerate(args, 1):
        if isinstance(arg, str) and "\0" in arg:
            option, equals, _ = arg.partition("=")
            before = args[number - 2] if number > 1 else ""
            if not (_OPTION_NAME.fullmatch(option) and equals):  # `--name=value`, else the value of `--name`
                option = before if isinstance(before, str) and _OPTION_NAME.fullmatch(before) else f"argument {number}"
            raise click.UsageError(f"{option}: holds a NUL byte, which no command-line argument can")


# What names an option (`--grid-size`, `-b`): `-000...=` given as a value is no option's name.
_OPTION_NAME = re.compile(r"--?[A-Za-z][A-Za-z0-9-]{0,40}")


def _reader_went_away():
    from .common import EXIT_BROKEN_PIPE

    _silence_stdout()
    raise click.exceptions.Exit(EXIT_BROKEN_PIPE) from None


class _Closed:
    """Stands in for a stream the process was started without (`>&-`, `<&-`): reading gives
    end of input, writing fails as writing to a closed descriptor does."""

    def __init__(self, name: str):
        self.name = name

    def read(self, *_):
        return ""

    def readline(self, *_):
        return ""

    def __iter__(self):
        return iter(())

    def write(self, _):
        raise OSError(errno.EBADF, f"{self.name} is closed")

    def flush(self):
        pass

    def isatty(self):
        return False

    @property
    def buffer(self):
        """The binary stream beneath (what `--batch -` reads): as closed as this one."""
        return _ClosedBinary(self.name)


class _ClosedBinary(_Closed):
    def read(self, *_):
        return b""

    def readline(self, *_):
        return b""


# Writing failed for want of room or of a place to write: stdout full (> /dev/full), closed, or a
# file the command writes (--plot, lint -o) on a full disk.
_OUTPUT_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EBADF})


def _run(command, debug: bool) -> int:
    """Run the command and turn how it ended into the exit code (cli/common's EXIT_*)."""
    from . import common

    if sys.stdin is None:
        sys.stdin = _Closed("stdin")
    if sys.stdout is None:
        sys.stdout = _Closed("stdout")
    _replace_unencodable(sys.stdout)
    try:
        try:
            code = command()
        except SystemExit as exc:  # sys.exit in a command (fail_unavailable)
            code = exc.code
        code = code if isinstance(code, int) else 0
        sys.stdout.flush()  # a full disk shows here, not in the interpreter's last flush
        return code
    except click.UsageError as exc:
        click.echo(common.error_line(common.usage_error_text(exc)), err=True)
        return exc.exit_code
    except click.ClickException as exc:  # click.FileError and the like: bad input by another name
        click.echo(common.error_line(exc.format_message()), err=True)
        return common.EXIT_BAD_INPUT
    except (KeyboardInterrupt, click.Abort):
        click.echo("", err=True)  # end the line the terminal's ^C left
        return common.EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return common.EXIT_BROKEN_PIPE
    except OSError as exc:
        if exc.errno not in _OUTPUT_ERRORS:
            return _internal(exc, debug)
        _silence_stdout()
        where = f"{exc.filename}: " if exc.filename else ""
        click.echo(common.error_line(f"cannot write the output: {where}{exc.strerror or exc}"), err=True)
        return common.EXIT_OUTPUT
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, not a traceback
        return _internal(exc, debug)


def _replace_unencodable(stream) -> None:
    """Output to an encoding that lacks a character (PYTHONIOENCODING=ascii, a C locale) shows '?'
    for it rather than ending the command: text is drawn in ASCII there where it can be."""
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "").replace("_", "")
    if not encoding.startswith("utf") and hasattr(stream, "reconfigure"):
        stream.reconfigure(errors="replace")


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no descriptor: a replaced or closed stream
        sys.stdout = _Closed("stdout")


def _internal(exc: BaseException, debug: bool) -> int:
    from . import common

    if debug:
        import traceback

        traceback.print_exception(exc)
    hint = "" if debug else "; run with --debug for the traceback"
    click.echo(common.error_line(f"internal error: {type(exc).__name__}: {exc} (a defect in tuneadvise{hint})"), err=True)
    return common.EXIT_INTERNAL


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tuneadvise",
                      message=f"%(prog)s, version %(version)s (occupancy exact to cuda_occupancy.h of CUDA {DEFAULT_RELEASE})")
@click.option("--debug", is_flag=True, expose_value=False, help="Show the traceback of an internal error.")
def cli():
    """Occupancy and tuning advisor for CUDA kernels.

    Exit codes: 0 success; 1 the configuration cannot launch (lint: findings);
    2 bad input or usage; 3 a needed optional part is missing (CuPy or a GPU
    for probe, verify and --arch native; matplotlib for --plot); 70 an internal
    error; 74 the output could not be written; 130 interrupted; 141 the reader
    of the output went away.
    """


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: raised in the main thread so that what is running is stopped on the
    way out (the compilers, each in its own process group, which a signal to tuneadvise or to its
    group never reaches, and their temporary folders), then the signal ends the process as before."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _terminate(signum, _frame):
    raise Terminated(signum)


def main():
    import gc
    import os
    import signal

    # Everything allocated so far (the interpreter's, click's and this module's objects) lives as long as
    # the process: kept out of every later collection rather than walked again by each one.
    gc.freeze()

    # Only where the signal would kill the process anyway: `nohup` (SIGHUP ignored) keeps its meaning.
    caught = [s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None))
              if s is not None and signal.getsignal(s) == signal.SIG_DFL]
    for signum in caught:
        signal.signal(signum, _terminate)
    try:
        cli(prog_name="tuneadvise")
    except Terminated as exc:
        signal.signal(exc.signum, signal.SIG_DFL)
        os.kill(os.getpid(), exc.signum)  # ended by the signal, as the caller sent it (status 128 + signal)
        raise SystemExit(128 + exc.signum) from None  # where the signal does not end it at once
