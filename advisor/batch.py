"""Batch occupancy over JSON Lines: one result line per input line, in order.

A bad line yields {"error": {...}} and the batch goes on; the return value is
the worst exit code seen (0 ok, 1 cannot launch, 2 bad input).
"""

from __future__ import annotations

import json
import json.scanner
from functools import lru_cache

from tuneadvise.advisor.inputs import InputError
from tuneadvise.advisor.launch import RESOURCE_KEYS, LaunchConfig
from tuneadvise.advisor.report import error_document, kernel_json_line
from tuneadvise.specs.catalog import UnknownArchError, shipped_catalog

BATCH_KEYS = RESOURCE_KEYS | {"arch"}

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


def _line_arch(resolved) -> tuple:
    """(Arch, note, product name): what each output line needs of a resolved architecture."""
    return resolved.arch, resolved.note, resolved.product.name if resolved.product else None


def run_batch(lines, out, default=None) -> int:
    """`default`: the Resolved arch for lines without an "arch" key (from --arch / --spec-file)."""
    catalog = shipped_catalog()
    resolve = lru_cache(maxsize=256)(lambda name: _line_arch(catalog.resolve(name)))
    fallback = _line_arch(default) if default is not None else None
    worst = 0
    write = out.write
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = _decode(line)
            if type(item) is not dict:
                raise InputError("line", "expected a JSON object")
            if "arch" in item:
                arch, note, product = resolve(str(item["arch"]))
            elif fallback is not None:
                arch, note, product = fallback
            else:
                raise InputError("arch", "missing")
            kernel = LaunchConfig.from_mapping(item, keys=BATCH_KEYS)
            dims = kernel.dims
        except json.JSONDecodeError as exc:
            code, message = "bad-json", f"not JSON: {exc.msg}"
        except RecursionError:
            code, message = "bad-json", "not JSON: nested too deeply"
        except (InputError, UnknownArchError) as exc:
            code, message = "bad-input", str(exc)
        else:
            text, launches = kernel_json_line(arch, kernel, dims, note, product, end="\n")
            write(text)
            if not launches and worst < 1:
                worst = 1
            continue
        write(json.dumps(error_document(code, f"line {number}: {message}")) + "\n")
        worst = 2
    return worst
