"""Batch occupancy over JSON Lines: one result line per input line, in order.

A bad line yields {"error": {...}} and the batch goes on; the return value is
the worst exit code seen (0 ok, 1 cannot launch, 2 bad input).
"""

from __future__ import annotations

import json
import json.scanner
from functools import lru_cache

from tuneadvise.advisor.analysis import check_keys
from tuneadvise.advisor.inputs import KERNEL_KEYS, InputError, kernel_from_mapping
from tuneadvise.advisor.report import SCHEMA_VERSION, kernel_json_line
from tuneadvise.specs.catalog import UnknownArchError, shipped_catalog

BATCH_KEYS = ("arch",) + KERNEL_KEYS
_BATCH_KEY_SET = frozenset(BATCH_KEYS)  # the quick test; check_keys words the error

# json.loads spends half its time around the C scanner (type checks, a
# whitespace regex on each side). A line that is exactly one JSON value and its
# line ending goes to the scanner alone; anything else (leading whitespace,
# trailing data, bytes, bad JSON) goes through json.loads, which decides and
# words the error exactly as before.
_SCAN = json.scanner.make_scanner(json.JSONDecoder())
_LINE_ENDINGS = ("\n", "", "\r\n")


def _decode(line):
    if type(line) is str:
        try:
            value, end = _SCAN(line, 0)
        except (StopIteration, ValueError):
            pass
        else:
            if line[end:] in _LINE_ENDINGS:
                return value
    return json.loads(line)


def _error_line(code: str, message: str) -> str:
    return json.dumps({"schema_version": SCHEMA_VERSION, "error": {"code": code, "message": message}})


def run_batch(lines, out, default=None) -> int:
    """`default`: the Resolved arch for lines without an "arch" key (from --arch / --spec-file)."""
    catalog = shipped_catalog()

    @lru_cache(maxsize=256)
    def resolve(name: str) -> tuple:  # -> (Arch, note, product name), what each output line needs
        resolved = catalog.resolve(name)
        return resolved.arch, resolved.note, resolved.product.name if resolved.product else None

    fallback = None
    if default is not None:
        fallback = (default.arch, default.note, default.product.name if default.product else None)
    worst = 0
    write = out.write
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = _decode(line)
            if type(item) is not dict:
                raise InputError("line", "expected a JSON object")
            if not _BATCH_KEY_SET.issuperset(item):
                check_keys(item, BATCH_KEYS)
            if "arch" in item:
                arch, note, product = resolve(str(item["arch"]))
            elif fallback is not None:
                arch, note, product = fallback
            else:
                raise InputError("arch", "missing")
            kernel, dims = kernel_from_mapping(item)
        except json.JSONDecodeError as exc:
            write(_error_line("bad-json", f"line {number}: not JSON: {exc.msg}") + "\n")
            worst = 2
            continue
        except RecursionError:
            write(_error_line("bad-json", f"line {number}: not JSON: nested too deeply") + "\n")
            worst = 2
            continue
        except (InputError, UnknownArchError) as exc:
            write(_error_line("bad-input", f"line {number}: {exc}") + "\n")
            worst = 2
            continue
        text, launches = kernel_json_line(arch, kernel, dims, note, product, end="\n")
        write(text)
        if not launches and worst < 1:
            worst = 1
    return worst
