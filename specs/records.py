"""The spec's records: one compute capability (Arch), one product (Product), and
how a family document becomes them. Immutable and hashable by value, so that an
Arch can key functools caches (equal specs are equal keys, whichever object)."""

# Annotations here are evaluated, not text (no `from __future__ import annotations`): typing.NamedTuple
# compiles every annotation written as text when its class is made, on every command's start-up.
from collections.abc import Mapping
from typing import NamedTuple

# The cuda_occupancy.h release the shipped spec files follow: the first of releases.toml
# (tests/specs/test_releases.py holds them equal); specs/releases.py answers for the others.
DEFAULT_RELEASE = "13.5"
# Fields every architecture must define (after family defaults are applied).
ARCH_INT_FIELDS = (
    "warp_size",
    "max_threads_per_block",
    "max_warps_per_sm",
    "max_blocks_per_sm",
    "registers_per_sm",
    "registers_per_block",
    "max_registers_per_thread",
    "register_allocation_unit",
    "warp_allocation_granularity",
    "shared_mem_per_sm",
    "shared_mem_per_block",
    "shared_mem_per_block_optin",
    "reserved_shared_mem_per_block",
    "shared_mem_allocation_unit",
)
# Fields only some architectures have.
ARCH_OPTIONAL_INT_FIELDS = (
    "register_launch_check_granularity",
    "barriers_per_block_slot",
    "max_cluster_size_portable",
    "max_cluster_size_nonportable",
    "l1_shared_total",
    "virtual_resources_per_sm",
    "global_memory_sector_bytes",
    # Results per clock per SM of 32- and 64-bit floating-point add, multiply and multiply-add (the
    # Programming Guide's arithmetic-instruction throughput table): their ratio is the FP64 rate.
    "fp32_results_per_clock",
    "fp64_results_per_clock",
)
# How cuda_occupancy.h behaves per compute capability, as data: the header's register cap per
# thread, whether the opt-in shared-memory limit exists, whether the reserved shared memory
# counts in the per-block limit. A user's spec file may leave them out: they are then those of
# the shipped architecture with the same compute capability.
ARCH_BEHAVIOUR_FIELDS = (
    "header_max_registers_per_thread",
    "shared_mem_opt_in",
    "reserved_shared_mem_in_block_limit",
)
# Optional facts of the hardware that are not numbers: whether shared memory and the L1 cache are
# one on-chip array (Fermi, Kepler, Volta and later) or separate caches (Maxwell, Pascal). The
# roofline's pyramid reads it: with separate caches its bandwidth is shared memory's alone.
ARCH_OPTIONAL_FLAG_FIELDS = ("shared_l1_unified",)
# Optional values a user's spec file inherits from the shipped architecture of the same compute
# capability when it leaves them out: what the header hard-codes and no device attribute reports.
ARCH_INHERITED_OPTIONAL_FIELDS = ("virtual_resources_per_sm", "global_memory_sector_bytes", "shared_l1_unified",
                                  "fp32_results_per_clock", "fp64_results_per_clock")
PRODUCT_NUMBER_FIELDS = (
    "sm_count",
    "base_clock_mhz",
    "boost_clock_mhz",
    "memory_bandwidth_gbs",
    "measured_copy_bandwidth_gbs",
    "fp64_tflops",
    "fp32_tflops",
    "fp16_tflops",
    "fp16_tensor_tflops",
    "l2_bytes",
    "gpc_sms",  # SMs per GPC (cluster scheduling domain): a tuple, nominal for the product
    "dram_latency_ns",
    "read_bandwidth_curve",  # (warps per SM, bytes in flight per thread, GB/s) points, measured
)
# Source IDs that are not documents: what the driver reported, what a probe measured, what a
# user's file says without a citation. Everything else is the shipped spec's.
PROVENANCE_KINDS = ("driver", "measured", "user")


class FrozenMap(Mapping):
    """A read-only mapping that hashes by value, so that a record holding one can key a cache
    (functools.lru_cache) by what it is rather than by which object it is."""

    __slots__ = ("_items", "_hash")

    def __init__(self, items=()):
        self._items = dict(items)
        self._hash = hash(frozenset(self._items.items()))  # the values never change

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"


