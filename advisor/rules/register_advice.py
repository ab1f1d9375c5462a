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

# LaunchConfig.register_control of a library kernel (cuBLAS, cuDNN, ...): its vendor set its
# registers and no build of the user's can change them, so no cap is proposed.
LIBRARY = "library"


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
    if kernel.register_control == LIBRARY:
        return None
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


class BudgetChange(NamedTuple):
    """The change that caps a kernel at exactly a register budget, and the launch-bounds alternative
    with the cap ptxas derives from it (which may lie under the budget)."""

    exact: CapChange  # __maxnreg__(budget) (or the kernel's own control), with the flag where it applies
    alternative: CapChange | None  # __launch_bounds__(threads, minBlocks); None for a kernel capped otherwise
    has_bounds: bool  # the kernel is known to have __launch_bounds__

    def text(self) -> str:
        exact, budget = self.exact, self.exact.registers
        if exact.via == "triton":
            return f"cap at exactly {budget} with {exact.bounds}"
        if exact.via == "__maxnreg__" and self.alternative is None:
            return f"cap at exactly {budget} with {exact.text()}"
        if self.has_bounds:
            said = (f"cap at exactly {budget} with __maxnreg__({budget}) in place of its __launch_bounds__ "
                    f"({MAXNREG_SINCE}; nvcc refuses both on one kernel, and ignores -maxrregcount beside either)")
        else:
            said = (f"cap at exactly {budget} with __maxnreg__({budget}) ({MAXNREG_SINCE}), or "
                    f"-maxrregcount={budget} for a kernel without __launch_bounds__")
        return said + self._alternative()

    def _alternative(self) -> str:
        other = self.alternative
        if other is None:
            return "; no __launch_bounds__ reach that cap"
        if other.registers == self.exact.registers:
            return f"; {other.bounds} gives the same cap"
        under = self.exact.registers - other.registers
        return (f"; {other.bounds} instead caps at {other.registers}, {under} under the budget, which may spill "
                "where the budget would not (tuneadvise frontier compiles both caps)")

    def to_dict(self) -> dict:
        return {**self.exact.to_dict(),
                "alternative": self.alternative.to_dict() if self.alternative is not None else None}


# __maxnreg__ arrived in CUDA 12.4 (the CUDA C++ Programming Guide's maximum-number-of-registers-per-thread).
MAXNREG_SINCE = "CUDA 12.4 and later"


def budget_change(arch, kernel, budget: int) -> BudgetChange:
    """How to cap `kernel` at exactly `budget` registers: __maxnreg__(budget) (or the kernel's own
    control), -maxrregcount=budget where it may have no bounds; beside it the __launch_bounds__ whose
    cap is the largest at or below the budget, which is what the min-blocks route costs."""
    if kernel.register_control == "triton":
        return BudgetChange(CapChange("triton", None, None, budget, None), None, False)
    has_bounds = kernel.max_threads_per_block is not None
    flag = None if has_bounds or kernel.register_control == "__maxnreg__" else budget
    exact = CapChange("__maxnreg__", None, None, budget, flag)
    if kernel.register_control == "__maxnreg__":
        return BudgetChange(exact, None, False)
    return BudgetChange(exact, cap_change(arch, kernel, budget), has_bounds)
