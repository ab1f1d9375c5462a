"""Click parameter types: each option's text converted once, at the edge, by the library's own
parser. A value the parser refuses raises the library's InputError, named after the option
(`block_size` for --block-size), which the command group turns into a usage error (exit 2) in
one place (cli/main.py): `--block-size: expected 1 to 3 dimensions ...`. No command catches a
parsing error itself.
"""

from __future__ import annotations

import click


def _field(param) -> str:
    """The option's longest name as a library field (`--block-size` -> `block_size`)."""
    return max(param.opts, key=len).lstrip("-").replace("-", "_") if param is not None else "value"


def _refused(param, message: str):
    from ..specs.errors import InputError

    if isinstance(param, click.Argument):  # named as the usage line shows it (FILES), not as an option
        return InputError(f"{param.human_readable_name}: {message}")
    return InputError(_field(param), message)


class LaunchValue(click.ParamType):
    """A launch value of advisor/launch.FIELDS (registers, sizes such as `64K`, a block shape, a
    carveout), checked by that field's own parser and kept as typed: LaunchConfig.from_mapping
    reads user values (a carveout's `default` is no percentage its parser would take back)."""

    def __init__(self, field):
        self.field = field
        self.name = field.key

    def convert(self, value, param, ctx):
        self.field.parse(value, self.field.key)
        return value


class BlockShape(click.ParamType):
    """Threads per block, `256` or `16x16`, as its dimensions."""

    name = "block shape"

    def convert(self, value, param, ctx):
        from ..advisor.inputs import parse_block

        return parse_block(value, _field(param))


class Count(click.ParamType):
    """A whole number from `low` to `high` (`--blocks-per-sm`, `--jobs`), digits 0-9 (click's
    IntRange takes full-width digits and underscores)."""

    name = "count"

    def __init__(self, low: int, high: int):
        self.low, self.high = low, high

    def convert(self, value, param, ctx):
        return self.parser()(value, _field(param), self.low, self.high)

    @staticmethod
    def parser():
        from ..advisor.inputs import parse_int

        return parse_int


class Number(Count):
    """A number from `low` to `high` (`--min-occupancy`), digits 0-9 (click's FloatRange takes
    full-width digits and NaN)."""

    name = "number"

    @staticmethod
    def parser():
        from ..advisor.inputs import parse_float

        return parse_float


class Quantity(click.ParamType):
    """A figure such as `1.5e12`, `1.5T` or `900G` (SI prefixes), as a float."""

    name = "quantity"

    def convert(self, value, param, ctx):
        from ..advisor.inputs import parse_quantity

        return parse_quantity(value, _field(param))


class ArchName(click.ParamType):
    """An architecture or product name of the shipped catalog (sm_90, hopper, 9.0, h100-sxm),
    checked and kept as typed: a product name still supplies its SM count downstream."""

    name = "architecture"

    def convert(self, value, param, ctx):
        from ..advisor.lint.settings import normalise_archs

        try:
            normalise_archs([value])
        except ValueError as exc:  # normalise_archs' refusal, for a config key or an option alike
            raise _refused(param, str(exc)) from None
        return value


class TargetList(click.ParamType):
    """Architectures a source is built for, one or comma-separated (`sm_80,sm_90`), as Arch records."""

    name = "targets"

    def convert(self, value, param, ctx):
        from ..advisor.lint.settings import normalise_archs
        from ..specs.resolve import resolve

        try:
            names = normalise_archs([name.strip() for name in value.split(",") if name.strip()])
        except ValueError as exc:  # normalise_archs names the value it refuses
            raise _refused(param, str(exc)) from None
        return tuple(resolve(name).arch for name in names)


class RuleCodes(click.ParamType):
    """Rule codes or prefixes, comma-separated (`TA3,TA501`), each matching some rule; kept as
    typed, for RuleSelection.parse with the config's own lists."""

    name = "codes"

    def convert(self, value, param, ctx):
        from ..advisor.rules import RuleSelection

        field = _field(param)
        try:
            RuleSelection.parse(*((None, value) if field == "ignore" else (value, None)))
        except ValueError as exc:  # RuleSelection.parse's message names the option: --select or --ignore
            raise _refused(param, str(exc).partition(": ")[2]) from None
        return value


class ProbeNames(click.ParamType):
    """Probes by name, comma-separated (`dram,l2`), as their names in run order."""

    name = "probes"

    def convert(self, value, param, ctx):
        from ..advisor.queries.probe import probe_names

        return probe_names(value, _field(param))


class Size(click.ParamType):
    """Bytes, such as 12288, `12K` or `1.5K` (K = 1024)."""

    name = "size"

    def convert(self, value, param, ctx):
        from ..advisor.inputs import parse_size

        return parse_size(value, _field(param))


class FilePath(click.Path):
    """click.Path that refuses an empty value: `--config "$CONFIG"` with the variable unset names
    no file, and must not quietly run without one (a plot not written, a baseline not applied)."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value:
            raise _refused(param, "an empty path names no file")
        return super().convert(value, param, ctx)
