"""Entry point: a click group whose subcommands are imported only when run,
so `tuneadvise occupancy` does not pay for rich, pydantic or CuPy."""

from __future__ import annotations

import click

from tuneadvise.cli.version import __version__

# command name -> "module:function" under tuneadvise.cli
COMMANDS = {
    "occupancy": "occupancy_cmd:occupancy",
    "suggest": "suggest_cmd:suggest",
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
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        # __import__ rather than importlib.import_module: importing importlib costs ~1 ms of start-up.
        return getattr(__import__(f"tuneadvise.cli.{module}", fromlist=[attr]), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tuneadvise")
def cli():
    """Occupancy and tuning advisor for CUDA kernels.

    \b
    Exit codes: 0 success; 1 the configuration cannot launch; 2 bad input or
    usage; 3 a needed optional part is missing (CuPy or a GPU for probe,
    verify and --arch native; matplotlib for --plot).
    """


def main():
    cli(prog_name="tuneadvise")
