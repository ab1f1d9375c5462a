"""A kernel's work as `tuneadvise roofline --kernels FILE` reads it: the `roofline` table of a
lint config's [[kernels]] entry (advisor/lint/config.py holds the entry, advisor/roofline.py
places the work under the roofs)."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from . import inputs
from .strict_model import StrictModel, via_inputs

Quantity = float | str  # 2.1e12 or "2.1T"; normalised to float by the validator


class RooflineWork(StrictModel):
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
        return None if v is None else via_inputs(inputs.parse_quantity, v, info.field_name)

    @model_validator(mode="after")
    def _work(self):
        if self.intensity is None and (self.flops is None or self.bytes is None):
            raise ValueError("give intensity, or both flops and bytes")
        if self.intensity is not None and (self.flops is not None or self.bytes is not None):
            raise ValueError("give intensity or flops and bytes, not both")
        return self

    def flop_per_byte(self) -> float:
        return self.intensity if self.intensity is not None else self.flops / self.bytes
