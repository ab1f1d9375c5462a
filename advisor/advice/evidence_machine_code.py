"""Evidence from the machine code (the instruction figures of `readers/sass.py`): code written
for low occupancy.

- Tensor-core instructions (HMMA, IMMA, HGMMA, UTC*MMA and the other MMA forms) mean the kernel
  keeps its operands in registers on purpose: NVIDIA's own GEMM and attention kernels run at
  12.5-25% occupancy by design (the Ampere/Hopper tuning guides' tensor-core sections; the
  FlashAttention blog's 13% achieved occupancy).
- A register-tiled inner loop (at least FMA_PER_LOAD floating-point operations per load in its
  innermost loop, as a blocked GEMM's outer product has) hides latency with instruction-level
  parallelism instead of warps (Volkov, "Better performance at lower occupancy", GTC 2010; the
  Volta and Turing tuning guides: 4 warps per SM hide FMA latency with 4-way ILP). A register cap
  there takes away the registers the tiling lives in.

Either says "no_gain": no register cap is called a likely gain for such code."""

from __future__ import annotations

from .evidence_launch import barrier_relief
from .verdict import Evidence

FMA_PER_LOAD = 4.0  # an 8x8 register tile: 64 FMAs per 16 loads
MIN_LOOP_MATH = 16  # fewer floating-point operations than this in a loop body is no tile


def machine_code(instructions: dict | None, hot_loop: dict | None = None) -> Evidence | None:
    """`instructions`: the kernel's instruction counts by class (sass.instructions);
    `hot_loop`: {"math", "loads", "instructions"} of its busiest innermost loop, where known."""
    if not instructions:
        return None
    tensor = instructions.get("tensor", 0)
    if tensor:
        return Evidence("machine_code", {"tensor_instructions": tensor}, "no_gain",
                        f"{tensor} tensor-core instructions: low occupancy by design")
    if hot_loop and hot_loop.get("math", 0) >= MIN_LOOP_MATH:
        per_load = hot_loop["math"] / max(1, hot_loop.get("loads", 0))
        value = {"loop_math": hot_loop["math"], "loop_loads": hot_loop.get("loads", 0),
                 "math_per_load": round(per_load, 2)}
        if per_load >= FMA_PER_LOAD:
            return Evidence("machine_code", value, "no_gain",
                            f"its inner loop does {per_load:.1f} floating-point operations per load: its "
                            "instruction-level parallelism, not more warps, hides latency")
        return Evidence("machine_code", value, "neutral", f"its inner loop does {per_load:.1f} operations per load")
    return Evidence("machine_code", {"tensor_instructions": 0}, "neutral", "no tensor-core or register-tiled code")


def of_finding(details: dict, sass) -> list[Evidence]:
    """What a kernel's machine code (readers/sass.py's KernelSass) says about the change a finding
    proposes: the code's own gate, and the barrier gate where the finding's details name the
    resident blocks per SM the change goes between (proposed_blocks)."""
    code = machine_code(sass.instructions, sass.hot_loop)
    if code is None:
        return []
    blocks = proposed_blocks(details)
    relief = barrier_relief(*blocks, sass.instructions.get("barriers", 0)) if blocks else None
    return [code] + ([relief] if relief is not None else [])


def proposed_blocks(details: dict) -> tuple[int, int] | None:
    """(today's resident blocks per SM, the change's) as an occupancy-step finding states them:
    `blocks_per_sm`, and TA301's register step its `register_change` caps at (the first
    "registers" entry of `next_steps`), else its `block_change`, or TA302's `next_step`; None for
    a change of no step (a pin, a budget)."""
    before = details.get("blocks_per_sm")
    if not isinstance(before, int):
        return None
    if "register_change" in details:
        step = next((s for s in details.get("next_steps", ()) if s.get("resource") == "registers"), None)
    else:
        step = details.get("block_change") or details.get("next_step")
    return (before, step["blocks_per_sm"]) if step else None
