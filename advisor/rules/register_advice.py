"""How to put a register cap on a kernel so that the compiler obeys it.

ptxas ignores -maxrregcount for a kernel with `__launch_bounds__` or `__maxnreg__`:
the bounds set its cap, the registers with which minBlocks blocks of maxThreads
threads are resident, and `__maxnreg__(N)` sets N (nvcc refuses both on one kernel).
So a kernel with `__maxnreg__` is capped by changing N, a Triton kernel through
triton.Config's `maxnreg`, and one known to have bounds by
changing their second argument, to the fewest blocks whose cap is at or below the wanted count; a
kernel without them by adding `__launch_bounds__(block, N)` or, where none are in the
source, -maxrregcount. Whether the kernel has bounds is known from its LaunchConfig's
`max_threads_per_block` (the source's or the binary's); a plain ptxas log does not say,
so the flag is then offered only for a kernel without launch bounds.

A cap is a candidate to measure, not a promise of speed: it buys occupancy and may cost
spills, and more resident warps can run slower (cache thrashing, lost instruction-level
parallelism).
"""

# Annotations here are evaluated, not text (no `from __future__ import annotations`): typing.NamedTuple
# compiles every annotation written as text when its class is made, on every command's start-up.
from typing import NamedTuple

from ..engine.whatif import bounds_register_cap


class CapChange(NamedTuple):
    """The source or build change that caps a kernel at `registers` per thread or fewer."""

    via: str  # "launch_bounds", "__maxnreg__" or "triton" (LaunchConfig.register_control)
    threads: int | None  # __launch_bounds__'s first argument (via launch_bounds)
    min_blocks: int | None  # its second
    registers: int  # the cap: ptxas's from the bounds, or the one written
    maxrregcount: int | None  # the flag, where the kernel may be without either attribute; else None

    @property
    def bounds(self) -> str:
        if self.via == "__maxnreg__":
            return f"__maxnreg__({self.registers})"
        if self.via == "triton":
            return f"maxnreg={self.registers} in its triton.Config"
        return f"__launch_bounds__({self.threads}, {self.min_blocks})"

    def text(self) -> str:
        if self.via == "__maxnreg__":
            return f"{self.bounds}; -maxrregcount is ignored for a kernel with __maxnreg__"
        if self.via == "triton":
            return self.bounds
        if self.maxrregcount is None:
            return f"{self.bounds}; -maxrregcount is ignored for a kernel with __launch_bounds__"
        return f"{self.bounds}, or -maxrregcount={self.maxrregcount} for a kernel without __launch_bounds__"

    def to_dict(self) -> dict:
        bounds = [self.threads, self.min_blocks] if self.via == "launch_bounds" else None
        return {"via": self.via, "launch_bounds": bounds, "maxnreg": None if bounds else self.registers,
                "register_cap": self.registers, "maxrregcount": self.maxrregcount}


def cap_change(arch, kernel, registers: int, blocks: int | None = None) -> CapChange | None:
    """The bounds whose cap is the largest at or below `registers`, at the kernel's own bounds'
    maxThreads where it has them, else at its block size: minBlocks `blocks` (the resident
    blocks the cap is for) where the bounds count the launch's block and it gets there, else the
    fewest that do. None when no minBlocks the architecture allows gets there."""
    if kernel.register_control is not None:
        return CapChange(kernel.register_control, None, None, registers, None)
    threads = kernel.max_threads_per_block or kernel.block_size
    flag = None if kernel.max_threads_per_block is not None else registers
    candidates = range(1, arch.max_blocks_per_sm + 1)
    if blocks is not None and threads == kernel.block_size:
        candidates = [blocks, *candidates]  # the figure the finding names, where it is exact
    for n in candidates:
        cap = bounds_register_cap(arch, threads, n)
        if 0 < cap <= registers:
            return CapChange("launch_bounds", threads, n, min(cap, arch.max_registers_per_thread), flag)
        if cap == 0:
            return None
    return None


def pin_change(arch, kernel, highest: int, blocks: int | None = None) -> CapChange | None:
    """The bounds that keep the count at `highest` or below without forcing it under the kernel's
    present count: the cap that pins a kernel below an occupancy cliff. None when no bounds do."""
    change = cap_change(arch, kernel, highest, blocks)
    if change is None or change.registers < kernel.registers:
        return None
    return change
