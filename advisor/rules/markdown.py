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


def example_command(config: dict) -> str:
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


def render() -> str:
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
    print(render(), end="")
