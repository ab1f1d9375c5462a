"""Batch occupancy over JSON Lines: one result line per input line, in order.

Lines are bytes (a file or stdin, decoded as UTF-8 line by line: an
undecodable line is an error line and the batch goes on; a byte-order mark on
line 1 is skipped) or text. A line takes every key `occupancy --format json` takes as an option
(advisor/launch.KEYS) plus "arch", and its result line is the same document
with the same findings as that single query, serialized the same way
(text.json_line). A line may carry an "id" (any JSON value): its result line, or its error
line, then starts with the same "id". A bad line yields {"error": {...}} and the batch goes on;
the return value is the worst exit code seen (0 ok, 1 cannot launch, 2 bad
input).
"""

from __future__ import annotations

import json
from functools import lru_cache

from ..specs.files import DuplicateKey, loads_json
from ..specs.names import UnknownArchError
from ..specs.releases import UnknownReleaseError
from ..specs.resolve import resolve
from .engine.occupancy import occupancy
from .inputs import InputError
from .launch import KEYS, LaunchConfig
from .report import error_document, occupancy_findings, resolved_document
from .text import json_line

BATCH_KEYS = KEYS | {"arch"}
# Result lines kept for reuse: a line is a pure function of its architecture's name and its
# LaunchConfig (a hashable value), and sweeps repeat configurations across files and archs.
LINES_KEPT = 1 << 16
NAMES_KEPT = 256


MAX_LINE_BYTES = 1 << 20  # a configuration is a few hundred bytes; a longer line is an error line, never read whole


# Past this, a line that has not ended is taken for endless (/dev/zero, a binary piped by mistake):
# its error line is written and the input read no further, where skipping it would never end.
MAX_SKIPPED_BYTES = 64 << 20


class _Endless(bytes):
    """The first bytes of a line that did not end within MAX_SKIPPED_BYTES: the input's last line."""


def lines_of(handle):
    """A binary file's lines for run_batch, each at most MAX_LINE_BYTES + 1 bytes: the rest of a
    longer line is read in pieces and dropped, up to MAX_SKIPPED_BYTES; a line longer still ends
    the input (an _Endless line)."""
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            rest, skipped = line, 0
            while rest and not rest.endswith(b"\n"):
                if skipped > MAX_SKIPPED_BYTES:
                    yield _Endless(line)
                    return
                rest = handle.readline(1 << 20)
                skipped += len(rest)
        yield line


def run_batch(lines, out, default=None, selection=None, cuda: str | None = None) -> int:
    """`default`: the Resolved arch for lines without an "arch" key (from --arch / --spec-file);
    `selection`: the RuleSelection of --select/--ignore; `cuda`: the cuda_occupancy.h release
    (--cuda; None: the default)."""
    # A batch names a few architectures over and over: each name is resolved once per run, by
    # value (an unknown name raises, and lru_cache keeps no answer for it).
    resolved_name = lru_cache(maxsize=NAMES_KEPT)(lambda name: resolve(name, cuda=cuda))

    @lru_cache(maxsize=LINES_KEPT)
    def result_line(arch_name: str | None, config: LaunchConfig) -> tuple[str, bool]:
        """(the line's text, whether it launches); arch_name None means `default`."""
        resolved = default if arch_name is None else resolved_name(arch_name)
        result = occupancy(resolved.arch, config)
        document = resolved_document(resolved, result, occupancy_findings(resolved, result, selection))
        return json_line(document) + "\n", result.launchable

    worst = 0
    write = out.write
    for number, line in enumerate(lines, 1):
        line_id = _NO_ID
        try:
            text = _text_of(line, number)
            if text is None:
                continue
            item = _object_of(text)
            line_id = item.pop("id", _NO_ID)
            shown_id = _id_text(line_id)
            if "arch" in item:
                arch_name = str(item["arch"])
            elif default is not None:
                arch_name = None
            else:
                raise InputError("arch", "missing")
            result, launches = result_line(arch_name, LaunchConfig.from_mapping(item, keys=BATCH_KEYS))
        except _BadLine as exc:
            code, message = exc.code, exc.message
        except json.JSONDecodeError as exc:
            code, message = "bad-json", f"not JSON: {exc.msg}"
        except RecursionError:
            code, message = "bad-json", "not JSON: nested too deeply"
        except (UnknownArchError, UnknownReleaseError) as exc:  # as --arch and --cuda name them
            code, message = "bad-input", exc.as_option()
        except InputError as exc:
            code, message = "bad-input", str(exc)
        else:
            write(result if shown_id is None else f'{{"id":{shown_id},{result[1:]}')
            if not launches and worst < 1:
                worst = 1
            continue
        document = error_document(code, f"line {number}: {message}")
        shown_id = _id_text(line_id, strict=False)
        line_text = json_line(document)
        write(line_text + "\n" if shown_id is None else f'{{"id":{shown_id},{line_text[1:]}\n')
        worst = 2
    return worst


_NO_ID = object()  # a line without "id"


class _BadLine(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def _text_of(line, number: int) -> str | None:
    """The line as text, None for a blank one; _BadLine for one too long or not UTF-8."""
    if isinstance(line, _Endless):
        raise _BadLine("bad-json", f"no line end within {MAX_SKIPPED_BYTES >> 20} MiB: not a batch of configurations; "
                                   "the rest of the input is not read")
    if len(line) > MAX_LINE_BYTES:
        raise _BadLine("bad-json", f"longer than {MAX_LINE_BYTES} bytes, more than any configuration")
    if type(line) is bytes:  # from a file or stdin: decoded line by line, so one bad byte costs one line
        try:
            line = line.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise _BadLine("bad-json", f"not UTF-8 text (byte 0x{line[exc.start]:02x} at column {exc.start + 1})") from None
    elif number == 1:
        line = line.removeprefix("\ufeff")  # a byte-order mark, as Windows editors write
    return line if line.strip() else None


def _object_of(text: str) -> dict:
    try:
        item = loads_json(text)
    except json.JSONDecodeError:
        raise
    except DuplicateKey as exc:  # valid JSON, but which of the two values was meant?
        raise InputError("line", str(exc)) from None
    except ValueError as exc:  # valid JSON that Python will not read: an integer of over 4,300 digits
        raise json.JSONDecodeError(str(exc).split(";")[0], text, 0) from None
    if type(item) is not dict:
        raise InputError("line", "expected a JSON object")
    return item


def _id_text(value, strict: bool = True) -> str | None:
    """A line's "id" (any JSON value) as the result line echoes it; None where the line has none.
    NaN and Infinity, which Python reads but JSON lacks, are bad input (left out of an error line)."""
    if value is _NO_ID:
        return None
    try:
        return json_line(value, allow_nan=False)
    except ValueError:
        if strict:
            raise InputError("id", "NaN and Infinity are not JSON; give any JSON value") from None
        return None
