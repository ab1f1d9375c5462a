"""How lint names a file: relative to the working directory when it is under it, else as given
(the path a compile command or a report holds, shown the way the user would type it)."""

from __future__ import annotations

import os


def shown_path(path: str) -> str:
    """`path` relative to the working directory when it lies under it; else `path` unchanged
    (outside it, or on another drive, where no relative path exists)."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith("..") else relative
