"""The base of the models that validate users' files (the lint config and the roofline's
kernel work): frozen, unknown keys refused, kebab-case keys taken as snake_case; and a
value checked by one of advisor/inputs' parsers inside a pydantic validator."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, model_validator

from . import inputs


def normalise_keys(data):
    """Kebab-case keys as snake_case; two spellings of one key (block-size and block_size) are
    refused, never one of them dropped."""
    if not isinstance(data, dict):
        return data
    normal = {}
    for key, value in data.items():
        name = key.replace("-", "_") if isinstance(key, str) else key
        if name in normal:
            raise ValueError(f"{name} is given twice (as {name} and {name.replace('_', '-')})")
        normal[name] = value
    return normal


def via_inputs(parse, value, field: str):
    """`parse(value, field)`, its InputError a ValueError, which pydantic reports at the field."""
    try:
        return parse(value, field)
    except inputs.InputError as exc:
        raise ValueError(exc.detail) from None


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _kebab(cls, data):
        return normalise_keys(data)
