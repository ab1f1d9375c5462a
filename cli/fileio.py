import os


def write_atomically(path: str | os.PathLike, data) -> None:
    """Write `data` (bytes, or an iterable of bytes chunks) beside the target and
    rename it over: readers never see a partial file, and a failed write leaves
    nothing behind."""
    path = os.fspath(path)
    folder, name = os.path.split(path)
    partial = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    try:
        with open(partial, "wb", buffering=1 << 20) as handle:
            if isinstance(data, bytes):
                handle.write(data)
            else:
                handle.writelines(data)
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)


