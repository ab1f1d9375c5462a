"""docs/rules.md, generated from the registry so it cannot drift.

    python -m tuneadvise.advisor.rules.markdown > docs/rules.md
"""

from __future__ import annotations

from tuneadvise.advisor.rules import registry
from tuneadvise.specs.catalog import describe_source


def _toml_value(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


def _example(config: dict) -> str:
    if "log" in config:
        settings = "\n".join(f"{k} = {_toml_value(v)}" for k, v in config["config"].items())
        return (f"# tuneadvise.toml\n{settings or '# (empty)'}\n# build.log\n{config['log']}\n"
                "# checked with: tuneadvise lint build.log --config tuneadvise.toml")
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
        lines += ["Triggers:", "", "```", _example(rule.trigger), "```", "", "Does not trigger:", "", "```",
                  _example(rule.clean), "```"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
