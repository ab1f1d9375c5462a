"""Batch occupancy over JSON Lines: one result line per input line, in order.

Lines are bytes (a file or stdin, decoded as UTF-8 line by line: an
undecodable line is an error line and the batch goes on; a byte-order mark on
line 1 is skipped) or text. A line takes every key `occupancy --format json` takes as an option
(advisor/launch.KEYS) plus "arch", and its result line is the same document
with the same findings as that single query, serialized the same way
(text.json_line). A bad line yields {"error": {...}} and the batch goes on;
the return value is the worst exit code seen (0 ok, 1 cannot launch, 2 bad
input).
"""

from __future__ import annotations

import json
from functools import lru_cache

from ..specs.names import UnknownArchError
from ..specs.releases import UnknownReleaseError
from ..specs.resolve import resolve
from .engine.occupancy import occupancy
from .inputs import InputError
from .launch import KEYS, LaunchConfig
from .report import error_document, findings_of, resolved_document
from .text import json_line

BATCH_KEYS = KEYS | {"arch"}
# Result lines kept for reuse: a line is a pure function of its architecture's name and its
# LaunchConfig (a hashable value), and sweeps repeat configurations across files and archs.
LINES_KEPT = 1 << 16


MAX_LINE_BYTES = 1 << 20  # a configuration is a few hundred bytes; a longer line is an error line, never read whole


def lines_of(handle):
    """A binary file's lines for run_batch, each at most MAX_LINE_BYTES + 1 bytes: the rest of a
    longer line is read in pieces and dropped (/dev/zero is one endless line)."""
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            rest = line
            while rest and not rest.endswith(b"\n"):
                rest = handle.readline(1 << 16)
        yield line


def run_batch(lines, out, default=None, selection=None, cuda: str | None = None) -> int:
    """`default`: the Resolved arch for lines without an "arch" key (from --arch / --spec-file);
    `selection`: the RuleSelection of --select/--ignore; `cuda`: the cuda_occupancy.h release
    (--cuda; None: the default)."""
    @lru_cache(maxsize=LINES_KEPT)
    def result_line(arch_name: str | None, config: LaunchConfig) -> tuple[str, bool]:
        """(the line's text, whether it launches); arch_name None means `default`."""
        resolved = default if arch_name is None else resolve(arch_name, cuda=cuda)
        result = occupancy(resolved.arch, config)
        document = resolved_document(resolved, result, findings_of(resolved, result, selection))
        return json_line(document) + "\n", result.launchable

    worst = 0
    write = out.write
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_LINE_BYTES:
            write(json_line(error_document("bad-json", f"line {number}: longer than {MAX_LINE_BYTES} bytes, "
                                                        "more than any configuration")) + "\n")
            worst = 2
            continue
        if type(line) is bytes:  # from a file or stdin: decoded line by line, so one bad byte costs one line
            try:
                line = line.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                write(json_line(error_document("bad-json", f"line {number}: not UTF-8 text (byte "
                                                            f"0x{line[exc.start]:02x} at column {exc.start + 1})"))
                      + "\n")
                worst = 2
                continue
        elif number == 1:
            line = line.removeprefix("\ufeff")  # a byte-order mark, as Windows editors write
        if not line.strip():
            continue
        try:
            try:
                item = json.loads(line)
            except json.JSONDecodeError:
                raise
            except ValueError as exc:  # valid JSON that Python will not read: an integer of over 4,300 digits
                raise json.JSONDecodeError(str(exc).split(";")[0], line, 0) from None
            if type(item) is not dict:
                raise InputError("line", "expected a JSON object")
            if "arch" in item:
                arch_name = str(item["arch"])
            elif default is not None:
                arch_name = None
            else:
                raise InputError("arch", "missing")
            text, launches = result_line(arch_name, LaunchConfig.from_mapping(item, keys=BATCH_KEYS))
        except json.JSONDecodeError as exc:
            code, message = "bad-json", f"not JSON: {exc.msg}"
        except RecursionError:
            code, message = "bad-json", "not JSON: nested too deeply"
        except (UnknownArchError, UnknownReleaseError) as exc:  # as --arch and --cuda name them
            code, message = "bad-input", exc.as_option()
        except InputError as exc:
            code, message = "bad-input", str(exc)
        else:
            write(text)
            if not launches and worst < 1:
                worst = 1
            continue
        write(json_line(error_document(code, f"line {number}: {message}")) + "\n")
        worst = 2
    return worst
