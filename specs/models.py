"""Pydantic models that validate spec files: unknown fields are rejected, every
number must name a known source, and the numbers must agree with each other.

Imported only when a spec file is validated (tests, `specs validate`,
`--spec-file`), never on the hot path of `occupancy`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .catalog import (
    ARCH_BEHAVIOUR_FIELDS,
    ARCH_INT_FIELDS,
    ARCH_OPTIONAL_INT_FIELDS,
    Arch,
    Catalog,
    catalog_with,
    sources,
)
from .errors import InputError
from .files import loads_json, read_bounded, read_toml

T = TypeVar("T")


class SpecFileError(InputError):
    """A spec file that does not validate; the message names file, field and rule. `field`: the
    argument that named the file (`spec_file`, --spec-file), or none where the file is the
    command's own subject (`specs validate FILE`)."""

    def __init__(self, message: str, field: str = "spec_file"):
        super().__init__(field, message)  # "": InputError keeps the message alone


def _check_source(ref: str) -> str:
    ident = ref.partition("#")[0]
    if ident not in sources() and ident not in ("user", "driver", "measured"):
        raise ValueError(f"unknown source '{ident}' (known: {', '.join(sorted(sources()))}, user, driver, measured)")
    return ref


class Strict(BaseModel):
    # strict: "32" or 32.0 for a count is a typo to report, not a value to coerce (the catalog
    # reads the same raw document, so what validates is exactly what it uses).
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Sourced(Strict, Generic[T]):
    value: T
    source: str

    @field_validator("source")
    @classmethod
    def _known_source(cls, ref: str) -> str:
        return _check_source(ref)


NonNeg = Annotated[int, Field(ge=0)]
Pos = Annotated[int, Field(gt=0)]


class DisagreementValue(Strict):
    value: float
    source: str

    @field_validator("source")
    @classmethod
    def _known_source(cls, ref: str) -> str:
        return _check_source(ref)


class DisagreementModel(Strict):
    field: str
    values: list[DisagreementValue] = Field(min_length=2)
    why: str = Field(min_length=10)


class ArchFields(Strict):
    """Every per-architecture field; all optional here because family defaults fill them in."""

    warp_size: Sourced[Pos] | None = None
    max_threads_per_block: Sourced[Pos] | None = None
    max_warps_per_sm: Sourced[Pos] | None = None
    max_blocks_per_sm: Sourced[Pos] | None = None
    registers_per_sm: Sourced[Pos] | None = None
    registers_per_block: Sourced[Pos] | None = None
    max_registers_per_thread: Sourced[Annotated[int, Field(ge=1, le=255)]] | None = None
    register_allocation_unit: Sourced[Pos] | None = None
    warp_allocation_granularity: Sourced[Pos] | None = None
    register_launch_check_granularity: Sourced[Pos] | None = None
    shared_mem_per_sm: Sourced[Pos] | None = None
    shared_mem_per_block: Sourced[Pos] | None = None
    shared_mem_per_block_optin: Sourced[Pos] | None = None
    reserved_shared_mem_per_block: Sourced[NonNeg] | None = None
    shared_mem_allocation_unit: Sourced[Pos] | None = None
    shared_mem_model: Literal["carveout", "cache-config", "fixed"] | None = None
    shared_mem_configs: Sourced[list[NonNeg]] | None = None
    l1_shared_total: Sourced[Pos] | None = None
    barriers_per_block_slot: Sourced[Pos] | None = None
    max_cluster_size_portable: Sourced[Pos] | None = None
    max_cluster_size_nonportable: Sourced[Pos] | None = None
    virtual_resources_per_sm: Sourced[Pos] | None = None
    global_memory_sector_bytes: Sourced[Pos] | None = None
    fp32_results_per_clock: Sourced[Pos] | None = None
    fp64_results_per_clock: Sourced[Pos] | None = None
    shared_l1_unified: Sourced[bool] | None = None
    header_max_registers_per_thread: Sourced[Annotated[int, Field(ge=255, le=256)]] | None = None
    shared_mem_opt_in: Sourced[bool] | None = None
    reserved_shared_mem_in_block_limit: Sourced[bool] | None = None


class ArchEntry(ArchFields):
    cc: str = Field(pattern=r"^\d{1,2}\.\d$")
    names: list[str] = []
    formerly: list[Annotated[str, Field(pattern=r"^\d{1,2}\.\d$")]] = []  # compute capabilities it was renamed from
    disagreement: list[DisagreementModel] = []


