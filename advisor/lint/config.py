"""The lint configuration: a pydantic model, loaded from TOML, YAML or JSON, or
from `[tool.tuneadvise]` in pyproject.toml. `tuneadvise schema` publishes the
model as JSON Schema (docs/lint.md shows an example).

Keys are snake_case; kebab-case (`fail-on`) is accepted too, as in other
pyproject tools (and the printed schema lists both). An unknown key is an
error that suggests the closest valid one. A [[kernels]] entry's launch keys
and figures are LaunchConfig's own (advisor/launch.FIELDS): the model is
generated from them and the lint builds each kernel's LaunchConfig with
LaunchConfig.from_mapping. Untrusted values are never str()ed into a message
(`quoted`), and YAML aliases are refused (a few hundred bytes expand to
gigabytes).
"""

from __future__ import annotations

import difflib
import json
import re
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    WithJsonSchema,
    create_model,
    field_validator,
    model_validator,
)

from ...specs.errors import InputError
from ...specs.files import document_text, loads_json, read_bounded, tomllib, twice
from .. import inputs
from ..launch import BY_KEY as LAUNCH_FIELDS
from ..launch import MAX_CLUSTER_SIZE, MAX_LOCAL_BYTES, MAX_SM_COUNT
from ..roofline_work import RooflineWork
from ..strict_model import StrictModel, via_inputs
from ..text import clip, quoted
from .settings import NO_CONFIG, normalise_archs, product_sm_counts

Severity = Literal["error", "warning", "info"]
Bytes = int | str  # 12288 or "12K"; normalised to int by the validators


class ConfigError(InputError):
    """A configuration file that does not validate; str() names file, line (where known), field and rule."""


# -- launch settings and figures: the fields of advisor/launch.FIELDS ---------------
# A [[kernels]] entry's launch keys and a config-only kernel's figures are the
# LaunchConfig keys themselves: each field's description is FIELDS' help, each
# value is validated by FIELDS' parser (so a config accepts exactly what
# `occupancy` options and batch lines accept), and the lint builds the kernel's
# LaunchConfig from the user's values with LaunchConfig.from_mapping.
LAUNCH_KEYS = ("block_size", "dynamic_shared_mem", "carveout", "opt_in", "grid_size", "max_threads_per_block",
               "virtual_resources")
FIGURE_KEYS = ("registers", "shared_mem", "barriers", "spill_stores", "spill_loads", "stack_frame")

# The JSON Schema of a value each parser accepts (the printed schema; the parser has the last word).
_INT = {"type": "integer"}
_SIZE = {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]}
_SCHEMAS = {
    inputs.parse_block: {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "array", "items": _INT}]},
    inputs.parse_size: _SIZE,
    inputs.parse_carveout: {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    inputs.parse_bool: {"anyOf": [{"type": "boolean"}, {"type": "string"}]},
}


def _launch_field(key: str, note: str = ""):
    """(annotation, pydantic Field) for the LaunchConfig key `key`: FIELDS' parser validates it,
    FIELDS' help describes it; the user's value is kept as given for LaunchConfig.from_mapping."""
    spec = LAUNCH_FIELDS[key]

    def validate(value):
        if value is not None:
            via_inputs(spec.parse, value, key)
        return value

    schema = _SCHEMAS.get(spec.parse, _INT)
    annotation = Annotated[object, AfterValidator(validate), WithJsonSchema(schema)]
    return annotation, Field(None, description=spec.help + note)


def _launch_model(name: str, base, keys: tuple[str, ...], doc: str, note: str = ""):
    return create_model(name, __base__=base, __doc__=doc, **{key: _launch_field(key, note) for key in keys})


MAX_BLOCKS_ASSUMED = 1024  # far above any architecture's resident blocks per SM (32)


class _LaunchExtras(StrictModel):
    """What a launch has beyond LaunchConfig's fields: the cluster shape and a minimum occupancy."""

    cluster_dims: int | str | list[int] | None = Field(None, description="Thread-block cluster: 2 or '2x1x1' (9.0+)")
    min_occupancy: float | None = Field(None, ge=0, le=1, description="Fail below this theoretical occupancy (0-1)")
    # Host-side launch assumptions (TA909): what the host code was written for, checked against the build.
    min_blocks_per_sm: int | None = Field(None, ge=1, le=MAX_BLOCKS_ASSUMED,
                                          description="The host code needs at least this many resident blocks per "
                                                      "SM (a persistent or cooperative grid sized for it)")
    expected_blocks_per_sm: int | None = Field(None, ge=1, le=MAX_BLOCKS_ASSUMED,
                                               description="The host code assumes this many resident blocks per SM "
                                                           "(a grid of SMs x N)")

    @field_validator("cluster_dims")
    @classmethod
    def _cluster(cls, v):
        if v is None:
            return None
        dims = via_inputs(inputs.parse_block, v, "cluster_dims")
        if _product(dims) > MAX_CLUSTER_SIZE:
            raise ValueError(f"at most {MAX_CLUSTER_SIZE} blocks per cluster")
        return list(dims)

    def cluster_size(self) -> int | None:
        return None if self.cluster_dims is None else _product(self.cluster_dims)

    def launch_values(self) -> dict:
        """The launch keys this entry sets, as the user wrote them, for LaunchConfig.from_mapping."""
        values = {key: getattr(self, key) for key in LAUNCH_KEYS if getattr(self, key) is not None}
        if self.cluster_dims is not None:
            values["cluster_size"] = self.cluster_size()
        return values


