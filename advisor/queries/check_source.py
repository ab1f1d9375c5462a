"""`check-source`: the source rules (TA8xx) over CUDA files read from disk, as one document."""

from __future__ import annotations

from ...specs.errors import InputError


def check_source_query(paths, targets, selection, fail_on: str, tool_version: str):
    """Each file at `paths` read (bounded, undecodable bytes replaced) and scanned for `targets`:
    advisor/rules/source_scan.source_document; a file that cannot be read is an InputError naming it."""
    from ...specs.files import MAX_SOURCE_BYTES, read_bounded
    from ..readers.usage import is_binary
    from ..rules.source_scan import source_document

    def sources():
        for path in paths:
            try:
                data = read_bounded(path, MAX_SOURCE_BYTES)
            except OSError as exc:
                raise InputError(f"PATHS: cannot read {path}: {exc.strerror}") from None
            if is_binary(data):
                raise InputError(f"PATHS: {path} is a binary file (build output), not CUDA source")
            yield path, data.decode("utf-8", errors="replace")

    return source_document(sources(), targets, selection, fail_on, tool_version)
