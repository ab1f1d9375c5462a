"""`roofline`: memory- or compute-bound, the attainable ceiling, the headroom and the shared-memory
pyramid of kernels on a product, from its spec or from measured probe results."""

from __future__ import annotations

from dataclasses import dataclass

from ..roofline import RooflineError

SCHEMA_VERSION = 1  # `roofline --format json`'s own layout


@dataclass(frozen=True)
class RooflineAnswer:
    machine: object  # advisor.roofline.Machine
    kernels: tuple  # (name, Placement) per kernel charted: "kernel" for the one given by figures, then the file's
    document: dict

    def to_json(self) -> dict:
        return self.document


def roofline_answer(resolved, arch: str, precision: str, probe_path: str | None = None,
                    kernels_path: str | None = None, **figures) -> RooflineAnswer:
    """The roofline of `resolved` (a product: `arch` as the user named it), with the measured
    ceilings of a probe document at `probe_path` and the kernels of a lint config at
    `kernels_path`; `figures` as roofline_query takes them."""
    from ...specs.errors import InputError

    if resolved.product is None:
        raise InputError("arch", f"'{arch}' is an architecture, not a product; the roofline needs a product "
                                 "(v100-pcie, h100-sxm, ...; see 'tuneadvise specs')")
    probe = read_probe_results(probe_path) if probe_path else None
    entries = roofline_entries(kernels_path) if kernels_path else ()
    return roofline_query(resolved.product, resolved.arch.warp_size, precision, probe,
                          resolved.arch.shared_l1_unified is not False, entries=entries, **figures)


def roofline_query(product, warp_size: int, precision: str, probe: dict | None = None, shared_l1_unified: bool = True,
                   intensity: float | None = None, flops: float | None = None, bytes_: float | None = None,
                   shared_bytes_per_flop: float | None = None, achieved: float | None = None,
                   entries=()) -> RooflineAnswer:
    """The kernel given by its intensity (or FLOPs and bytes) and the lint-config `entries` with a
    roofline table, placed under the product's roofs. RooflineError names what is wrong."""
    from ..roofline import machine_from_product, place, roofline_document
    from ..text import quoted

    if intensity is None and (flops is None) != (bytes_ is None):
        raise RooflineError("--flops and --bytes: give both, or --intensity")
    if intensity is not None and flops is not None:  # one of two intensities would be dropped
        raise RooflineError("--intensity and --flops/--bytes: give one intensity, not both")
    if intensity is None and flops is None:  # nothing to place: each would be dropped without a word
        given = [name for name, value in (("--shared-bytes-per-flop", shared_bytes_per_flop),
                                          ("--achieved", achieved)) if value is not None]
        if given:
            raise RooflineError(f"{' and '.join(given)}: describe the kernel that --intensity, or --flops and --bytes, "
                                "places; give that too (a --kernels entry carries its own)")
    intensity_name = "--intensity"
    if intensity is None and flops is not None:
        intensity, intensity_name = flops / bytes_, "--flops / --bytes"  # checked by place(), which names them
    machine = machine_from_product(product, warp_size, precision, probe, shared_l1_unified=shared_l1_unified)
    placement = None
    if intensity is not None:
        placement = place(machine, intensity, shared_bytes_per_flop, achieved, intensity_name=intensity_name)
    kernels = [(entry.name, place(machine, entry.roofline.flop_per_byte(), entry.roofline.shared_bytes_per_flop,
                                  entry.roofline.achieved, f"--kernels: {quoted(entry.name)}: ", "intensity"))
               for entry in entries]
    charted = ([("kernel", placement)] if placement is not None else []) + kernels
    return RooflineAnswer(machine, tuple(charted), roofline_document(machine, placement, SCHEMA_VERSION, kernels))


def roofline_entries(path: str) -> list:
    """[[kernels]] entries with a roofline table, from a lint config (TOML, YAML or JSON)."""
    from ..lint.config import ConfigError, load_config

    try:
        config = load_config(path)
    except ConfigError as exc:
        raise RooflineError(f"--kernels: {exc}") from None
    entries = [entry for entry in config.kernels if entry.roofline is not None]
    if not entries:
        raise RooflineError(f"--kernels: {path} has no [[kernels]] entry with a roofline table "
                            "(name = ..., roofline = {{flops = ..., bytes = ...}})")
    return entries


def read_probe_results(path: str) -> dict:
    """A `probe --format json` document; its fields are checked where they are read (roofline.probe_ceilings)."""
    from ...specs.files import loads_json, read_bounded

    try:
        doc = loads_json(read_bounded(path))
    except OSError as exc:
        raise RooflineError(f"--probe: cannot read {path}: {exc.strerror}") from None
    except (ValueError, RecursionError) as exc:
        raise RooflineError(f"--probe: {path} is not a probe JSON document ({exc})") from None
    if not (isinstance(doc, dict) and "results" in doc and "device" in doc):
        raise RooflineError(f"--probe: {path} is not a probe JSON document (expected 'results' and 'device')")
    return doc
