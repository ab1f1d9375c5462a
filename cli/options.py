"""Click options shared by the commands, generated from the one description of each value.

The launch options of `occupancy` and `suggest` come from `advisor.launch.FIELDS`
(key, help, default): the option is the key with dashes, its text goes to
`LaunchConfig.from_mapping` unparsed, and a bad value is one line naming the
option (`--registers: ...`). `arch_option`, `select_option`, `ignore_option` and
`format_option` are the one spelling of those options for every command, with
shell completion of architecture names and rule codes.
"""

from __future__ import annotations

import click

from ..advisor.launch import BY_KEY, FIELDS
from .common import BadInput
from .params import ArchName, BlockShape, LaunchValue, RuleCodes

# Short forms the options have always had.
SHORT = {"registers": "-r", "block_size": "-b", "shared_mem": "-s", "dynamic_shared_mem": "-d"}
# Old spellings kept one release (0.1 -> 0.2): hidden from --help, named in the option they stand for.
ALIASES = {"spill_stores": "--spill-bytes"}
_DEFAULT_TEXT = {"carveout": "default"}  # how a default is written on the command line


def _default_text(field) -> str | None:
    if field.key in _DEFAULT_TEXT:
        return _DEFAULT_TEXT[field.key]
    if field.default is None or field.default is False:
        return None
    return str(field.default)


def launch_options(keys, help: dict | None = None):
    """Decorator: one option per FIELDS key in `keys`, in FIELDS order; `help` overrides a key's
    help text where the command means something narrower. Values reach the command checked by
    their field's parser, as typed (None when not given), keyword arguments named by key."""
    chosen = [field for field in FIELDS if field.key in keys]
    unknown = set(keys) - {field.key for field in chosen}
    assert not unknown, f"no such FIELDS keys: {unknown}"
    texts = help or {}

    def decorate(function):
        for field in reversed(chosen):
            text = texts.get(field.key, field.help)
            if field.key in ALIASES:
                function = click.option(ALIASES[field.key], f"{field.key}__alias", hidden=True,
                                        type=LaunchValue(field), help=f"Old name of {field.option}.")(function)
                text += f" ({ALIASES[field.key]}, its old name, is accepted until 0.2.)"
            names = [field.option, *([SHORT[field.key]] if field.key in SHORT else [])]
            if field.parse.__name__ == "parse_bool":
                function = click.option(*names, field.key, is_flag=True, default=None, help=text)(function)
            else:
                function = click.option(*names, field.key, type=LaunchValue(field), metavar=_metavar(field),
                                        help=text, show_default=_default_text(field) or False)(function)
        return function

    return decorate


def _metavar(field) -> str:
    return {"block_size": "N|XxY[xZ]", "carveout": "PREF", "compiled_for": "TARGET"}.get(
        field.key, "BYTES" if field.key.endswith(("shared_mem", "spill_stores", "spill_loads", "stack_frame")) else "N")


def launch_values(options: dict) -> dict:
    """The launch values a command received, by FIELDS key, leaving out those not given;
    an old alias counts as its option (both at once is an error)."""
    values = {}
    for key, value in options.items():
        if key.endswith("__alias"):
            continue
        if key in BY_KEY and value is not None and value is not False:
            values[key] = value
    for key, alias in ALIASES.items():
        old = options.get(f"{key}__alias")
        if old is None:
            continue
        if key in values:
            raise BadInput(f"{BY_KEY[key].option}: given twice, also as {alias} (its old name)")
        values[key] = old
    return values


def launch_config(options: dict, **fixed):
    """LaunchConfig.from_mapping of the command's launch values (and `fixed` ones); its
    InputError names the option (cli/main.py)."""
    from ..advisor.launch import LaunchConfig

    return LaunchConfig.from_mapping({**launch_values(options), **fixed})


# --------------------------------------------------------------------------
# Shell completion (click's shell_complete: `_TUNEADVISE_COMPLETE=bash_source tuneadvise`)
# --------------------------------------------------------------------------