class ProductEntry(Strict):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]*$")
    title: str | None = None
    names: list[str] = []
    cc: str = Field(pattern=r"^\d{1,2}\.\d$")
    sm_count: Sourced[Pos]
    base_clock_mhz: Sourced[Pos] | None = None
    boost_clock_mhz: Sourced[Pos]
    memory_bandwidth_gbs: Sourced[Annotated[float, Field(gt=0)]]
    measured_copy_bandwidth_gbs: Sourced[Annotated[float, Field(gt=0)]] | None = None
    fp64_tflops: Sourced[Annotated[float, Field(gt=0)]] | None = None
    fp32_tflops: Sourced[Annotated[float, Field(gt=0)]]
    fp16_tflops: Sourced[Annotated[float, Field(gt=0)]] | None = None
    fp16_tensor_tflops: Sourced[Annotated[float, Field(gt=0)]] | None = None
    l2_bytes: Sourced[Pos] | None = None
    gpc_sms: Sourced[list[Pos]] | None = None  # SMs per GPC, nominal (harvested chips differ)
    dram_latency_ns: Sourced[Annotated[float, Field(gt=0)]] | None = None
    # (warps per SM, bytes in flight per thread, GB/s) points that `probe --save` measured
    read_bandwidth_curve: Sourced[list[Annotated[list[Annotated[float, Field(ge=0)]], Field(min_length=3, max_length=3)]]] | None = None
    disagreement: list[DisagreementModel] = []

    @model_validator(mode="after")
    def _gpcs_cover_the_sms(self):
        if self.gpc_sms is not None and sum(self.gpc_sms.value) != self.sm_count.value:
            raise ValueError(f"{self.name}: gpc_sms adds up to {sum(self.gpc_sms.value)} SMs, not sm_count "
                             f"{self.sm_count.value}")
        return self


class ResolvedArch(Strict):
    """An architecture after family defaults are applied: complete and consistent."""

    cc: str
    values: dict[str, int]
    behaviour: dict[str, int | bool] = {}  # ARCH_BEHAVIOUR_FIELDS the file sets
    shared_mem_model: Literal["carveout", "cache-config", "fixed"]
    shared_mem_configs: list[int]

    @model_validator(mode="after")
    def _consistent(self):
        v = self.values
        missing = [f for f in ARCH_INT_FIELDS if f not in v]
        if missing:
            raise ValueError(f"{self.cc}: missing {', '.join(missing)}")
        checks = [
            (v["registers_per_block"] <= v["registers_per_sm"], "registers_per_block must not exceed registers_per_sm"),
            (v["max_threads_per_block"] <= v["max_warps_per_sm"] * v["warp_size"],
             "max_threads_per_block must not exceed max_warps_per_sm x warp_size"),
            (v["shared_mem_per_block"] <= v["shared_mem_per_block_optin"],
             "shared_mem_per_block must not exceed shared_mem_per_block_optin"),
            (v["shared_mem_per_block_optin"] + v["reserved_shared_mem_per_block"] <= v["shared_mem_per_sm"],
             "shared_mem_per_block_optin + reserved must fit in shared_mem_per_sm"),
            (v["shared_mem_per_sm"] % v["shared_mem_allocation_unit"] == 0,
             "shared_mem_per_sm must be a multiple of shared_mem_allocation_unit"),
            (v["registers_per_sm"] % v["warp_allocation_granularity"] == 0,
             "registers_per_sm must divide evenly among warp_allocation_granularity sub-partitions"),
            (v["warp_size"] == 32, "warp_size must be 32: every CUDA compute capability has 32-thread warps"),
            (v["max_registers_per_thread"] <= 255, "max_registers_per_thread must not exceed 255"),
        ]
        b = self.behaviour
        if b.get("shared_mem_opt_in") is False:
            checks.append((v["shared_mem_per_block_optin"] == v["shared_mem_per_block"],
                           "shared_mem_per_block_optin must equal shared_mem_per_block where shared_mem_opt_in is false"))
        if "header_max_registers_per_thread" in b:
            checks.append((v["max_registers_per_thread"] <= b["header_max_registers_per_thread"],
                           "max_registers_per_thread must not exceed header_max_registers_per_thread"))
        for unit in ("register_allocation_unit", "shared_mem_allocation_unit", "warp_allocation_granularity"):
            checks.append((v[unit] & (v[unit] - 1) == 0, f"{unit} must be a power of two"))
        if self.shared_mem_model != "fixed":
            configs = self.shared_mem_configs
            checks.append((configs == sorted(configs) and len(set(configs)) == len(configs),
                           "shared_mem_configs must be strictly increasing"))
            checks.append((bool(configs) and configs[-1] == v["shared_mem_per_sm"],
                           "the largest shared_mem_configs entry must equal shared_mem_per_sm"))
        for ok, message in checks:
            if not ok:
                raise ValueError(f"{self.cc}: {message}")
        return self


