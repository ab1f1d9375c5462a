"""The lint configuration: a pydantic model, loaded from TOML, YAML or JSON, or
from `[tool.tuneadvise]` in pyproject.toml. `tuneadvise schema` publishes the
model as JSON Schema (docs/lint.md shows an example).

Keys are snake_case; kebab-case (`fail-on`) is accepted too, as in other
pyproject tools. An unknown key is an error that suggests the closest valid one.
"""

from __future__ import annotations

import difflib
import json
import re
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tuneadvise.advisor import inputs
from tuneadvise.advisor.lint.settings import normalise_archs

Severity = Literal["error", "warning", "info"]
Bytes = int | str  # 12288 or "12K"; normalised to int by the validators


class ConfigError(ValueError):
    """A configuration file that does not validate; str() names file, line (where known), field and rule."""


def _normalise_keys(data):
    if isinstance(data, dict):
        return {str(k).replace("-", "_"): v for k, v in data.items()}
    return data


def _via_inputs(parse, value, field: str):
    try:
        return parse(value, field)
    except inputs.InputError as exc:
        raise ValueError(exc.detail) from None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _kebab(cls, data):
        return _normalise_keys(data)


class Launch(_Strict):
    """How a kernel is launched: what no compiler output records."""

    block_size: int | str | list[int] | None = Field(
        None, description="Threads per block: 256, '16x16' or [32, 8, 2]")
    dynamic_shared_mem: Bytes | None = Field(None, description="Dynamic shared memory per block: bytes or '32K'")
    carveout: int | str | None = Field(None, description="default, max-shared, max-l1, or a percentage 0-100")
    opt_in: bool | None = Field(None, description="cudaFuncAttributeMaxDynamicSharedMemorySize raised above 48 KB")
    cluster_dims: int | str | list[int] | None = Field(None, description="Thread-block cluster: 2 or '2x1x1' (9.0+)")
    grid_size: int | None = Field(None, ge=1, le=2**31 - 1, description="Blocks in the grid")
    max_threads_per_block: int | None = Field(None, ge=1, le=1024, description="__launch_bounds__ maximum")
    min_occupancy: float | None = Field(None, ge=0, le=1, description="Fail below this theoretical occupancy (0-1)")

    @field_validator("block_size")
    @classmethod
    def _block(cls, v):
        return None if v is None else list(_via_inputs(inputs.parse_block, v, "block_size"))

    @field_validator("cluster_dims")
    @classmethod
    def _cluster(cls, v):
        if v is None:
            return None
        dims = _via_inputs(inputs.parse_block, v, "cluster_dims")
        if _product(dims) > 64:
            raise ValueError("at most 64 blocks per cluster")
        return list(dims)

    @field_validator("dynamic_shared_mem")
    @classmethod
    def _dynamic(cls, v):
        return None if v is None else _via_inputs(inputs.parse_size, v, "dynamic_shared_mem")

    @field_validator("carveout")
    @classmethod
    def _carveout(cls, v):
        if v is None:
            return None
        _via_inputs(inputs.parse_carveout, v, "carveout")
        return v

    def cluster_size(self) -> int | None:
        return None if self.cluster_dims is None else _product(self.cluster_dims)


def _product(dims) -> int:
    total = 1
    for d in dims:
        total *= d
    return total


class _Matched(_Strict):
    """An entry that applies to the kernels its glob matches, on its architectures."""

    arch: list[str] | None = Field(None, description="Only on these architectures (default: all linted)")

    @field_validator("arch", mode="before")
    @classmethod
    def _archs(cls, v):
        return None if v is None else normalise_archs(v)

    def pattern(self) -> str:
        raise NotImplementedError

    def matches(self, names: tuple[str, ...], arch: str) -> bool:
        if self.arch is not None and arch not in self.arch:
            return False
        return any(fnmatchcase(n, self.pattern()) for n in names)


Quantity = float | str  # 2.1e12 or "2.1T"; normalised to float by the validator


