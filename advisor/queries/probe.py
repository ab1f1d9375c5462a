"""`probe` and `verify`: the documents of measurements taken on a GPU (probes/ takes them)."""

from __future__ import annotations

SCHEMA_VERSION = 1  # `probe --format json`'s own layout


def probe_document(documents: list[dict]) -> dict:
    """One device's probe document as it is, or several devices' with the figure on which each
    differs most from its siblings."""
    if len(documents) == 1:
        return documents[0]
    from ...probes.results import differs_most

    return {"schema_version": documents[0]["schema_version"], "devices": documents,
            "differs_most": differs_most(documents)}


def verify_document(device_name: str, device_index: int, arch, gpc_sms, verdicts) -> dict:
    """The driver's occupancy answers against the engine's, kernel by kernel (probes.verify's verdicts)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "device": device_name,
        "device_index": device_index,
        "arch": arch.sm,
        "gpc_sms": gpc_sms,
        "kernels": [{"name": v.name, "attributes": v.attributes, "checked": v.checked,
                     "clusters_checked": v.clusters_checked, "disagreements": v.disagreements} for v in verdicts],
    }


def verify_query(cupy, path: str, device: int) -> dict:
    """`verify`: the kernels of the .cubin or .ptx at `path` loaded on `device` through `cupy`, the
    driver's answers against the engine's (verify_document)."""
    from pathlib import Path

    from ...probes.verify import entry_points, verify_on_device
    from ...specs.errors import InputError
    from ..readers.cubin import CubinError

    try:
        kernels = entry_points(Path(path))
    except CubinError as exc:  # the reader's message says what is wrong, not in which file
        raise InputError(f"{path}: {exc}") from None
    except OSError as exc:  # unreadable, or larger than any cubin
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    if not kernels:
        raise InputError(f"{path}: no kernel entry points found (expected a .cubin or .ptx)")
    info, arch, gpc_sms, verdicts = verify_on_device(cupy, Path(path), device, kernels)
    return verify_document(info.name, device, arch, gpc_sms, verdicts)
