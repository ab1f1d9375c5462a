"""The one exception of bad input, which every layer raises and every caller catches: it names
the field (the library argument, a config key or a batch line's key) and what is allowed.

The command line speaks of options, the library of arguments: `str()` of an error names the
argument (`arch: unknown architecture ...`); `as_option()` names the option the CLI's user
typed (`--arch: unknown architecture ...`). An error about a file or a document names its own
subject in its message (`k.cubin: section 3 overlaps ...`): it is raised with the message alone,
and its text is the same in both spellings. The readers' and loaders' errors (a config, a
baseline, a cubin, a fatbin, a kernel cache's metadata, compile_commands.json, a roofline's
figures, a profiled launch, a build setup) are subclasses, so a caller catches this one class.

A message that repeats outside text (a user's value, a name, a reader's complaint) writes it
through `quoted` or `clip`: one line, control characters escaped, bounded in length. They live
here, the lowest layer, so that specs/ and every layer above share the one definition
(advisor/text.py re-exports them beside the other text helpers)."""

from __future__ import annotations


class InputError(ValueError):
    def __init__(self, field: str, message: str | None = None):
        if message is None:  # the message names its own subject: no field to spell
            field, message = "", field
        self.field = field
        self.detail = message
        super().__init__(f"{field}: {message}" if field else message)

    def as_option(self) -> str:
        """The message with the field spelled as a command-line option (`spec_file` -> `--spec-file`)."""
        if not self.field:
            return self.detail
        return f"--{self.field.replace('_', '-')}: {self.detail}"


MAX_QUOTED = 60  # characters of a user's value an error message repeats
MAX_ERROR = 400  # characters of one error line


def one_line(text, keep: str = "") -> str:
    """`text` on one line: line breaks and other control characters written as escapes (but those
    in `keep`, for a format whose syntax holds them, such as a quoted CSV cell's line breaks)."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else repr(c)[1:-1] for c in text)


def clip(text, limit: int = MAX_ERROR) -> str:
    """Outside text as a message quotes it: one line (one_line), at most `limit` characters, the
    middle of an overlong text elided so both its start and its end stay readable."""
    text = one_line(text)
    if len(text) <= limit:
        return text
    head = (limit - 3) // 2
    return f"{text[:head]}...{text[len(text) - (limit - 3 - head):]}"


def quoted(value, limit: int = MAX_QUOTED) -> str:
    """A user's value as an error message repeats it: repr() (quotes, escapes), clipped; a
    structure by its type only (a YAML bomb or a nested JSON value expands to megabytes)."""
    if value is not None and not isinstance(value, (str, int, float, bool)):
        return f"a {type(value).__name__}"
    try:
        text = repr(value)
    except ValueError:  # an integer of more digits than Python converts to text (4,300)
        text = f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    return clip(text, limit)