class RooflineWork(_Strict):
    """A kernel's work, for `tuneadvise roofline --kernels FILE`: FLOPs and
    device-memory bytes (or their ratio), and optionally what it achieved."""

    flops: Quantity | None = Field(None, description="FLOPs per launch: 2.1e12 or '2.1T'")
    bytes: Quantity | None = Field(None, description="Bytes moved to and from device memory per launch")
    intensity: Quantity | None = Field(None, description="FLOP per byte, instead of flops and bytes")
    achieved: Quantity | None = Field(None, description="FLOP/s the kernel reaches, for the headroom")
    shared_bytes_per_flop: Quantity | None = Field(None, description="Shared-memory/L1 bytes per FLOP (the pyramid)")

    @field_validator("flops", "bytes", "intensity", "achieved", "shared_bytes_per_flop")
    @classmethod
    def _quantity(cls, v, info):
        return None if v is None else _via_inputs(inputs.parse_quantity, v, info.field_name)

    @model_validator(mode="after")
    def _work(self):
        if self.intensity is None and (self.flops is None or self.bytes is None):
            raise ValueError("give intensity, or both flops and bytes")
        if self.intensity is not None and (self.flops is not None or self.bytes is not None):
            raise ValueError("give intensity or flops and bytes, not both")
        return self

    def flop_per_byte(self) -> float:
        return self.intensity if self.intensity is not None else self.flops / self.bytes


class KernelEntry(Launch, _Matched):
    """Launch settings for the kernels whose name matches `name` (first match
    wins). With `registers` given, a kernel the config describes on its own,
    with no compiler output."""

    name: str = Field(description="Kernel name or glob, matched against the mangled name, the demangled "
                                  "signature and the bare name (saxpy, 'saxpy<*', '_Z5saxpy*')")
    registers: int | None = Field(None, ge=0, le=255, description="Registers per thread, for a kernel without compiler output")
    shared_mem: Bytes | None = Field(None, description="Static shared memory, for a kernel without compiler output")
    barriers: int | None = Field(None, ge=0, le=16, description="Named barriers per block, for a kernel without compiler output")
    spill_bytes: int | None = Field(None, ge=0, description="Spill bytes per thread, for a kernel without compiler output")
    ignore: list[str] = Field(default_factory=list, description="Finding codes or prefixes not reported for this kernel")
    roofline: RooflineWork | None = Field(None, description="The kernel's work, for 'tuneadvise roofline --kernels'")

    @field_validator("shared_mem")
    @classmethod
    def _static(cls, v):
        return None if v is None else _via_inputs(inputs.parse_size, v, "shared_mem")

    @field_validator("ignore", mode="before")
    @classmethod
    def _codes(cls, v):
        return _rule_codes(v)

    def pattern(self) -> str:
        return self.name


class Budget(_Matched):
    """Resource limits for the kernels whose name matches `kernel` (first match wins)."""

    kernel: str = Field("*", description="Kernel name or glob, matched as in [[kernels]]")
    max_registers: int | None = Field(None, ge=0, le=255, description="Registers per thread at most")
    max_shared_mem: Bytes | None = Field(None, description="Static plus dynamic shared memory per block at most")
    max_spill_bytes: int | None = Field(None, ge=0, description="Spill bytes per thread at most")
    no_spills: bool = Field(False, description="Same as max_spill_bytes = 0")
    min_occupancy: float | None = Field(None, ge=0, le=1, description="Theoretical occupancy at least (0-1)")

    @field_validator("max_shared_mem")
    @classmethod
    def _smem(cls, v):
        return None if v is None else _via_inputs(inputs.parse_size, v, "max_shared_mem")

    def spill_limit(self) -> int | None:
        return 0 if self.no_spills else self.max_spill_bytes

    def pattern(self) -> str:
        return self.kernel


def _rule_codes(v):
    from tuneadvise.advisor.rules import registry

    items = [v] if isinstance(v, str) else list(v or [])
    codes = []
    for item in items:
        code = str(item).strip().upper()
        if not any(known.startswith(code) for known in registry()):
            raise ValueError(f"'{item}' matches no rule code (see 'tuneadvise rules')")
        codes.append(code)
    return codes


