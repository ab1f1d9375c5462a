"""Batch occupancy over JSON Lines: one result line per input line, in order.

A bad line yields {"error": {...}} and the batch goes on; the return value is
the worst exit code seen (0 ok, 1 cannot launch, 2 bad input).
"""

from __future__ import annotations

import json
from functools import lru_cache

from tuneadvise.advisor.analysis import KERNEL_KEYS, check_keys
from tuneadvise.advisor.engine import occupancy
from tuneadvise.advisor.inputs import InputError, make_kernel
from tuneadvise.advisor.report import SCHEMA_VERSION, occupancy_json_line
from tuneadvise.specs.catalog import UnknownArchError, shipped_catalog

BATCH_KEYS = ("arch",) + KERNEL_KEYS


def _error_line(code: str, message: str) -> str:
    return json.dumps({"schema_version": SCHEMA_VERSION, "error": {"code": code, "message": message}})


def run_batch(lines, out, default=None) -> int:
    """`default`: the Resolved arch for lines without an "arch" key (from --arch / --spec-file)."""
    catalog = shipped_catalog()
    resolve = lru_cache(maxsize=256)(catalog.resolve)
    worst = 0
    write = out.write
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if not isinstance(item, dict):
                raise InputError("line", "expected a JSON object")
            check_keys(item, BATCH_KEYS)
            if "arch" in item:
                resolved = resolve(str(item["arch"]))
            elif default is not None:
                resolved = default
            else:
                raise InputError("arch", "missing")
            for required in ("registers", "block_size"):
                if required not in item:
                    raise InputError(required, "missing")
            kernel, dims = make_kernel(**{k: item[k] for k in KERNEL_KEYS if k in item and item[k] is not None})
        except json.JSONDecodeError as exc:
            write(_error_line("bad-json", f"line {number}: not JSON: {exc.msg}") + "\n")
            worst = 2
            continue
        except (InputError, UnknownArchError) as exc:
            write(_error_line("bad-input", f"line {number}: {exc}") + "\n")
            worst = 2
            continue
        result = occupancy(resolved.arch, kernel)
        write(occupancy_json_line(result, dims, resolved.note, resolved.product.name if resolved.product else None) + "\n")
        if not result.launchable and worst < 1:
            worst = 1
    return worst