def provenance_of(source: str | None) -> str:
    """'driver#warp_size of ...' -> 'driver'; a document's citation -> 'spec'."""
    kind = (source or "").partition("#")[0]
    return kind if kind in PROVENANCE_KINDS else "spec"


class SourceDisagreement(NamedTuple):
    field: str
    values: tuple[tuple[float, str], ...]  # (value, source)
    used: float
    why: str


class Arch(NamedTuple):
    """One compute capability's limits. Every number has an entry in `sources`."""

    cc: str
    major: int
    minor: int
    family: str
    names: tuple[str, ...]
    warp_size: int
    max_threads_per_block: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int
    registers_per_block: int
    max_registers_per_thread: int
    register_allocation_unit: int
    warp_allocation_granularity: int
    shared_mem_per_sm: int
    shared_mem_per_block: int
    shared_mem_per_block_optin: int
    reserved_shared_mem_per_block: int
    shared_mem_allocation_unit: int
    shared_mem_model: str  # "carveout" (7.0+), "cache-config" (2.x/3.x), "fixed" (5.x/6.x)
    shared_mem_configs: tuple[int, ...]
    header_max_registers_per_thread: int  # cudaOccRegAllocationMaxPerThread (255 up to 6.x, 256 from 7.0)
    shared_mem_opt_in: bool  # cudaFuncAttributeMaxDynamicSharedMemorySize can raise the per-block limit (7.0+)
    reserved_shared_mem_in_block_limit: bool  # cudaOccSMemPerBlock adds the reserved bytes (8.0+)
    register_launch_check_granularity: int | None = None
    barriers_per_block_slot: int | None = None
    max_cluster_size_portable: int | None = None
    max_cluster_size_nonportable: int | None = None
    l1_shared_total: int | None = None
    global_memory_sector_bytes: int | None = None  # the unit a warp's global access is served in (32 B from 3.0)
    fp32_results_per_clock: int | None = None  # FP32 add/multiply/FMA results per clock per SM
    fp64_results_per_clock: int | None = None  # FP64 add/multiply/FMA results per clock per SM
    virtual_resources_per_sm: int | None = None  # cudaOccMaxVirtualResourceCountPerSM (CUDA 13.5: 128 on 10.x-12.x)
    shared_l1_unified: bool | None = None  # shared memory and L1 one on-chip array (None: not given)
    # Whether cudaOccAvailableDynamicSMemPerBlock subtracts the reserved shared memory (CUDA 13.5: 8.0+,
    # as the per-block limit adds it); an older header release may say otherwise (specs/releases.py).
    available_dynamic_subtracts_reserved: bool = False
    cuda_release: str = ""  # the cuda_occupancy.h release these values follow (specs/releases.py)
    formerly: tuple[str, ...] = ()  # compute capabilities NVIDIA renamed to this one (Thor: 10.1 -> 11.0)
    sources: FrozenMap = FrozenMap()  # field -> source reference
    disagreements: tuple[SourceDisagreement, ...] = ()
    origin: str = "shipped"  # "shipped", or the path of a user spec file

    @property
    def sm(self) -> str:
        """Normalized target name, e.g. 'sm_90'."""
        return f"sm_{self.major}{self.minor}"

    @property
    def max_threads_per_sm(self) -> int:
        return self.max_warps_per_sm * self.warp_size

    @property
    def max_cluster_size(self) -> int | None:
        """The most blocks a thread-block cluster may hold (the non-portable limit where there is one);
        None before clusters (9.0)."""
        return self.max_cluster_size_nonportable or self.max_cluster_size_portable

    @property
    def cuobjdump_shared_includes_reserved(self) -> bool:
        """cuobjdump's SHARED figure adds the reserved shared memory per block (recorded with CUDA 13
        on sm_90, sm_100 and sm_120; on sm_75 to sm_89 it does not)."""
        return self.major >= 9

    @property
    def independent_thread_scheduling(self) -> bool:
        """Volta's independent thread scheduling (7.0 on): a warp's threads need not run in lockstep,
        and the compiler no longer provides the warp intrinsics without _sync (CUDA Programming
        Guide, Compute Capability 7.x)."""
        return self.major >= 7

    @property
    def native_32bit_integer_multiply(self) -> bool:
        """32-bit integer multiply in hardware (2.0 on), so __[u]mul24 is emulated there (Fermi
        Tuning Guide, 32-Bit Integer Multiplication)."""
        return self.major >= 2

    def source_of(self, field: str) -> str:
        """The source reference of one value ('user' where a user's file gave none)."""
        return self.sources.get(field, "user")

    def provenance(self, field: str) -> str:
        """Where one value came from: 'spec', 'driver', 'measured' or 'user'."""
        return provenance_of(self.sources.get(field))