class LintConfig(_Strict):
    """Project settings for `tuneadvise lint`; command-line flags override them."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="tuneadvise lint configuration")

    schema_version: int | None = Field(None, description="1 (optional)")
    arch: list[str] = Field(default_factory=list, description="Architectures to lint (default: those in the compiler output)")
    inputs: list[str] = Field(default_factory=list, description="Compiler output, binaries and sources to lint when none are named")
    select: list[str] = Field(default_factory=list, description="Only these finding codes or prefixes")
    ignore: list[str] = Field(default_factory=list, description="Drop these finding codes or prefixes")
    fail_on: Severity = Field("error", description="Exit 1 on findings at or above this severity")
    min_occupancy: float | None = Field(None, ge=0, le=1, description="Every kernel's theoretical occupancy at least")
    block_size: int | str | list[int] | None = Field(None, description="Block size for kernels no entry configures")
    kernels: list[KernelEntry] = Field(default_factory=list, description="Per-kernel launch settings, first match wins")
    budgets: list[Budget] = Field(default_factory=list, description="Per-kernel resource budgets, first match wins")

    @field_validator("arch", mode="before")
    @classmethod
    def _archs(cls, v):
        return normalise_archs(v)

    @field_validator("select", "ignore", mode="before")
    @classmethod
    def _codes(cls, v):
        return _rule_codes(v)

    @field_validator("block_size")
    @classmethod
    def _block(cls, v):
        return None if v is None else list(_via_inputs(inputs.parse_block, v, "block_size"))

    def kernel_entry(self, names: tuple[str, ...], arch: str) -> KernelEntry | None:
        return next((k for k in self.kernels if k.matches(names, arch)), None)

    def budget(self, names: tuple[str, ...], arch: str) -> Budget | None:
        return next((b for b in self.budgets if b.matches(names, arch)), None)


def json_schema() -> dict:
    schema = LintConfig.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://tuneadvise.dev/schema/lint-config-1.json"
    return schema


# -- loading ----------------------------------------------------------------------

def load_config(path: str | Path) -> LintConfig:
    """A config file, or the [tool.tuneadvise] table of a pyproject.toml."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    try:
        raw = _parse(path, text)
    except RecursionError:  # every parser recurses on nesting
        raise ConfigError(f"{path}: nested too deeply to be a config") from None
    if path.name == "pyproject.toml":
        raw = raw.get("tool", {}).get("tuneadvise", {})
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a table of settings at the top level")
    try:
        return LintConfig.model_validate(raw)
    except ValidationError as err:
        raise ConfigError(_describe(path, text, err)) from None


def _parse(path: Path, text: str) -> dict:
    suffix = path.suffix.lower()
    if suffix == ".toml":
        try:
            import tomllib
        except ImportError:  # Python 3.10
            import tomli as tomllib
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    if suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    try:
        import yaml
    except ImportError:
        raise ConfigError(f"{path}: YAML configs need PyYAML: pip install 'tuneadvise[yaml]'") from None
    try:
        return yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None


def _describe(path: Path, text: str, err: ValidationError) -> str:
    first = err.errors()[0]
    loc = [str(p) if isinstance(p, str) else p for p in first["loc"]]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".") or "(document)"
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        model = _model_at(loc[:-1])
        allowed = sorted(model.model_fields) if model else []
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        message = f"unknown key; did you mean '{close[0]}'?" if close else f"unknown key (allowed: {', '.join(allowed)})"
    line = _line_of(text, loc) if path.suffix.lower() == ".toml" else None
    return f"{path}{f':{line}' if line else ''}: {where}: {message}"


def _model_at(loc) -> type[BaseModel] | None:
    """The model of the table at `loc` (for its valid keys), following nested models and lists of them."""
    model = LintConfig
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        model = _nested_model(field.annotation) if field else None
        if model is None:
            return None
    return model


def _nested_model(annotation) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for m in map(_nested_model, get_args(annotation)) if m is not None), None)


def _line_of(text: str, loc) -> int | None:
    """The line of a TOML key: within the n-th [[table]] of an array of tables, or at the top."""
    lines = text.splitlines()
    start, end = 0, len(lines)
    if len(loc) >= 2 and isinstance(loc[1], int):
        header = re.compile(r"^\s*\[\[\s*(?:tool\.tuneadvise\.)?" + re.escape(str(loc[0])) + r"\s*\]\]")
        starts = [i for i, line in enumerate(lines) if header.match(line)]
        if loc[1] >= len(starts):
            return None
        start = starts[loc[1]]
        end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
        key = loc[2] if len(loc) > 2 else None
        if key is None:
            return start + 1
    else:
        key = loc[0] if loc else None
    if not isinstance(key, str):
        return None
    pattern = re.compile(r"^\s*" + re.escape(key).replace("_", "[_-]") + r"\s*=")
    return next((i + 1 for i in range(start, end) if pattern.match(lines[i])), None)
