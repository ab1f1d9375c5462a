"""The one exception of bad input, which every layer raises and every caller catches: it names
the field (the library argument, a config key or a batch line's key) and what is allowed.

The command line speaks of options, the library of arguments: `str()` of an error names the
argument (`arch: unknown architecture ...`); `as_option()` names the option the CLI's user
typed (`--arch: unknown architecture ...`)."""

from __future__ import annotations


class InputError(ValueError):
    def __init__(self, field: str, message: str):
        self.field = field
        self.detail = message
        super().__init__(f"{field}: {message}")

    def as_option(self) -> str:
        """The message with the field spelled as a command-line option (`spec_file` -> `--spec-file`)."""
        return f"--{self.field.replace('_', '-')}: {self.detail}"