class Product(NamedTuple):
    name: str
    title: str
    cc: str
    names: tuple[str, ...]
    values: FrozenMap  # field -> number
    sources: FrozenMap = FrozenMap()  # field -> source reference
    disagreements: tuple[SourceDisagreement, ...] = ()

    def get(self, key: str):
        return self.values.get(key)

    def source_of(self, field: str) -> str:
        return self.sources.get(field, "user")


class Resolved(NamedTuple):
    """What an --arch value resolved to, and how."""

    arch: Arch
    product: Product | None = None
    note: str | None = None  # e.g. why a family name picked this compute capability


def _value(entry):
    return entry["value"] if isinstance(entry, dict) else entry


def _disagreements(raw: list, values_in_use: dict) -> tuple[SourceDisagreement, ...]:
    """The value in use is the record's own field value (the models check it is one of those listed)."""
    return tuple(
        SourceDisagreement(
            field=d["field"],
            values=tuple((v["value"], v["source"]) for v in d["values"]),
            used=values_in_use.get(d["field"]),
            why=d["why"],
        )
        for d in raw
    )


def build_arch(family: str, defaults: dict, entry: dict, origin: str = "shipped", base: Arch | None = None) -> Arch:
    """`base`: the shipped architecture of the same compute capability, whose behaviour fields a
    user's file may leave out."""
    merged = {**defaults, **{k: v for k, v in entry.items() if k not in ("cc", "names", "formerly", "disagreement")}}
    major, minor = (int(x) for x in entry["cc"].split("."))
    kwargs = {}
    sources = {}
    for key in ARCH_INT_FIELDS + ARCH_OPTIONAL_INT_FIELDS + ARCH_OPTIONAL_FLAG_FIELDS + ARCH_BEHAVIOUR_FIELDS + ("shared_mem_configs",):
        if key in merged:
            kwargs[key] = _value(merged[key])
            if isinstance(merged[key], dict):
                sources[key] = merged[key]["source"]
        elif key in ARCH_BEHAVIOUR_FIELDS:
            if base is None:
                raise ValueError(f"{entry['cc']}: {key} missing (no shipped architecture {entry['cc']} to take it from)")
            kwargs[key] = getattr(base, key)
            sources[key] = base.source_of(key)
        elif key in ARCH_INHERITED_OPTIONAL_FIELDS and base is not None and getattr(base, key) is not None:
            kwargs[key] = getattr(base, key)
            sources[key] = base.source_of(key)
    disagreements = _disagreements(entry.get("disagreement", []), kwargs)
    return Arch(
        cc=entry["cc"],
        major=major,
        minor=minor,
        family=family,
        names=tuple(entry.get("names", ())),
        shared_mem_model=merged.get("shared_mem_model", "fixed"),
        shared_mem_configs=tuple(kwargs.pop("shared_mem_configs", ()) or ()),
        sources=FrozenMap(sources),
        disagreements=disagreements,
        origin=origin,
        available_dynamic_subtracts_reserved=bool(kwargs.get("reserved_shared_mem_in_block_limit")),
        cuda_release=DEFAULT_RELEASE,
        formerly=tuple(entry.get("formerly", ())),
        **kwargs,
    )


def _frozen(value):
    """Lists (of lists) as tuples, so a product stays hashable."""
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


def build_product(entry: dict) -> Product:
    values, sources = {}, {}
    for key in PRODUCT_NUMBER_FIELDS:
        if key in entry:
            value = _value(entry[key])
            values[key] = _frozen(value)
            sources[key] = entry[key]["source"] if isinstance(entry[key], dict) else "user"
    return Product(
        name=entry["name"],
        title=entry.get("title", entry["name"]),
        cc=entry["cc"],
        names=tuple(entry.get("names", ())),
        values=FrozenMap(values),
        sources=FrozenMap(sources),
        disagreements=_disagreements(entry.get("disagreement", []), values),
    )