class FamilyDocument(Strict):
    family: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    default_cc: str | None = None
    default_note: str | None = None
    cuda_occupancy_h: bool = False
    defaults: ArchFields = ArchFields()
    arch: list[ArchEntry] = Field(min_length=1)
    product: list[ProductEntry] = []

    @model_validator(mode="after")
    def _resolve_each(self):
        ccs = [a.cc for a in self.arch]
        if len(set(ccs)) != len(ccs):
            raise ValueError("an architecture is listed twice")
        if self.default_cc is not None and self.default_cc not in ccs:
            raise ValueError(f"default_cc {self.default_cc} is not one of {', '.join(ccs)}")
        for entry in self.arch:
            merged, behaviour = {}, {}
            for source in (self.defaults, entry):
                for key in ARCH_INT_FIELDS + ARCH_OPTIONAL_INT_FIELDS:
                    item = getattr(source, key)
                    if item is not None:
                        merged[key] = item.value
                for key in ARCH_BEHAVIOUR_FIELDS:
                    item = getattr(source, key)
                    if item is not None:
                        behaviour[key] = item.value
            configs = entry.shared_mem_configs or self.defaults.shared_mem_configs
            model = entry.shared_mem_model or self.defaults.shared_mem_model or "fixed"
            ResolvedArch(cc=entry.cc, values=merged, behaviour=behaviour, shared_mem_model=model,
                         shared_mem_configs=configs.value if configs else [])
            for d in entry.disagreement:
                used = merged.get(d.field)
                if used is None:
                    raise ValueError(f"{entry.cc}: disagreement names unknown field '{d.field}'")
                if used not in [x.value for x in d.values]:
                    raise ValueError(f"{entry.cc}: disagreement on {d.field} lists no value equal to the one used ({used})")
        return self


def _format_error(path: Path, err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(document)"
    return f"{path}: {where}: {first['msg']}"


def validate_family_document(path: Path, field: str = "spec_file") -> dict:
    """Validate a spec file; return the raw document for the catalog, or raise SpecFileError
    naming `field` (the argument that named the file; "" where the file is the subject)."""
    try:
        raw = read_toml(path) if path.suffix != ".json" else _read_json(path)
    except OSError as exc:
        raise SpecFileError(f"cannot read {path}: {exc.strerror}", field) from None
    except (ValueError, RecursionError) as exc:  # TOML/JSON decode errors are ValueErrors; deep nesting recurses
        raise SpecFileError(f"{path} is not valid {'JSON' if path.suffix == '.json' else 'TOML'}: {exc}", field) from None
    if isinstance(raw, dict) and "schema_version" in raw and "values" in raw:
        raw = family_document_of_shown(raw)
    try:
        FamilyDocument.model_validate(raw)
    except ValidationError as err:
        raise SpecFileError(_format_error(path, err), field) from None
    return raw


def family_document_of_shown(shown: dict) -> dict:
    """The spec file that `specs show ARCH --format json` describes: one [[arch]] entry with every
    value and its source, and the product where one was shown (an edited copy of a shipped
    architecture or product is a valid spec file). Keys
    that are not values of a spec file (citations, provenance, the header release) are left out;
    the models check the rest."""
    values = shown["values"]
    entry = {"cc": shown.get("compute_capability"), "names": shown.get("names", []),
             "formerly": shown.get("formerly", [])}
    if "shared_mem_model" in shown:
        entry["shared_mem_model"] = shown["shared_mem_model"]
    entry.update(_sourced_values(values))
    document = {"family": shown.get("family"), "arch": [entry]}
    product = shown.get("product")
    if isinstance(product, dict):  # `specs show PRODUCT`: the product too
        document["product"] = [{"name": product.get("name"), "title": product.get("title"),
                                "cc": shown.get("compute_capability"), **_sourced_values(product.get("values", {}))}]
    return document


def _sourced_values(values) -> dict:
    """`specs show`'s values ({value, source, citation, ...}) as a spec file's ({value, source})."""
    if not isinstance(values, dict):
        return {}
    return {key: {k: item[k] for k in ("value", "source") if k in item} if isinstance(item, dict) else item
            for key, item in values.items()}


def _read_json(path: Path) -> dict:
    return loads_json(read_bounded(path, what="spec file"))


def load_user_spec(path) -> tuple[Catalog, list[Arch]]:
    """Validate a user's spec file with the pydantic models and add it to a catalog copy."""
    path = Path(path)
    try:
        return catalog_with(validate_family_document(path), origin=str(path))
    except SpecFileError:
        raise  # already names the file (and is a ValueError itself)
    except ValueError as exc:  # a behaviour field left out for a compute capability nothing ships
        raise SpecFileError(f"{path}: {exc}") from None