def arch_names(catalog=None) -> list[str]:
    """Every name --arch accepts from the catalog: sm_XX, compute capabilities, families, chips, products."""
    if catalog is None:
        from ..specs.catalog import shipped_catalog

        catalog = shipped_catalog()
    names = set(catalog.family_default)
    from ..specs.names import former_spellings

    for arch in catalog.archs.values():
        names.update((arch.sm, arch.cc, *arch.names))
        names.update(name for cc in arch.formerly for name in former_spellings(cc))
    for product in catalog.products.values():
        names.update((product.name, *product.names))
    return sorted(name.lower() for name in names)


def complete_arch(ctx, param, incomplete: str) -> list[str]:
    text = incomplete.lower()
    return [name for name in arch_names() if name.startswith(text)]


def rule_codes() -> list[str]:
    from ..advisor.rules import registry

    return sorted(registry())


def complete_rule_codes(ctx, param, incomplete: str) -> list[str]:
    """Codes for --select/--ignore, which take a comma-separated list: completes the last item."""
    done, _, last = incomplete.rpartition(",")
    prefix = f"{done}," if done else ""
    return [prefix + code for code in rule_codes() if code.startswith(last.upper())]


def complete_rule(ctx, param, incomplete: str) -> list[str]:
    """A rule code or name (`explain`)."""
    from ..advisor.rules import registry

    text = incomplete.lower()
    return sorted(code for code in registry() if code.lower().startswith(text)) + \
        sorted(rule.name for rule in registry().values() if rule.name.startswith(text))


ARCH_HELP = "Family (volta), sm_70, 7.0, compute_70, chip (ga102) or product (v100, h100-sxm)."


def arch_option(help: str = ARCH_HELP, **settings):
    """--arch/-a, completing the catalog's names."""
    return click.option("--arch", "-a", help=help, shell_complete=complete_arch, **settings)


def cuda_option(**settings):
    """--cuda: the cuda_occupancy.h release the engine follows (default: the newest it is exact to)."""
    from ..specs.records import DEFAULT_RELEASE

    return click.option("--cuda", metavar="RELEASE", shell_complete=complete_release, help=(
        f"Answer as cuda_occupancy.h of this CUDA release does (default {DEFAULT_RELEASE}; "
        "'tuneadvise specs show ARCH' lists how releases differ)."), **settings)


def complete_release(ctx, param, incomplete: str) -> list[str]:
    """Shell completion of --cuda: the releases of specs/data/releases.toml."""
    from ..specs.releases import releases

    return [name for name in releases() if name.startswith(incomplete)]


def select_option(help: str = "Only these finding codes or prefixes (comma-separated).", **settings):
    return click.option("--select", type=RuleCodes(), metavar="CODES", shell_complete=complete_rule_codes,
                        help=help, **settings)


def ignore_option(help: str = "Drop these finding codes or prefixes (comma-separated).", **settings):
    return click.option("--ignore", type=RuleCodes(), metavar="CODES", shell_complete=complete_rule_codes,
                        help=help, **settings)


def arch_names_option(help: str, **settings):
    """The repeatable --arch/-a of lint, diff and frontier: names of the shipped catalog, each checked."""
    return click.option("--arch", "-a", multiple=True, type=ArchName(), shell_complete=complete_arch, help=help,
                        **settings)


def block_shape_option(help: str, **settings):
    """--block-size/-b as dimensions (256, 16x16)."""
    return click.option("--block-size", "-b", type=BlockShape(), metavar="N|XxY[xZ]", help=help, **settings)


def format_option(choices=("table", "json"), help: str | None = None):
    return click.option("--format", "fmt", type=click.Choice(list(choices)), help=help or (
        "Output format; default: human text (a table on a terminal, plain text otherwise), "
        "or the TUNEADVISE_FORMAT environment variable where it names one of these."))