Launch = _launch_model("Launch", _LaunchExtras, LAUNCH_KEYS, "How a kernel is launched: what no compiler output records.")


def _product(dims) -> int:
    total = 1
    for d in dims:
        total *= d
    return total


class _Matched(StrictModel):
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


_KernelFigures = _launch_model("_KernelFigures", Launch, FIGURE_KEYS, "A kernel's figures, without compiler output.",
                               " For a kernel without compiler output.")


class KernelEntry(_KernelFigures, _Matched):
    """Launch settings for the kernels whose name matches `name` (first match
    wins). With `registers` given, a kernel the config describes on its own,
    with no compiler output."""

    name: str = Field(description="Kernel name or glob, matched against the mangled name, the demangled "
                                  "signature with and without its return type, and the bare name "
                                  "(saxpy, 'saxpy<float*', '_Z5saxpy*')")
    spill_bytes: int | None = Field(None, ge=0, le=MAX_LOCAL_BYTES,
                                    description="Deprecated: spill_stores (ptxas 'N bytes spill stores')")
    ignore: list[str] = Field(default_factory=list, description="Finding codes or prefixes not reported for this kernel")
    roofline: RooflineWork | None = Field(None, description="The kernel's work, for 'tuneadvise roofline --kernels'")

    @field_validator("ignore", mode="before")
    @classmethod
    def _codes(cls, v):
        return _rule_codes(v)

    @model_validator(mode="after")
    def _old_spill_key(self):
        if self.spill_bytes is not None:
            if self.spill_stores is not None:
                raise ValueError("spill_bytes is the old name of spill_stores: give one")
            object.__setattr__(self, "spill_stores", self.spill_bytes)  # frozen model, set once while validating
        return self

    def pattern(self) -> str:
        return self.name


class Budget(_Matched):
    """Resource limits for the kernels whose name matches `kernel` (first match wins)."""

    kernel: str = Field("*", description="Kernel name or glob, matched as in [[kernels]]")
    max_registers: int | None = Field(None, ge=0, le=255, description="Registers per thread at most")
    max_shared_mem: Bytes | None = Field(None, description="Static plus dynamic shared memory per block at most")
    max_spill_stores: int | None = Field(None, ge=0, le=MAX_LOCAL_BYTES,
                                         description="Spill stores per thread at most, in bytes (ptxas 'N bytes spill stores')")
    max_spill_loads: int | None = Field(None, ge=0, le=MAX_LOCAL_BYTES,
                                        description="Spill loads per thread at most, in bytes (ptxas 'N bytes spill loads')")
    max_stack_frame: int | None = Field(None, ge=0, le=MAX_LOCAL_BYTES,
                                        description="Stack frame per thread at most, in bytes (ptxas 'N bytes stack frame')")
    max_spill_bytes: int | None = Field(None, ge=0, le=MAX_LOCAL_BYTES,
                                        description="Deprecated: max_spill_stores, which it means")
    no_spills: bool = Field(False, description="Same as max_spill_stores = 0 and max_spill_loads = 0")
    min_occupancy: float | None = Field(None, ge=0, le=1, description="Theoretical occupancy at least (0-1)")

    @field_validator("max_shared_mem")
    @classmethod
    def _smem(cls, v):
        return None if v is None else via_inputs(inputs.parse_size, v, "max_shared_mem")

    @model_validator(mode="after")
    def _old_spill_key(self):
        if self.max_spill_bytes is not None and self.max_spill_stores is not None:
            raise ValueError("max_spill_bytes is the old name of max_spill_stores: give one")
        return self

    def limit(self, key: str) -> int | None:
        """The limit on "max_spill_stores", "max_spill_loads" or "max_stack_frame", with no_spills and
        the old max_spill_bytes applied."""
        if self.no_spills and key in ("max_spill_stores", "max_spill_loads"):
            return 0
        if key == "max_spill_stores" and self.max_spill_stores is None:
            return self.max_spill_bytes
        return getattr(self, key)

    def pattern(self) -> str:
        return self.kernel


