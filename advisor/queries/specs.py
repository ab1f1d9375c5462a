"""`specs` and `specs show`: the catalog's architectures and products, and one architecture (or
product) with every value's source, where sources disagree and how header releases differ."""

from __future__ import annotations

from dataclasses import dataclass

SCHEMA_VERSION = 1  # `specs ... --format json`'s own layout


@dataclass(frozen=True)
class CatalogAnswer:
    """Every shipped architecture and product; the text table shows their main limits."""

    catalog: object  # specs' Catalog

    @property
    def archs(self) -> list:
        return self.catalog.sorted_archs()

    @property
    def products(self) -> list:
        return list(self.catalog.products.values())

    def to_json(self) -> dict:
        from ...specs.releases import DEFAULT_RELEASE

        catalog = self.catalog
        return {
            "schema_version": SCHEMA_VERSION,
            "cuda_release": DEFAULT_RELEASE,
            "architectures": [{"arch": a.sm, "compute_capability": a.cc, "family": a.family, "names": list(a.names),
                               "cuda_occupancy_h": catalog.family_covered_by_header[a.family]} for a in self.archs],
            "families": {f: cc for f, (cc, _) in catalog.family_default.items()},
            "products": [{"name": p.name, "title": p.title, "compute_capability": p.cc, "names": list(p.names)}
                         for p in self.products],
        }


def catalog_query() -> CatalogAnswer:
    from ...specs.catalog import shipped_catalog

    return CatalogAnswer(shipped_catalog())


def spec_query(resolved, newest) -> dict:
    """The document of `specs show`: `resolved` as the release asked for computes with it, and
    `newest`, the same name under the default release, from which releases' differences are read."""
    from ...specs.releases import differences_of

    document = _arch_document(resolved.arch, differences_of(newest.arch))
    if resolved.product:
        document["product"] = _product_document(resolved.product)
    if resolved.note:
        document["arch_note"] = resolved.note
    return document


def _product_document(p) -> dict:
    from ...specs.catalog import describe_source

    return {"name": p.name, "title": p.title,
            "values": {k: {"value": v, "source": p.sources[k], "citation": describe_source(p.sources[k])}
                       for k, v in p.values.items()},
            "disagreements": [{"field": d.field, "values": [{"value": v, "source": s} for v, s in d.values],
                               "used": d.used, "why": d.why} for d in p.disagreements]}


def _arch_document(arch, differences: list) -> dict:
    """`differences`: how the releases' headers differ for this architecture (releases.differences_of
    of the default release's Arch, whichever release `arch` follows)."""
    from ...specs.catalog import (
        ARCH_BEHAVIOUR_FIELDS,
        ARCH_INT_FIELDS,
        ARCH_OPTIONAL_FLAG_FIELDS,
        ARCH_OPTIONAL_INT_FIELDS,
        describe_source,
    )
    from ...specs.releases import release

    values = {}
    for key in ARCH_INT_FIELDS + ARCH_OPTIONAL_INT_FIELDS + ("shared_mem_configs",) + ARCH_OPTIONAL_FLAG_FIELDS \
            + ARCH_BEHAVIOUR_FIELDS:
        value = getattr(arch, key)
        if value is None or (key == "shared_mem_configs" and not value):
            continue
        ref = arch.source_of(key)
        values[key] = {"value": list(value) if isinstance(value, tuple) else value, "source": ref,
                       "citation": describe_source(ref), "provenance": arch.provenance(key),
                       "unconfirmed": ref.partition("#")[0] == "unconfirmed"}
    header = release(arch.cuda_release)
    return {
        "schema_version": SCHEMA_VERSION,
        "arch": arch.sm,
        "compute_capability": arch.cc,
        "family": arch.family,
        "names": list(arch.names),
        "formerly": list(arch.formerly),
        "cuda_release": arch.cuda_release,
        "exact_to": f"cuda_occupancy.h of CUDA {header.cuda} ({header.wheel}, {header.member})",
        "release_differences": differences,
        "shared_mem_model": arch.shared_mem_model,
        "values": values,
        "disagreements": [
            {"field": d.field, "values": [{"value": v, "source": s, "citation": describe_source(s)} for v, s in d.values],
             "used": d.used, "why": d.why}
            for d in arch.disagreements
        ],
        "origin": arch.origin,
    }
