"""docs/rules.md, generated from the registry so it cannot drift.

    python -m tuneadvise.advisor.rules.markdown > docs/rules.md
"""

from __future__ import annotations

from ...specs.catalog import describe_source
from . import registry


def _toml_value(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


def _measured_example(example: dict) -> str:
    """A profiled launch's figures, and the command that lints its export (written by
    rules.families.ta0_measured.example_export)."""
    figures = example["ncu"]
    pairs = [f"{key} = {value}" for key, value in figures.items() if key not in ("kernel", "cc")]
    lines, line = [], "#"
    for pair in pairs:  # a few figures a line, to fit 80 columns where `rules explain` prints it
        if len(line) + len(pair) > 70:
            lines.append(line.rstrip(","))
            line = "#"
        line += f" {pair},"
    lines.append(line.rstrip(","))
    config = (f"# tuneadvise.toml\nmin_achieved_occupancy = {example['min_achieved_occupancy']}\n"
              if "min_achieved_occupancy" in example else "")
    return (f"{config}# report.csv (ncu --csv), one launch of {figures['kernel']} on a {figures['cc']} GPU:\n"
            + "\n".join(lines) + "\n# checked with: tuneadvise lint report.csv"
            + (" --config tuneadvise.toml" if config else ""))


def example_command(config: dict) -> str:
    if "ncu" in config:
        return _measured_example(config)
    if "log" in config:
        settings = "\n".join(f"{k} = {_toml_value(v)}" for k, v in config["config"].items())
        source = f"# file.cu\n{config['source'].rstrip()}\n" if "source" in config else ""
        earlier = (f"# baseline.json (an earlier build) records {config['previous_registers']} registers for k\n"
                   if "previous_registers" in config else "")
        # (tuneadvise.toml is the config lint finds by itself: the long command lines name it, the others need not)
        command = "tuneadvise lint build.log" + (" file.cu" if source else "") + \
            (" --baseline baseline.json" if earlier else " --config tuneadvise.toml")
        return (f"# tuneadvise.toml\n{settings or '# (empty)'}\n# build.log\n{config['log']}\n{source}{earlier}"
                f"# checked with: {command}")
    if "cuda" in config:  # a source lint compiles, reading the cubin's machine code
        return (f"# file.cu\n{config['cuda'].rstrip()}\n"
                f"# checked with: tuneadvise lint file.cu --arch {config['target']}")
    if "source" in config:
        return f"// file.cu, checked with: tuneadvise check-source file.cu --target {config['target']}\n{config['source']}"
    flags = []
    for key, value in config.items():
        option = "--" + key.replace("_", "-")
        if value is True:
            flags.append(option)
        else:
            flags.append(f"{option} {value}")
    return "tuneadvise occupancy " + " ".join(flags)


def rules_page() -> str:
    lines = ["# Rules", "", "Generated from the rule registry (`advisor/rules/families/`); do not edit by hand.", "",
             "Select or ignore rules by code or prefix with `--select` and `--ignore` (for example `--ignore TA3`).", ""]
    lines += ["| code | name | severity | summary |", "| --- | --- | --- | --- |"]
    for rule in registry().values():
        lines.append(f"| [{rule.code}](#{rule.code.lower()}) | {rule.name} | {rule.severity} | {rule.summary} |")
    for rule in registry().values():
        lines += ["", f"## {rule.code}", "", f"**{rule.name}** ({rule.severity}): {rule.summary}.", "",
                  rule.explanation, "", f"Source: {describe_source(rule.source)}.", ""]
        if rule.params:
            lines += ["Parameters: " + ", ".join(f"`{k}` = {v}" for k, v in rule.params.items()) + ".", ""]
        lines += ["Triggers:", "", "```", example_command(rule.trigger), "```", "", "Does not trigger:", "", "```",
                  example_command(rule.clean), "```"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(rules_page(), end="")
