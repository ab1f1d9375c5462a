"""`probe` and `verify`: the documents of measurements taken on a GPU (probes/ takes them)."""

from __future__ import annotations

from dataclasses import dataclass

from ...specs.errors import InputError, quoted

SCHEMA_VERSION = 1  # `verify --format json`'s own layout


@dataclass(frozen=True)
class ProbeAnswer:
    """`probe`'s outcome: its document (probe_document) and, when asked for, the spec file of the
    first device measured (`probe --save`'s TOML: driver limits and measured peaks)."""

    document: dict
    saved: str | None = None

    def to_json(self) -> dict:
        return self.document

    @property
    def failed(self) -> bool:
        """A probe failed on some device (the others still report)."""
        return any(doc["failed"] for doc in self.document.get("devices", [self.document]))


def probe_names(only: str, field: str) -> list[str]:
    """The probes a comma-separated list names, in their run order (none named: every probe);
    InputError (naming `field`) for a name that is no probe."""
    from ...probes.suite import PROBES

    names = [n.strip() for n in only.split(",") if n.strip()]
    if not names:
        return list(PROBES)
    unknown = [n for n in names if n not in PROBES]
    if unknown:
        raise InputError(field, f"unknown probe {quoted(unknown[0])} (choose from {', '.join(PROBES)})")
    return [n for n in PROBES if n in names]


def device_indices(device: str, count: int) -> list[int]:
    """'all', one index, or a comma-separated list of indices below `count` (a device may be listed
    twice, which runs the several-device path on a one-GPU machine); InputError otherwise."""
    if device == "all":
        return list(range(count))
    parts = [p.strip() for p in device.split(",")]
    for part in parts:
        if not (part.isascii() and part.isdigit()) or int(part) >= count:
            raise InputError("device", f"{quoted(part)} is not a device index below {count}, a comma-separated "
                                       "list of them, or 'all'")
    return [int(p) for p in parts]


def probe_query(cupy, names: list[str] | None = None, device: str = "0", quick: bool = False, tiny: bool = False,
                save: bool = False, run=None, measured=None) -> ProbeAnswer:
    """`probe`: the probes `names` (None: every probe) on each GPU `device` names (device_indices),
    one device after the other, through `run(ctx, names)` (probes.suite.run_probes, or one that
    shows progress); `measured(doc, product)` is told each device's document as it is made (the
    text draws its tables then). With `save`, the spec file of the first device measured."""
    from ...probes.gpu import device_count
    from ...probes.suite import PROBES, measure_device, run_probes

    chosen = list(PROBES) if names is None else names
    documents = []
    for index in device_indices(device, device_count(cupy)):
        doc, product = measure_device(cupy, index, chosen, quick, tiny, run or run_probes)
        if measured is not None:
            measured(doc, product)
        documents.append(doc)
    return ProbeAnswer(probe_document(documents), _spec_text(documents[0]) if save else None)


def _spec_text(doc: dict) -> str:
    from ...probes.native import saved_spec, to_toml
    from ...specs.catalog import shipped_catalog

    return to_toml(saved_spec(doc, shipped_catalog()))


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