def _rule_codes(v):
    from ..rules import registry

    if v is not None and not isinstance(v, (str, list, tuple)):
        raise ValueError(f"expected rule codes such as TA301 (a string or a list of them), got {quoted(v, 40)}")
    items = [v] if isinstance(v, str) else list(v or [])
    codes = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"expected rule codes such as TA301, got {quoted(item, 40)}")
        code = item.strip().upper()
        if not any(known.startswith(code) for known in registry()):
            raise ValueError(f"{quoted(item, 40)} matches no rule code (see 'tuneadvise rules')")
        codes.append(code)
    return codes


class LintConfig(StrictModel):
    """Project settings for `tuneadvise lint`; command-line flags override them."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="tuneadvise lint configuration")

    schema_version: int | None = Field(NO_CONFIG.schema_version, description="1 (optional)")
    arch: list[str] = Field(default_factory=list, description="Architectures to lint (default: those in the compiler output)")
    inputs: list[str] = Field(default_factory=list, description="Compiler output, binaries and sources to lint when none are named")
    select: list[str] = Field(default_factory=list, description="Only these finding codes or prefixes")
    ignore: list[str] = Field(default_factory=list, description="Drop these finding codes or prefixes")
    fail_on: Severity = Field(NO_CONFIG.fail_on, description="Exit 1 on findings at or above this severity")
    min_occupancy: float | None = Field(NO_CONFIG.min_occupancy, ge=0, le=1, description="Every kernel's theoretical occupancy at least")
    min_achieved_occupancy: float | None = Field(
        NO_CONFIG.min_achieved_occupancy, ge=0, le=1,
        description="Every profiled launch's achieved occupancy at least (Nsight Compute exports)")
    block_size: int | str | list[int] | None = Field(NO_CONFIG.block_size, description="Block size for kernels no entry configures")
    sm_count: int | None = Field(NO_CONFIG.sm_count, ge=1, le=MAX_SM_COUNT,
                                 description="SMs on the device, for the grid rules (TA7xx) with a kernel's grid_size "
                                             "(default: the product's, when arch names one such as h100-sxm)")
    kernels: list[KernelEntry] = Field(default_factory=list, description="Per-kernel launch settings, first match wins")
    budgets: list[Budget] = Field(default_factory=list, description="Per-kernel resource budgets, first match wins")

    _sm_counts: dict = PrivateAttr(default_factory=dict)  # sm_XX -> SMs, from the products `arch` names

    @field_validator("arch", mode="before")
    @classmethod
    def _archs(cls, v):
        archs = normalise_archs(v)
        product_sm_counts(v)  # two products of one architecture: refused here, where the error names `arch`
        return archs

    @model_validator(mode="wrap")
    @classmethod
    def _products(cls, data, handler):
        config = handler(data)
        raw = data.get("arch") if isinstance(data, dict) else None
        config._sm_counts = product_sm_counts(raw)
        return config

    def product_sm_counts(self) -> dict[str, int]:
        """sm_XX -> the SM count of the product `arch` names for it."""
        return dict(self._sm_counts)

    @field_validator("select", "ignore", mode="before")
    @classmethod
    def _codes(cls, v):
        return _rule_codes(v)

    @field_validator("inputs")
    @classmethod
    def _paths(cls, v):
        for path in v:
            if "\0" in path:  # no file has such a name, and the OS refuses to look one up
                raise ValueError(f"{quoted(path)} holds a NUL byte, which no path can")
        return v

    @field_validator("block_size")
    @classmethod
    def _block(cls, v):
        return None if v is None else list(via_inputs(inputs.parse_block, v, "block_size"))

    def kernel_index(self, names: tuple[str, ...], arch: str) -> int | None:
        """The index of the first [[kernels]] entry that matches, or None."""
        return next((i for i, k in enumerate(self.kernels) if k.matches(names, arch)), None)

    def budget_index(self, names: tuple[str, ...], arch: str) -> int | None:
        """The index of the first [[budgets]] entry that matches, or None."""
        return next((i for i, b in enumerate(self.budgets) if b.matches(names, arch)), None)


def json_schema() -> dict:
    """The config's JSON Schema. Keys are accepted in snake_case and kebab-case (`fail-on`), as
    the loader accepts them, so every object lists both spellings."""
    schema = LintConfig.model_json_schema()
    for table in (schema, *schema.get("$defs", {}).values()):
        properties = table.get("properties", {})
        for key in [k for k in properties if "_" in k]:
            properties[key.replace("_", "-")] = properties[key]
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://tuneadvise.dev/schema/lint-config-1.json"
    return schema


# -- loading ----------------------------------------------------------------------

def load_config(path: str | Path) -> LintConfig:
    """A config file, or the [tool.tuneadvise] table of a pyproject.toml."""
    path = Path(path)
    try:
        text = document_text(read_bounded(path))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    try:
        raw = _parse(path, text)
    except RecursionError:  # every parser recurses on nesting
        raise ConfigError(f"{path}: nested too deeply to be a config") from None
    if path.name == "pyproject.toml":
        tool = raw.get("tool", {}) if isinstance(raw, dict) else None
        if not isinstance(tool, dict) or not isinstance(tool.get("tuneadvise", {}), dict):
            raise ConfigError(f"{path}: [tool.tuneadvise]: expected a table of settings")
        raw = tool.get("tuneadvise", {})
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a table of settings at the top level")
    if _holds_surrogates(raw):
        raise ConfigError(f"{path}: not valid text: a string holds an unpaired surrogate escape (such as \\ud800)")
    try:
        return LintConfig.model_validate(raw)
    except ValidationError as err:
        raise ConfigError(_describe(path, text, err)) from None


def _holds_surrogates(raw) -> bool:
    """Whether any key or string of the parsed document is not encodable text (JSON's "\\ud800"):
    no message or report could repeat it."""
    stack = [raw]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack += item.keys()
            stack += item.values()
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, str) and not item.isascii():
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
    return False


def _parse(path: Path, text: str) -> dict:
    suffix = path.suffix.lower()
    if suffix == ".toml":
        toml = tomllib()
        try:
            return toml.loads(text)
        except toml.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        except ValueError as exc:  # a value the parser accepts but Python will not read (an integer of 4,300+ digits)
            raise ConfigError(f"{path}: not valid TOML: {_first_clause(exc)}") from None
    if suffix == ".json":
        try:
            return loads_json(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
        except ValueError as exc:  # an integer of 4,300+ digits, a key given twice
            raise ConfigError(f"{path}: not valid JSON: {_first_clause(exc)}") from None
    return _parse_yaml(path, text)


# Real configs are a few kilobytes; PyYAML builds a document at some 100 KB/s (libyaml parses, the
# constructors are Python), so a YAML config of megabytes would take many seconds to refuse.
MAX_YAML_CHARACTERS = 128 << 10


def _parse_yaml(path: Path, text: str):
    try:
        import yaml
    except ImportError:
        raise ConfigError(f"{path}: YAML configs need PyYAML: pip install 'tuneadvise[yaml]'") from None
    if len(text) > MAX_YAML_CHARACTERS:
        raise ConfigError(f"{path}: a YAML config of more than {MAX_YAML_CHARACTERS >> 10} KiB, more than a config "
                          "needs (TOML or JSON are read faster)")
    loader = _loader(yaml)
    try:
        _refuse_aliases_and_tags(yaml, text, loader)
        return yaml.load(text, Loader=loader) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = str(getattr(exc, "problem", None) or exc)
        raise ConfigError(f"{path}{where}: not valid YAML: {clip(problem, 200)}") from None


def _first_clause(exc: Exception) -> str:
    """An exception's message up to its first ';' or line break, at most 100 characters: never the input."""
    text = str(exc).split(";")[0].splitlines()[0] if str(exc) else type(exc).__name__
    return clip(text, 100)


def _loader(yaml):
    """PyYAML's safe loader (libyaml's parser where installed) that names the line of a plain value
    its constructor refuses (`2001-13-45`)."""

    class PlainYaml(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        def construct_object(self, node, deep=False):
            try:
                return super().construct_object(node, deep)
            except (ValueError, TypeError, OverflowError, ArithmeticError, LookupError, AttributeError) as exc:
                raise yaml.constructor.ConstructorError(
                    None, None, f"a value cannot be read: {_first_clause(exc)}", node.start_mark) from None

        def construct_mapping(self, node, deep=False):
            """A mapping that names a key twice is refused, as TOML refuses it (PyYAML keeps the last)."""
            seen = set()
            for key_node, _ in getattr(node, "value", ()):
                key = getattr(key_node, "value", None)
                if isinstance(key, str) and key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, twice(key), key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep)

    return PlainYaml


def _refuse_aliases_and_tags(yaml, text: str, loader) -> None:
    """A config holds neither aliases nor explicit tags. `*name` repeats a node by reference, and
    a few hundred bytes of nested aliases expand to gigabytes; a tag (`!!int`, `!!timestamp`) asks
    a constructor to read a value it may not be able to read. Found in the parser's events, before
    any node is built."""
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed in a config",
                                              event.start_mark)
        if getattr(event, "tag", None) is not None:  # only written tags (`!`, `!!int`, `!x`) set one
            raise yaml.composer.ComposerError(None, None, "tags (!!type) are not allowed in a config",
                                              event.start_mark)


def _describe(path: Path, text: str, err: ValidationError) -> str:
    first = err.errors()[0]
    loc = [p if isinstance(p, (str, int)) else quoted(p, 40) for p in first["loc"]]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{quoted(p, 40)[1:-1]}" for p in loc).lstrip(".") or "(document)"
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
