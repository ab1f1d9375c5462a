"""TA8xx: CUDA source the tuning guides warn about, one line at a time
(`source_scan.scan_source` blanks comments and literals, adds file and line,
and applies suppressions). Patterns have no nested repetition, so each line is
read in linear time.

A check flags what breaks or slows on any of the line's targets, names those
targets in `details["targets"]`, and gives the 1-based `column` and
`end_column` (one past the end) of the code it means; `replacement`, where
given, is text that replaces those columns (a suggested fix)."""

from __future__ import annotations

import re

from .. import SourceLine, rule
from ..warp_uniform import is_uniform

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
    provide the legacy forms for 7.0+ targets: NVIDIA's compiler reports __shfl* as undefined identifiers and
    ptxas rejects vote without .sync (__any, __all, __ballot) for every 7.0+ target of a build, so a file built
    for sm_60 and sm_90 fails on sm_90. An error: the build breaks. The suggested fix passes the full mask
    0xffffffff only where every lane of the warp provably reaches the call: a kernel's own body, outside every
    branch, loop and switch, before any return (a safe fix, for blocks of whole warps). Elsewhere (inside `if
    (threadIdx.x < 16)`, a loop, a device function) a full mask names lanes that may be absent, which is
    undefined from 7.0 on and can hang the warp; the fix there passes __activemask(), the lanes active at the
    call, as the legacy form did, and is unsafe: __activemask() does not make the lanes that must exchange
    converge, so name those lanes where the code knows them.""",
    trigger={"target": "sm_70", "source": "float v = __shfl_down(x, 16);"},
    clean={"target": "sm_70", "source": "float v = __shfl_down_sync(0xffffffff, x, 16);"},
    fix_title="Replace with '{replacement}' (a full-warp lane mask)",
)
def legacy_warp_intrinsic(line: SourceLine, params: dict):
    targets = line.targets_with("independent_thread_scheduling")
    if targets:
        for match in _LEGACY.finditer(line.code):
            name = match.group(1)
            uniform = is_uniform(line.uniform, match.start())
            yield (f"{name} does not compile for {', '.join(targets)} (no lock-step warps from 7.0); "
                   f"use {name}_sync with a lane mask",
                   {**_columns(match), "targets": targets, **_lane_mask_fix(name, uniform)})


def _lane_mask_fix(name: str, uniform: bool) -> dict:
    """TA801's fix: its replacement text, what it does, and whether applying it can change behaviour
    (`fix_applicability`, safe or unsafe, as ruff marks its fixes)."""
    if uniform:
        replacement = f"{name}_sync(0xffffffff, "
        return {"replacement": replacement, "fix_applicability": "safe",
                "fix": f"Replace with '{replacement}' (a full-warp lane mask: every lane of the warp reaches "
                       "this call, outside any branch or loop of the kernel; assumes blocks of whole warps)"}
    replacement = f"{name}_sync(__activemask(), "
    return {"replacement": replacement, "fix_applicability": "unsafe",
            "fix": f"Replace with '{replacement}' (the lanes active here, as the legacy call used; unsafe: the "
                   "call is in a branch, a loop or a device function, where a full mask 0xffffffff would name "
                   "absent lanes and can hang the warp, and __activemask() does not make the lanes that must "
                   "exchange converge: name them if the code knows them)"}


def _columns(match: re.Match) -> dict:
    return {"column": match.start() + 1, "end_column": match.end() + 1}


def _volatile_pointer_or_shared(code: str) -> re.Match | None:
    """The first `volatile` declaring a pointer or __shared__ memory on this line: per statement
    (split at ; and =), so a line of many `volatile`s is read once."""
    if "volatile" not in code:
        return None
    position = 0
    for statement in _STATEMENT_END.split(code):
        found = _VOLATILE.search(code, position, position + len(statement))
        if found and ("*" in statement[found.end() - position:] or _SHARED.search(statement)):
            return found
        position += len(statement) + 1
    return None


@rule(
    code="TA802", name="implicit-warp-synchronous", severity="warning", source="volta-guide#4.1.2",
    summary="Warp-synchronous code through volatile shared memory without __syncwarp",
    explanation="""Code that exchanges data between the threads of a warp through shared or global memory and
    relies on implicit lock-step (the classic volatile last-warp reduction) is invalid under Independent Thread
    Scheduling (7.0+). Insert __syncwarp() between the steps, or use __shfl_*_sync. compute-sanitizer's racecheck
    and synccheck locate such races. A warning, not an error: the pattern is recognized by its volatile
    declaration, and a file may synchronize in a way a line-by-line reading does not see.""",
    trigger={"target": "sm_80", "source": "volatile float* v = sdata; v[tid] += v[tid + 16];"},
    clean={"target": "sm_80", "source": "volatile float* v = sdata; v[tid] += v[tid + 16]; __syncwarp();"},
)
def implicit_warp_synchronous(line: SourceLine, params: dict):
    targets = line.targets_with("independent_thread_scheduling")
    found = targets and not line.file_has_syncwarp and _volatile_pointer_or_shared(line.code)
    if found:
        yield (f"volatile warp-synchronous access without __syncwarp() in this file races on "
               f"{', '.join(targets)}; add __syncwarp() between steps or use __shfl_*_sync"),\
            {**_columns(found), "targets": targets}


@rule(
    code="TA803", name="mul24", severity="warning", source="fermi-guide#32-Bit Integer Multiplication",
    summary="__mul24 / __umul24 is slower than a plain multiply from 2.0 on",
    explanation="""Compute capability 2.0 and later multiply 32-bit integers natively but not 24-bit ones:
    __[u]mul24 is emulated with several instructions there. Use the plain * operator. A warning: it costs
    instructions, never correctness.""",
    trigger={"target": "sm_20", "source": "int i = __mul24(blockIdx.x, blockDim.x) + threadIdx.x;"},
    clean={"target": "sm_20", "source": "int i = blockIdx.x * blockDim.x + threadIdx.x;"},
)
def mul24(line: SourceLine, params: dict):
    targets = line.targets_with("native_32bit_integer_multiply")
    if targets:
        for match in _MUL24.finditer(line.code):
            yield (f"{match.group(1)} is emulated on {', '.join(targets)} (from 2.0 on); use *",
                   {**_columns(match), "targets": targets})
