"""TA8xx: CUDA source the tuning guides warn about, one line at a time
(`source_scan.scan_source` blanks comments and literals, adds file and line,
and applies suppressions). Patterns have no nested repetition, so each line is
read in linear time."""

from __future__ import annotations

import re

from .. import SourceLine, rule

_LEGACY = re.compile(r"\b(__shfl|__shfl_up|__shfl_down|__shfl_xor|__any|__all|__ballot)\s*\(")
_VOLATILE = re.compile(r"\bvolatile\b")
_SHARED = re.compile(r"\b__shared__\b")
_STATEMENT_END = re.compile(r"[;=]")
_MUL24 = re.compile(r"\b(__u?mul24)\s*\(")


@rule(
    code="TA801", name="legacy-warp-intrinsic", severity="error", source="volta-guide#4.1.2",
    summary="Warp intrinsic without _sync on a target with Independent Thread Scheduling",
    explanation="""From 7.0 on threads of a warp are scheduled independently. __shfl, __shfl_up, __shfl_down,
    __shfl_xor, __any, __all and __ballot assume lock-step execution and can corrupt data; use the *_sync variants
    with an explicit lane mask (for example __shfl_down_sync(0xffffffff, v, 16)). CUDA 9 and later no longer
    provide the legacy forms for 7.0+ targets.""",
    trigger={"target": "sm_70", "source": "float v = __shfl_down(x, 16);"},
    clean={"target": "sm_70", "source": "float v = __shfl_down_sync(0xffffffff, x, 16);"},
)
def legacy_warp_intrinsic(line: SourceLine, params: dict):
    if line.target.independent_thread_scheduling:
        for match in _LEGACY.finditer(line.code):
            yield f"{match.group(1)} assumes lock-step warps; use {match.group(1)}_sync with a lane mask", {}


def _volatile_pointer_or_shared(code: str) -> bool:
    """A `volatile` declaration of a pointer or of __shared__ memory on this line: per statement
    (split at ; and =), so a line of many `volatile`s is read once."""
    if "volatile" not in code:
        return False
    for statement in _STATEMENT_END.split(code):
        found = _VOLATILE.search(statement)
        if found and ("*" in statement[found.end():] or _SHARED.search(statement)):
            return True
    return False


@rule(
    code="TA802", name="implicit-warp-synchronous", severity="warning", source="volta-guide#4.1.2",
    summary="Warp-synchronous code through volatile shared memory without __syncwarp",
    explanation="""Code that exchanges data between the threads of a warp through shared or global memory and
    relies on implicit lock-step (the classic volatile last-warp reduction) is invalid under Independent Thread
    Scheduling (7.0+). Insert __syncwarp() between the steps, or use __shfl_*_sync. compute-sanitizer's racecheck
    and synccheck locate such races.""",
    trigger={"target": "sm_80", "source": "volatile float* v = sdata; v[tid] += v[tid + 16];"},
    clean={"target": "sm_80", "source": "volatile float* v = sdata; v[tid] += v[tid + 16]; __syncwarp();"},
)
def implicit_warp_synchronous(line: SourceLine, params: dict):
    if line.target.independent_thread_scheduling and not line.file_has_syncwarp and _volatile_pointer_or_shared(line.code):
        yield ("volatile warp-synchronous access without __syncwarp() in this file; add __syncwarp() between "
               "steps or use __shfl_*_sync"), {}


@rule(
    code="TA803", name="mul24", severity="warning", source="fermi-guide#32-Bit Integer Multiplication",
    summary="__mul24 / __umul24 is slower than a plain multiply from 2.0 on",
    explanation="""Compute capability 2.0 and later multiply 32-bit integers natively but not 24-bit ones:
    __[u]mul24 is emulated with several instructions there. Use the plain * operator.""",
    trigger={"target": "sm_20", "source": "int i = __mul24(blockIdx.x, blockDim.x) + threadIdx.x;"},
    clean={"target": "sm_20", "source": "int i = blockIdx.x * blockDim.x + threadIdx.x;"},
)
def mul24(line: SourceLine, params: dict):
    if line.target.emulates_mul24:
        for match in _MUL24.finditer(line.code):
            yield f"{match.group(1)} is emulated from 2.0 on; use *", {}
